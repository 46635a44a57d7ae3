import HitchTrace

/// Input arrivals (instants in category `input`), kept sorted whatever their file order, and handed
/// to frames in begin order: a frame's input is the earliest that arrived after the previous frame
/// began and no later than its own begin.
struct InputArrivals: Sendable {
    static let limit = 1 << 16
    private var times: [Int64] = []
    private var head = 0
    private var previousBeganNs: Int64 = .min

    mutating func reset() { times.removeAll(keepingCapacity: true); head = 0; previousBeganNs = .min }

    mutating func add(_ t: Int64) {
        if times.count - head >= Self.limit { head += 1 }   // bounded: the oldest goes
        var i = times.count
        while i > head, times[i - 1] > t { i -= 1 }          // nearly always appended at the end
        times.insert(t, at: i)
    }

    /// The input released for a frame that began at `beganNs` (frames come in begin order), or .min.
    mutating func take(beganNs: Int64) -> Int64 {
        defer { previousBeganNs = max(previousBeganNs, beganNs) }
        while head < times.count, times[head] <= previousBeganNs { head += 1 }
        var result = Int64.min
        if head < times.count, times[head] <= beganNs { result = times[head] }
        while head < times.count, times[head] <= beganNs { head += 1 }
        if head > 1024 && head * 2 > times.count { times.removeFirst(head); head = 0 }
        return result
    }
}

/// The union of interaction intervals (the animating time), computed at the end of a run from the
/// begins and ends sorted by time: they may come from different threads, in any file order.
/// Begins and ends pair by overlap (any open interaction keeps the time animating); one still open
/// at the end of the run closes at the run's last event.
struct InteractionUnion: Sendable {
    static let limit = 1 << 20
    private var marks: [(t: Int64, isBegin: Bool)] = []
    private(set) var overflowed = false

    mutating func reset() { marks.removeAll(keepingCapacity: true); overflowed = false }

    mutating func add(_ t: Int64, isBegin: Bool) {
        if marks.count < Self.limit { marks.append((t, isBegin)) } else { overflowed = true }
    }

    /// The union's length in ns, or nil when the run recorded no interaction.
    func unionNs(runEndNs: Int64) -> Int64? {
        guard marks.contains(where: \.isBegin) else { return nil }
        // At equal times begins sort first: an empty interaction opens and closes, touching ones join.
        let sorted = marks.sorted { ($0.t, $0.isBegin ? 0 : 1) < ($1.t, $1.isBegin ? 0 : 1) }
        var open = 0, startNs: Int64 = 0, union: Int64 = 0
        for mark in sorted {
            if mark.isBegin {
                if open == 0 { startNs = mark.t }
                open += 1
            } else if open > 0 {
                open -= 1
                if open == 0 { union +|= max(0, mark.t - startNs) }
            }
        }
        if open > 0 && runEndNs > startNs { union +|= runEndNs - startNs }
        return union
    }
}
