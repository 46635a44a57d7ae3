/// A fleet's figures (docs/METRICS.md "Fleet figures"): what `hitch merge` reports in text, JSON and
/// HTML, and what it stores in the history. Computed from a `FleetSummary` and nothing else.
public struct FleetFigures: Codable, Sendable, Equatable {
    /// Bumped when a key changes meaning.
    public var schemaVersion = 1
    public var traces = 0
    /// `FleetSummary.pathDigest`: which traces these are, as a check.
    public var pathDigest = ""
    public var refreshRatesHz: [Double] = []
    /// Every trace's runs as one analysis, with the figures `hitch analyze` gives for them: the hitch
    /// figures per rate, the heaviest offenders, decode, counts and evidence (frames and per-run
    /// detail are not kept; the metadata is what every trace has in common).
    public var fleet = Analysis()
    /// The trace each rate's worst one-second window is in (keys as `fleet.hitches`; "recorded").
    public var worstWindowTraces: [String: String] = [:]
    /// How the traces' own recorded hitch time ratios are spread.
    public var traceRatios = TraceRatioFigures()
    /// One per grouping: the figures of each group of traces with the same dimension values.
    public var breakdowns: [Breakdown] = []
    /// The worst traces by recorded hitch time ratio, worst first (at most `FleetSummary.worstTraceLimit`).
    public var worstTraces: [FleetTrace] = []
    public init() {}
}

/// The distribution of the traces' hitch time ratios.
public struct TraceRatioFigures: Codable, Sendable, Equatable {
    public var tracesWithFrames = 0
    /// Traces that judged no frame (decode-only, or empty): they have no ratio.
    public var tracesWithoutFrames = 0
    /// Percentiles of the traces' ratios, in ms/s (`count` traces; exact up to 4,096 traces, then
    /// within `relativeError`).
    public var ratioMsPerS = Percentiles()
    /// Traces per bin, bins in ascending order.
    public var bins: [RatioBin] = []
    /// Traces per grade of Apple's test scale (good below 5, warning 5-10, critical from 10 ms/s),
    /// counted from the bins (5 and 10 are bin edges).
    public var goodTraces = 0, warningTraces = 0, criticalTraces = 0
    public init() {}
}

public struct RatioBin: Codable, Sendable, Equatable {
    public var fromMsPerS = 0.0
    /// The next bin's lower edge; nil for the last bin.
    public var toMsPerS: Double? = nil
    public var traces = 0
    public init() {}
}

/// A fleet broken down by some dimensions (["appVersion", "device"]).
public struct Breakdown: Codable, Sendable, Equatable {
    public var dimensions: [String] = []
    /// One row per combination of values seen, sorted by values.
    public var rows: [BreakdownRow] = []
    public init() {}
}

public struct BreakdownRow: Codable, Sendable, Equatable {
    /// One value per dimension ("" when the traces do not have it).
    public var values: [String] = []
    public var traces = 0
    /// The group's traces as one analysis: the recorded frames and each rate.
    public var recorded = HitchFigures()
    public var hitches: [String: HitchFigures] = [:]
    public var traceRatios = TraceRatioFigures()
    public init() {}
}

/// One of the worst traces.
public struct FleetTrace: Codable, Sendable, Equatable {
    public var path = ""
    public var dimensions: [String: String] = [:]
    public var frameCount = 0, hitchCount = 0
    public var totalHitchMs = 0.0, longestHitchMs = 0.0
    public var animatingSeconds = 0.0
    /// At the recorded rates (each frame on its own period).
    public var hitchTimeRatioMsPerS = 0.0
    public init() {}
}

extension FleetSummary {
    /// The fleet's figures; `deviceBudgetBytes` is the decode memory budget (`--device-budget`).
    public func figures(deviceBudgetBytes: UInt64 = AnalyzerOptions().deviceBudgetBytes) -> FleetFigures {
        var f = FleetFigures()
        f.traces = traces
        f.pathDigest = pathDigest
        f.refreshRatesHz = refreshRatesHz
        f.fleet.refreshRatesHz = refreshRatesHz
        totals.contribute(to: &f.fleet, metadata: commonMetadata, deviceBudgetBytes: deviceBudgetBytes)
        if let trace = totals.hitches.recorded.worstWindow.trace, totals.hitches.recorded.worstWindow.hitchNs > 0 {
            f.worstWindowTraces["recorded"] = trace
        }
        for (key, rate) in totals.hitches.rates where rate.worstWindow.hitchNs > 0 {
            if let trace = rate.worstWindow.trace { f.worstWindowTraces[key] = trace }
        }
        f.traceRatios = traceRatios.figures
        f.breakdowns = groupings.enumerated().map { index, dimensions in
            var b = Breakdown()
            b.dimensions = dimensions
            b.rows = groups.filter { $0.grouping == index }.map { group in
                var row = BreakdownRow()
                row.values = group.values
                row.traces = group.traces
                var a = Analysis()
                group.hitches.contribute(to: &a)
                row.recorded = a.recorded
                row.hitches = a.hitches
                row.traceRatios = group.traceRatios.figures
                return row
            }
            return b
        }
        f.worstTraces = worstTraces.map { row in
            var t = FleetTrace()
            t.path = row.path
            t.dimensions = row.dimensions
            t.frameCount = row.frameCount
            t.hitchCount = row.hitchCount
            t.totalHitchMs = milliseconds(row.totalHitchNs)
            t.longestHitchMs = milliseconds(row.longestHitchNs)
            t.animatingSeconds = Double(row.animatingNs) / 1e9
            t.hitchTimeRatioMsPerS = row.hitchTimeRatioMsPerS
            return t
        }
        return f
    }
}

extension RatioDistribution {
    var figures: TraceRatioFigures {
        var f = TraceRatioFigures()
        f.tracesWithFrames = ratios.count
        f.tracesWithoutFrames = tracesWithoutFrames
        if ratios.count > 0 {
            let scale = Self.sketchUnitsPerMsPerS
            let values = ratios.quantiles([0.5, 0.9, 0.95, 0.99])
            var p = Percentiles()
            p.count = ratios.count
            p.p50 = values[0] / scale
            p.p90 = values[1] / scale
            p.p95 = values[2] / scale
            p.p99 = values[3] / scale
            p.max = Double(ratios.maximum) / scale
            p.mean = ratios.mean / scale
            p.relativeError = ratios.relativeError
            f.ratioMsPerS = p
        }
        let edges = Self.binEdgesMsPerS
        f.bins = edges.indices.map { index in
            var bin = RatioBin()
            bin.fromMsPerS = edges[index]
            bin.toMsPerS = index + 1 < edges.count ? edges[index + 1] : nil
            bin.traces = index < counts.count ? counts[index] : 0
            return bin
        }
        for bin in f.bins {
            switch HitchGrading.appleTestGrade(bin.fromMsPerS) {
            case .good: f.goodTraces +|= bin.traces
            case .warning: f.warningTraces +|= bin.traces
            default: f.criticalTraces +|= bin.traces
            }
        }
        return f
    }
}
