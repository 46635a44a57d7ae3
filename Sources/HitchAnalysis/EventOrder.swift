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
/// - A holder keyed on start times must add the longest interval it may still see: an interval is
///   written at its end, so its start is that much older than its emission, and that length is known
///   only when it ends. Such holders (attribution's open windows, stage cost's orphans) keep their
///   own limits, and so does frame assembly (a frame's present may come any time after its begin,
///   so its finality is read from later frames); the watermark releases what depends on emission
///   order alone (`FramePass`'s wait for context switches).
struct EventOrder: Sendable {
    /// The bound in nanoseconds (`.max`: the trace states none).
    private(set) var boundNs: Int64 = .max
    /// The latest emission time read in this run (`.min` before the first event).
    private(set) var latestNs: Int64 = .min
    /// The latest emission less the bound, saturated (with no bound, below every clamped time).
    private var watermarkNs: Int64 = .min
    /// Events read after the watermark had passed their emission time.
    private(set) var beyondBoundEvents: UInt64 = 0

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

    /// The analysis warning for a run whose events broke the bound, if any did.
    var warning: String? {
        guard beyondBoundEvents > 0 else { return nil }
        return "\(beyondBoundEvents) events reached the file later than the recorder's flush interval allows "
            + "(\(boundNs / 1_000_000) ms after later ones): figures that join them with earlier events may miss them"
    }
}
