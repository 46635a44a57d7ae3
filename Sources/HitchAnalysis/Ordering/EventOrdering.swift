import HitchTrace

/// The analyzer's ordering stage, between the reader and the passes (docs/METRICS.md "File
/// order"): the resolved events of a run's threads, merged into time order (`TimeOrderedMerge`).
///
/// The streams the file keeps in order are a thread's events and, apart from them, its context
/// switches. The recorder writes each thread's buffer, and drains its switches, at least every flush
/// interval, and writes an interval at its end stamped with its start, so an event reaches the file
/// at most the flush interval plus the longest open interval after the events of its time on other
/// streams. That is the bound: an event is handed to the passes once an event that much later has been read.
/// Beyond it (a file re-interleaved by hand, a recorder whose writer fell behind) an event is
/// handed over late, as soon as it is read, and counted (`lateEvents`); past `capacity` held
/// events the oldest is handed over early (`releasedEarly`), so memory stays bounded. Passes
/// take either as late arrivals, as they take any interleaving of the threads (their results
/// do not depend on it), so neither changes a figure.
struct EventOrdering: Sendable {
    struct Held: Sendable {
        var event: TraceEvent
        var resolved: PassEvent
    }
    /// Events held at most (about 100 bytes each).
    static let capacity = 1 << 15
    /// Threads beyond this dense id share one source (their events keep their file order among them).
    static let threads = 4096
    static let flushIntervalNs = Int64(TraceRecorder.Configuration.defaultFlushIntervalMs) * 1_000_000

    private var merge = TimeOrderedMerge<Held>(boundNs: flushIntervalNs, capacity: capacity)
    /// The longest time from a record's stamp to the end of what it spans, this run.
    private var longestSpanNs: Int64 = 0
    private(set) var lateEvents = 0
    private(set) var releasedEarly = 0
    private(set) var peakHeld = 0

    var boundNs: Int64 { merge.boundNs }

    /// A run starts with the flush interval as its bound; spans read widen it.
    mutating func beginRun() {
        longestSpanNs = 0
        merge.reset(boundNs: Self.flushIntervalNs)
    }

    /// Holds a resolved event stamped `recordNs` (the record's own time, clamped).
    @inline(__always)
    mutating func push(_ event: TraceEvent, _ resolved: PassEvent, recordNs: Int64) {
        // Clamped times: the difference fits.
        let span = resolved.endNs - recordNs
        if span > longestSpanNs { widen(to: span) }
        merge.push(Held(event: event, resolved: resolved), source: Self.source(of: event), timeNs: recordNs)
    }

    /// A stream the file keeps in order: a thread's events, and apart from them its context
    /// switches, which the writer drains on its own (docs/FORMAT.md "Thread states").
    @inline(__always)
    private static func source(of event: TraceEvent) -> Int {
        let thread = min(Int(event.thread.rawValue), threads - 1)
        if case .schedSwitch = event.payload { return 2 * thread + 1 }
        return 2 * thread
    }

    @inline(never)
    private mutating func widen(to span: Int64) {
        longestSpanNs = span
        merge.boundNs = Self.flushIntervalNs.addingSaturated(span)
    }

    /// The next event for the passes, if due (`draining`: the run ended, every held one is).
    @inline(__always)
    mutating func next(draining: Bool = false) -> Held? {
        guard let held = merge.popReady(draining: draining) else {
            if draining { endRun() }
            return nil
        }
        return held
    }

    private mutating func endRun() {
        lateEvents += merge.lateCount
        releasedEarly += merge.releasedEarlyCount
        peakHeld = max(peakHeld, merge.peakHeld)
        merge.reset(boundNs: Self.flushIntervalNs)
    }
}
