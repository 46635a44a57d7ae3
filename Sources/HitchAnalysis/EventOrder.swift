import HitchTrace

/// The analyzer's one ordering contract (docs/METRICS.md "File order"): how far a trace, read in
/// file order, is known to be complete. Events are not reordered; the passes take them as they come
/// and hold what they must.
///
/// The recorder writes each thread's buffer when it fills, and the committed part of every buffer
/// each flush interval, so an event reaches the file at most a flush interval (plus the write) after
/// it was recorded (docs/FORMAT.md "Flushing"). An event is recorded when it is over: its *emission
/// time* is the end of an event that spans time, the timestamp of any other. With the bound B, once
/// an event emitted at T has been read, every event emitted before T − B has been read too:
/// `orderedThroughNs`, the watermark.
///
/// - B is twice the flush interval the trace states (`MetadataKey.flushIntervalMs`): the interval,
///   and as much again for the write and for samples and context switches drained after the fact
///   on a busy machine. A trace that does not state one (other tools' traces, hand-built ones,
///   recordings older than the key) has no bound: the watermark stays `.min`, nothing is counted, and every
///   holder keeps what it holds until its own limit.
/// - An event emitted before the watermark when it is read is *beyond the bound*: it is still handed
///   to every pass, and counted (`beyondBoundEvents`; the analysis warns when any were). What it
///   would have joined may already be released.
/// - What the bound cannot release is held up to the one fallback, `holdLimit` items per holder:
///   - in a trace that states no bound;
///   - in holders keyed on start times (attribution's open hitch windows, stage cost's finished
///     intervals that a later parent may enclose). An interval is written at its end, so its start
///     is older than its emission by its length, and nothing bounds that length:
///     `Trace.interval(from:to:)` takes work measured elsewhere, from any start;
///   - in frame assembly, which reads a frame's finality from later frames (its present may come
///     any time after its begin, or never), and holds a frame's events that come before its begin.
///   Past the limit the oldest item is let go. Each holder (`BoundedHolder`) counts what it let go
///   that something read later would have joined (`countLetGo`), and the analysis warns when any did.
struct EventOrder: Sendable {
    /// The bound in nanoseconds (`.max`: the trace states none).
    private(set) var boundNs: Int64 = .max
    /// The latest emission time read in this run (`.min` before the first event).
    private(set) var latestNs: Int64 = .min
    /// The latest emission less the bound, saturated (with no bound, below every clamped time).
    private var watermarkNs: Int64 = .min
    /// Events read after the watermark had passed their emission time.
    private(set) var beyondBoundEvents: UInt64 = 0
    /// What holders let go at `holdLimit` before what would have joined it arrived, by kind.
    private(set) var letGo: [(kind: LetGo, count: Int)] = []

    /// What a holder lets go at `holdLimit`, each counted where it can tell.
    enum LetGo: Sendable {
        case frameEventsAfterJudging, beginsAfterFrameEventsLetGo, instancesAfterWindowClosed, parentsOfLetGoIntervals

        /// A plural noun phrase that reads after the count.
        var phrase: String {
            switch self {
            case .frameEventsAfterJudging: "frame events came after their frame was judged"
            case .beginsAfterFrameEventsLetGo: "frames began after their other events were let go"
            case .instancesAfterWindowClosed: "instances arrived after the hitch windows they overlap had closed"
            case .parentsOfLetGoIntervals: "intervals enclosed intervals let go before them (their self time counts those)"
            }
        }
    }

    /// The one fallback: the most items a holder keeps for what the bound cannot release.
    static let holdLimit = 1024

    /// Every event emitted before this has been read, but those beyond the bound (`.min`: no bound).
    var orderedThroughNs: Int64 { boundNs == .max ? .min : watermarkNs }

    /// The longest flush interval taken as a bound (an hour); a longer stated one leaves the trace unbounded.
    static let longestFlushIntervalMs: Int64 = 3_600_000

    /// The bound from the trace's `flushIntervalMs` metadata text; text that is not a whole number of
    /// milliseconds in 1...`longestFlushIntervalMs` leaves the trace unbounded.
    mutating func takeFlushInterval(milliseconds text: String) {
        guard let ms = Int64(text), ms > 0, ms <= Self.longestFlushIntervalMs else { return }
        boundNs = 2 * ms * 1_000_000
        watermarkNs = latestNs.subtractingSaturated(boundNs)
    }

    /// One event, by its emission time, clamped (`clampedTime`: within ±`analyzerTimeLimitNs`, so
    /// with no bound nothing is below the watermark). A compare and a max, without a branch: the
    /// latest emission moves on about one event in ten, unpredictably.
    @inline(__always)
    mutating func admit(emittedAtNs t: Int64) {
        beyondBoundEvents &+= t < watermarkNs ? 1 : 0
        latestNs = max(latestNs, t)
        watermarkNs = latestNs.subtractingSaturated(boundNs)
    }

    /// Counts items a holder let go at `holdLimit` that an event read later would have joined.
    mutating func countLetGo(_ count: Int, _ kind: LetGo) {
        guard count > 0 else { return }
        if let i = letGo.firstIndex(where: { $0.kind == kind }) { letGo[i].count += count } else { letGo.append((kind, count)) }
    }

    /// The analysis warnings for a run whose events broke the bound, or whose holders let go too soon.
    var warnings: [String] {
        var result: [String] = []
        if beyondBoundEvents > 0 {
            result.append("\(beyondBoundEvents) events reached the file later than the recorder's flush interval allows "
                + "(\(boundNs / 1_000_000) ms after later ones): figures that join them with earlier events may miss them")
        }
        if !letGo.isEmpty {
            result.append("past the \(Self.holdLimit) items the analyzer holds for late events: "
                + letGo.map { "\($0.count) \($0.kind.phrase)" }.joined(separator: ", ") + "; figures that join them miss what came later")
        }
        return result
    }
}
