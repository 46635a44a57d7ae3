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
    static func ms(_ value: Double) -> String { Format.significant(value) + " ms" }
    static func percent(_ fraction: Double) -> String { Format.fixed(fraction * 100, 1) + "%" }
    static func bytes(_ value: Double) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var v = value, i = 0
        while abs(v) >= 1000 && i < units.count - 1 { v /= 1000; i += 1 }
        return Format.significant(v) + " " + units[i]
    }
    static func rateKeys(_ analysis: Analysis) -> [String] {
        let asked = analysis.refreshRatesHz.map { Analyzer.rateKey($0) }
        return asked.filter { analysis.hitches[$0] != nil } + analysis.hitches.keys.sorted().filter { !asked.contains($0) }
    }
}
