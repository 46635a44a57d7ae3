import HitchTrace

/// An order-independent sum of weights `hitchNs * part / whole`, in integer picoseconds, and the
/// number of hitching frames it was taken over.
struct WeightedHitch: Sendable, Equatable {
    private(set) var picoseconds: Int64 = 0
    /// The on-CPU time the weights were taken from (`Offender.onCPUMs`), where known.
    private(set) var onCPUNs: Int64 = 0
    var frames = 0

    /// One hitching frame's share (one offender appears once per frame).
    mutating func add(hitchNs: Int64, part: Int64, whole: Int64) {
        addWeight(hitchNs: hitchNs, part: part, whole: whole)
        onCPUNs +|= part
        frames += 1
    }

    /// A share without a frame: a part of a frame whose offender is counted once by the caller
    /// (a sampled function spread over several stacks of one frame).
    mutating func addWeight(hitchNs: Int64, part: Int64, whole: Int64) {
        let ps = Double(hitchNs) * Double(part) / Double(max(1, whole)) * 1000
        picoseconds +|= Int64(clampingDouble: ps.rounded())
    }

    /// On-CPU time of a share taken with `addWeight`.
    mutating func addOnCPU(_ ns: Int64) { onCPUNs +|= ns }

    mutating func merge(_ other: WeightedHitch) {
        picoseconds +|= other.picoseconds
        onCPUNs +|= other.onCPUNs
        frames += other.frames
    }

    var ms: Double { Double(picoseconds) / 1e9 }
}
