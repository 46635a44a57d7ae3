import HitchTrace

/// One trace's figures in the form that merges: what `hitch summarize` writes, one JSON file per
/// trace (docs/FLEET.md; schema docs/summary.schema.json). It holds the totals every figure is
/// derived from (integer nanoseconds and counts, the frame-time sketches, every offender's weight,
/// decode totals), the trace's dimensions and its metadata. A fleet is its traces' summaries merged
/// (`FleetSummary`).
public struct TraceSummary: Codable, Sendable, Equatable {
    /// The `format` of every trace summary.
    public static let formatName = "hitch-trace-summary"
    /// The newest summary version this hitch writes and reads. Version 1: hitches, offenders,
    /// decode, counts. Hangs come in a later version (docs/FLEET.md "Versions").
    public static let currentVersion = 3
    /// The dimensions a summary takes from the trace's metadata (`--dimension` adds others).
    public static let dimensionKeys: [MetadataKey] = [.workload, .variant, .appVersion, .device, .os, .commit, .branch, .host]

    public var format = TraceSummary.formatName
    public var version = TraceSummary.currentVersion
    /// The trace as it was named to `hitch summarize`.
    public var path: String
    /// What the fleet's breakdowns group by: `dimensionKeys` from the metadata, then `--dimension`.
    public var dimensions: [String: String]
    /// The trace's metadata, every key (of its first run).
    public var metadata: [String: String]
    /// The refresh rates judged (`--refresh`): summaries merge only with summaries of the same rates.
    public var refreshRatesHz: [Double]
    /// The analysis' warnings (records skipped, frames without commit, …).
    public var warnings: [String]
    var totals: FigureTotals

    init(path: String, dimensions: [String: String], metadata: [String: String], refreshRatesHz: [Double],
         warnings: [String], totals: FigureTotals) {
        self.path = path
        self.dimensions = dimensions
        self.metadata = metadata
        self.refreshRatesHz = refreshRatesHz
        self.warnings = warnings
        self.totals = totals
    }

    /// The figures `hitch analyze` gives for this trace alone.
    public var analysis: Analysis {
        var a = Analysis()
        a.refreshRatesHz = refreshRatesHz
        totals.contribute(to: &a, metadata: metadata, deviceBudgetBytes: AnalyzerOptions().deviceBudgetBytes)
        return a
    }

    /// The trace's dimensions: the metadata's `dimensionKeys`, then `overrides` (which win).
    static func dimensions(metadata: [String: String], overrides: [String: String]) -> [String: String] {
        var result: [String: String] = [:]
        for key in dimensionKeys { if let value = metadata[key], !value.isEmpty { result[key.name] = value } }
        for (key, value) in overrides { result[key] = value }
        return result
    }
}

extension Analyzer {
    /// The summary of the trace just added (one run): its figures' totals, dimensions and metadata,
    /// and the analysis `hitch analyze` gives for it.
    public func summary(path: String, dimensions overrides: [String: String] = [:]) -> (summary: TraceSummary, analysis: Analysis) {
        let (analysis, totals) = finishWithTotals()
        var totalsWithPath = totals
        for key in totalsWithPath.hitches.rates.keys { totalsWithPath.hitches.rates[key]!.worstWindow.trace = path }
        totalsWithPath.hitches.recorded.worstWindow.trace = path
        if let worst = totalsWithPath.hangs?.worst { totalsWithPath.hangs!.worst = worst.map { var d = $0; d.trace = path; return d } }
        let summary = TraceSummary(path: path, dimensions: TraceSummary.dimensions(metadata: analysis.metadata, overrides: overrides),
                                   metadata: analysis.metadata, refreshRatesHz: options.refreshRatesHz, warnings: analysis.warnings,
                                   totals: totalsWithPath)
        return (summary, analysis)
    }
}

/// Why a summary cannot be read or merged: one line, naming the file.
public struct SummaryError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
