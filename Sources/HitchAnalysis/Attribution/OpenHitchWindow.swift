import HitchTrace

/// A hitching frame's windows, open to late arrivals.
struct OpenHitchWindow: Sendable {
    var main: Range<Int64>
    var render: Range<Int64>
    var other: Range<Int64>
    /// The latest end of this window and of every window opened before it (never decreasing).
    var reachNs: Int64
    var hitchNs: Int64
    /// Whether the app caused the hitch (its own work or its threads taking the CPU, or no readings
    /// to say otherwise) and the frame was late on its own: only such windows weight offenders.
    var countsOffenders: Bool
    /// The main thread's running and wall time in its window (the share of a stage's time on a CPU).
    var mainRunningNs: Int64
    var mainWallNs: Int64
    var attribution: HitchAttribution
    /// The frame's vsync: `startMs` is relative to the run's first event, known at the end of the run.
    var vsyncNs: Int64
    // Sized for a frame's usual few names up front: growing from empty cost more than filling them.
    var stageTimes: [Int32: (count: Int, ns: Int64)] = Dictionary(minimumCapacity: 16)          // main and render threads
    var concurrentStageTimes: [Int32: (count: Int, ns: Int64)] = Dictionary(minimumCapacity: 4) // every other thread
    var mainStageTimes: [Int32: Int64] = Dictionary(minimumCapacity: 16)
    var bodyTimes: [Int32: (count: Int, ns: Int64)] = Dictionary(minimumCapacity: 16)
    var stackCounts: [UInt32: Int] = Dictionary(minimumCapacity: 16)

    func window(for role: FrameThreadRole) -> Range<Int64> {
        switch role {
        case .main: main
        case .render: render
        case .unknown, .other: other
        }
    }

    /// Overlap of [start, end] with `window`, or nil when they do not meet (an instant counts
    /// inside [start, end)).
    static func overlap(_ window: Range<Int64>, _ startNs: Int64, _ endNs: Int64) -> Int64? {
        let overlap = min(window.upperBound, endNs) - max(window.lowerBound, startNs)
        if overlap > 0 { return overlap }
        if startNs == endNs && window.contains(startNs) { return 0 }
        return nil
    }

    mutating func addStage(_ s: StageInstance, role: FrameThreadRole) {
        guard let overlap = Self.overlap(window(for: role), s.startNs, s.endNs) else { return }
        let duration = s.endNs - s.startNs
        // Integer share of the self time (full width: overlap * self may pass Int64).
        let selfOverlap = duration > 0 ? Int64(truncatingIfNeeded: Int64(duration).dividingFullWidth(overlap.multipliedFullWidth(by: s.selfNs)).quotient) : 0
        switch role {
        case .main, .render: Self.count(&stageTimes[s.name, default: (0, 0)], ns: selfOverlap)
        case .unknown, .other: Self.count(&concurrentStageTimes[s.name, default: (0, 0)], ns: selfOverlap)
        }
        if role == .main { mainStageTimes[s.name, default: 0] +|= selfOverlap }
    }

    mutating func addBody(_ b: BodyInstance, role: FrameThreadRole) {
        guard let overlap = Self.overlap(window(for: role == .render ? .render : .main), b.startNs, b.endNs) else { return }
        Self.count(&bodyTimes[b.viewType, default: (0, 0)], ns: overlap)
    }

    /// One more instance of a name (one table look-up for both figures).
    private static func count(_ entry: inout (count: Int, ns: Int64), ns: Int64) {
        entry.count += 1
        entry.ns +|= ns
    }

    mutating func addSample(_ s: SampleInstance) {
        if main.contains(s.atNs) { stackCounts[s.stack, default: 0] += 1 }
    }
}
