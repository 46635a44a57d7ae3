/// Many traces' summaries merged: the fleet's totals (every trace's runs as one analysis), the
/// distribution of the traces' hitch time ratios, the totals of each group of every grouping by
/// dimension, and the worst traces. What `hitch merge --state` writes and reads again: merging is
/// exact, associative and commutative (docs/FLEET.md "Merging"), so a fleet can be merged in any
/// tree of partial merges, on any machines, in any order, with the same result.
public struct FleetSummary: Codable, Sendable, Equatable {
    public static let formatName = "hitch-fleet-summary"
    public static let currentVersion = 3
    /// The groupings `hitch merge` breaks the fleet down by unless told (`--by`).
    public static let defaultGroupings: [[String]] = [["workload"], ["appVersion"], ["device"], ["os"], ["appVersion", "device"]]
    /// The worst traces kept, by their recorded hitch time ratio.
    public static let worstTraceLimit = 100

    public var format = FleetSummary.formatName
    public var version = FleetSummary.currentVersion
    /// Each grouping is a list of dimension names (["appVersion", "device"]: one group per pair of values).
    public var groupings: [[String]]
    /// The refresh rates every summary judged, ascending.
    public var refreshRatesHz: [Double]
    public var traces: Int
    /// The sum (mod 2^64) of a 64-bit FNV-1a hash of every trace's path, in hex: with `traces`, it
    /// shows a trace lost or counted twice (docs/FLEET.md "Checking a run").
    public var pathDigest: String
    /// The metadata every trace has, each key with the same value in all.
    public var commonMetadata: [String: String]
    var totals: FigureTotals
    var traceRatios: RatioDistribution
    /// One per grouping and combination of values seen, sorted by grouping, then values.
    var groups: [FleetGroup]
    /// Traces with frames, worst recorded hitch time ratio first (at most `worstTraceLimit`).
    var worstTraces: [FleetTraceRow]

    /// A fleet of one trace, grouped by `groupings`.
    public init(_ trace: TraceSummary, groupings: [[String]] = FleetSummary.defaultGroupings) {
        self.groupings = groupings
        refreshRatesHz = trace.refreshRatesHz.sorted()
        traces = 1
        pathDigest = Self.hex(Self.pathHash(trace.path))
        commonMetadata = trace.metadata
        totals = trace.totals
        let row = FleetTraceRow(trace)
        let ratios = RatioDistribution(row)
        traceRatios = ratios
        groups = groupings.enumerated().map { index, grouping in
            FleetGroup(grouping: index, values: grouping.map { trace.dimensions[$0] ?? "" }, traces: 1,
                       hitches: trace.totals.hitches, traceRatios: ratios)
        }
        worstTraces = row.hasFrames ? [row] : []
    }

    /// Adds `other`'s traces: afterwards this is the fleet of both. Fleets grouped differently, or
    /// judged at other refresh rates, are refused.
    public mutating func merge(_ other: FleetSummary) throws(SummaryError) {
        guard groupings == other.groupings else {
            throw SummaryError("fleet summaries grouped differently cannot merge: \(Self.describe(groupings)) and \(Self.describe(other.groupings)); merge them with the same --by")
        }
        guard refreshRatesHz == other.refreshRatesHz else {
            throw SummaryError("summaries judged at different refresh rates cannot merge: \(Self.describe(refreshRatesHz)) Hz and \(Self.describe(other.refreshRatesHz)) Hz; summarize them with the same --refresh")
        }
        if let mine = totals.hangs, let theirs = other.totals.hangs,
           (mine.hangThresholdNs, mine.briefThresholdNs) != (theirs.hangThresholdNs, theirs.briefThresholdNs) {
            throw SummaryError("summaries judged with different hang thresholds cannot merge: \(milliseconds(mine.hangThresholdNs))/\(milliseconds(mine.briefThresholdNs)) ms and "
                               + "\(milliseconds(theirs.hangThresholdNs))/\(milliseconds(theirs.briefThresholdNs)) ms; summarize them with the same --hang-ms and --brief-hang-ms")
        }
        traces +|= other.traces
        pathDigest = Self.hex((UInt64(pathDigest, radix: 16) ?? 0) &+ (UInt64(other.pathDigest, radix: 16) ?? 0))
        commonMetadata = commonMetadata.filter { other.commonMetadata[$0.key] == $0.value }
        totals.merge(other.totals)
        traceRatios.merge(other.traceRatios)
        var byKey: [FleetGroup.Key: FleetGroup] = [:]
        for group in groups + other.groups {
            if var existing = byKey[group.key] { existing.merge(group); byKey[group.key] = existing } else { byKey[group.key] = group }
        }
        groups = byKey.values.sorted { $0.key < $1.key }
        worstTraces = Array((worstTraces + other.worstTraces).sorted { $0.isWorse(than: $1) }.prefix(Self.worstTraceLimit))
    }

    /// Every summary merged; nil for none.
    public static func merged(_ fleets: [FleetSummary]) throws(SummaryError) -> FleetSummary? {
        guard var result = fleets.first else { return nil }
        for fleet in fleets.dropFirst() { try result.merge(fleet) }
        return result
    }

    /// 64-bit FNV-1a of the path's UTF-8 bytes.
    static func pathHash(_ path: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// 16 lowercase hex digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func describe(_ groupings: [[String]]) -> String {
        groupings.map { $0.joined(separator: "×") }.joined(separator: ", ")
    }

    private static func describe(_ rates: [Double]) -> String { rates.map(Analyzer.rateKey).joined(separator: ",") }
}

/// The totals of the traces whose dimensions of one grouping have the same values.
struct FleetGroup: Codable, Sendable, Equatable {
    /// Index into `FleetSummary.groupings`.
    var grouping: Int
    /// One value per dimension of the grouping ("" when a trace does not have it).
    var values: [String]
    var traces: Int
    var hitches: RateTotals
    var traceRatios: RatioDistribution

    struct Key: Hashable, Comparable {
        var grouping: Int
        var values: [String]
        static func < (a: Key, b: Key) -> Bool {
            a.grouping != b.grouping ? a.grouping < b.grouping : a.values.lexicographicallyPrecedes(b.values)
        }
    }

    var key: Key { Key(grouping: grouping, values: values) }

    mutating func merge(_ other: FleetGroup) {
        traces +|= other.traces
        hitches.merge(other.hitches)
        traceRatios.merge(other.traceRatios)
    }
}

/// One trace among the worst: its recorded hitch figures in integers, and where it came from.
struct FleetTraceRow: Codable, Sendable, Equatable {
    var path: String
    var dimensions: [String: String]
    var frameCount: Int
    var hitchCount: Int
    var totalHitchNs: Int64
    var longestHitchNs: Int64
    var animatingNs: Int64

    init(_ trace: TraceSummary) {
        let recorded = trace.totals.hitches.recorded
        path = trace.path
        dimensions = trace.dimensions
        frameCount = recorded.frameCount
        hitchCount = recorded.hitchCount
        totalHitchNs = recorded.totalHitchNs
        longestHitchNs = recorded.longestHitchNs
        animatingNs = recorded.animatingNs
    }

    /// A ratio stands on judged frames over some animating time.
    var hasFrames: Bool { frameCount > 0 && animatingNs > 0 }

    var hitchTimeRatioMsPerS: Double { animatingNs > 0 ? milliseconds(totalHitchNs) / (Double(animatingNs) / 1e9) : 0 }

    /// A higher ratio; between equals, the path that sorts first (then the rest, so any two
    /// different rows have one order).
    func isWorse(than other: FleetTraceRow) -> Bool {
        let (a, b) = (hitchTimeRatioMsPerS, other.hitchTimeRatioMsPerS)
        if a != b { return a > b }
        return (path, totalHitchNs, animatingNs, frameCount, hitchCount, longestHitchNs)
            < (other.path, other.totalHitchNs, other.animatingNs, other.frameCount, other.hitchCount, other.longestHitchNs)
    }
}

/// How the traces' recorded hitch time ratios are spread: a count per fixed bin, and a sketch of
/// the ratios (in thousandths of a ms/s) for their percentiles.
struct RatioDistribution: Codable, Sendable, Equatable {
    /// Lower edges in ms/s; each bin runs to the next edge, the last one up. 5 and 10 are Apple's
    /// test-scale thresholds, 10, 25 and 50 Xcode Organizer's.
    static let binEdgesMsPerS: [Double] = [0, 1, 2, 3, 5, 7.5, 10, 15, 20, 25, 30, 50, 75, 100, 200]
    static let sketchUnitsPerMsPerS = 1000.0

    /// Traces per bin of `binEdgesMsPerS`.
    var counts = [Int](repeating: 0, count: RatioDistribution.binEdgesMsPerS.count)
    var ratios = QuantileSketch()
    /// Traces with no judged frames (no ratio).
    var tracesWithoutFrames = 0

    init() {}

    init(_ row: FleetTraceRow) {
        guard row.hasFrames else { tracesWithoutFrames = 1; return }
        let ratio = row.hitchTimeRatioMsPerS
        counts[Self.bin(ratio)] = 1
        ratios.add(Int64(clampingDouble: (ratio * Self.sketchUnitsPerMsPerS).rounded()))
    }

    static func bin(_ ratioMsPerS: Double) -> Int {
        max(0, (binEdgesMsPerS.lastIndex { $0 <= ratioMsPerS }) ?? 0)
    }

    mutating func merge(_ other: RatioDistribution) {
        for index in counts.indices where index < other.counts.count { counts[index] +|= other.counts[index] }
        ratios.merge(other.ratios)
        tracesWithoutFrames +|= other.tracesWithoutFrames
    }
}
