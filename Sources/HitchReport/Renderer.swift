import HitchAnalysis

// One renderer protocol, one format per file (TextReport.swift, JSONReport.swift, ...). A renderer
// reads `Analysis` and computes nothing: every figure comes from the analyzer.

/// What a report shows: the analysis, and the budget outcomes when `hitch check` ran them.
public struct ReportInput: Sendable {
    public var analysis: Analysis
    public var title: String
    public var budgets: [BudgetOutcome]
    public init(analysis: Analysis, title: String = "hitch analysis", budgets: [BudgetOutcome] = []) {
        self.analysis = analysis
        self.title = title
        self.budgets = budgets
    }
}

public protocol AnalysisRenderer: SendableMetatype {
    /// The `--format` value that selects this renderer.
    static var format: String { get }
    static func render(_ input: ReportInput) throws -> String
}

public enum Renderers {
    /// The formats `hitch analyze --format` offers.
    public static let all: [any AnalysisRenderer.Type] = [TextReport.self, JSONReport.self, MarkdownReport.self, JUnitReport.self, HTMLReport.self]
    public static var formats: [String] { all.map { $0.format } }
    public static func named(_ format: String) -> (any AnalysisRenderer.Type)? { all.first { $0.format == format } }
}

/// Small shared wording for the text-like renderers.
enum ReportText {
    /// Beside a grade from fewer frames than `HitchGrading.fewFramesBelow`.
    static let fewFramesNote = "graded on fewer than \(HitchGrading.fewFramesBelow) frames: a small sample, the grade is provisional (docs/METRICS.md \"Evidence\")"
    /// Beside a percentile from fewer values than it needs.
    static let thinPercentileNote = "a percentile of fewer values than it needs (P50: \(PercentileEvidence.minimumValues(forPercentile: 50)), "
        + "P95: \(PercentileEvidence.minimumValues(forPercentile: 95)), P99: \(PercentileEvidence.minimumValues(forPercentile: 99))): one slow value moves it"
    /// "†" when `count` values are too few for the percentile `level`.
    static func thinMark(_ level: Double, _ count: Int) -> String { PercentileEvidence.isThin(percentile: level, count: count) ? "†" : "" }
    static func ms(_ value: Double) -> String { Format.significant(value) + " ms" }
    static func percent(_ fraction: Double) -> String { Format.fixed(fraction * 100, 1) + "%" }
    static func bytes(_ value: Double) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var v = value, i = 0
        while abs(v) >= 1000 && i < units.count - 1 { v /= 1000; i += 1 }
        return Format.significant(v) + " " + units[i]
    }
    /// A hitch cause in words.
    static func cause(_ cause: HitchCause) -> String {
        switch cause {
        case .appWork: "app work"
        case .waitingForCPU: "waiting for a CPU"
        case .blocked: "blocked"
        case .machineStall: "machine stall"
        case .unknown: "unknown"
        }
    }
    /// "app work 3.1 · waiting for a CPU 0.4 · …" (ms/s), causes without hitches left out.
    static func causeRatios(_ h: HitchFigures) -> String {
        let parts = HitchCause.allCases.filter { h.byCause[$0].hitchCount > 0 }.map {
            "\(cause($0)) \(Format.fixed(h.byCause[$0].hitchTimeRatioMsPerS, 2))"
        }
        return parts.isEmpty ? "no hitches" : parts.joined(separator: " · ") + " ms/s"
    }
    /// "running 5.1 · runnable 0.3 · blocked 2 · machine 0 · unknown 0 ms" (parts with time only).
    static func split(_ s: ThreadStateSplit) -> String {
        let parts = [("running", s.runningMs), ("runnable", s.runnableMs), ("blocked", s.blockedMs), ("machine", s.machineMs), ("unknown", s.unknownMs)]
            .filter { $0.1 > 0 }.map { "\($0.0) \(Format.significant($0.1))" }
        return parts.isEmpty ? "no time" : parts.joined(separator: " · ") + " ms"
    }
    static func rateKeys(_ analysis: Analysis) -> [String] {
        let asked = analysis.refreshRatesHz.map { Analyzer.rateKey($0) }
        return asked.filter { analysis.hitches[$0] != nil } + analysis.hitches.keys.sorted().filter { !asked.contains($0) }
    }
}
