/// One offender's weight as integers (`WeightedHitch`): what `Offender` is derived from, and what
/// merges exactly across traces (docs/METRICS.md "Hitch attribution").
struct OffenderTotals: Codable, Sendable, Equatable {
    var kind: OffenderKind
    var name: String
    /// Sum of hitch time x on-CPU share, in picoseconds.
    var weightPs: Int64
    var onCPUNs: Int64
    var hitchingFrames: Int

    init(kind: OffenderKind, name: String, _ weight: WeightedHitch) {
        self.kind = kind
        self.name = name
        weightPs = weight.picoseconds
        onCPUNs = weight.onCPUNs
        hitchingFrames = weight.frames
    }

    var figures: Offender {
        var o = Offender()
        o.kind = kind
        o.name = name
        o.weightedHitchMs = Double(weightPs) / 1e9
        o.onCPUMs = milliseconds(onCPUNs)
        o.hitchingFrames = hitchingFrames
        return o
    }

    /// One entry per kind and name (their weights added), sorted by them: the same offenders always
    /// in the same order.
    static func canonical(_ offenders: [OffenderTotals]) -> [OffenderTotals] {
        struct Key: Hashable { var kind: OffenderKind; var name: String }
        var merged: [Key: OffenderTotals] = [:]
        for o in offenders {
            let key = Key(kind: o.kind, name: o.name)
            guard var existing = merged[key] else { merged[key] = o; continue }
            existing.weightPs +|= o.weightPs
            existing.onCPUNs +|= o.onCPUNs
            existing.hitchingFrames +|= o.hitchingFrames
            merged[key] = existing
        }
        return merged.values.sorted { ($0.kind.rawValue, $0.name) < ($1.kind.rawValue, $1.name) }
    }
}
