import Foundation
import HitchAnalysis
import HitchReport

// `hitch check TRACE... --budget FILE`: the CI gate. Exit 0 when every budget holds, 1 naming each
// broken budget, 2 for a bad budget file or an unreadable trace.
enum CheckCommand: Subcommand {
    static let name = "check"
    static let summary = "Gate CI: compare a trace's figures with JSON budgets (exit 1 on a broken budget)."
    static let help = """
    USAGE: hitch check TRACE... --budget FILE [--format text|json|markdown|junit] [--refresh 60,120] [--device-budget 1.2GB]

    Analyzes the traces (several = merged runs) and checks each budget in FILE against the figure it
    names. A figure the trace does not have (e.g. decode figures of a feed trace) is reported and skipped.

    BUDGET FILE (JSON; metrics are paths into the `hitch analyze --format json` output, docs/METRICS.md):
      {"budgets": [
        {"metric": "hitches.120.hitchTimeRatioMsPerS", "max": 5},
        {"metric": "stages[filter].p95Ms", "max": 4, "name": "filter stays fast"},
        {"metric": "decode.tokensPerSecond", "min": 20}
      ]}

    OPTIONS:
      --budget FILE          The budget file (required).
      --format FORMAT        text (default), json, markdown, junit (one test case per budget).
      --refresh LIST         Refresh rates in Hz (default 60,120).
      --device-budget SIZE   Device memory budget (default 1.2GB).
      -o, --output FILE      Write the report to FILE instead of stdout.

    EXIT STATUS: 0 all budgets hold, 1 a budget is broken, 2 bad budget file or unreadable trace.

    EXAMPLE:
      hitch check Traces/feed-tuned-120hz.fxt --budget .ci/budgets.json --format junit -o budgets.xml
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let budgetPath = try arguments.option("--budget") else { throw CLIError("'hitch check' needs --budget FILE (see --help)") }
        let format = try arguments.choice("--format", Renderers.formats, default: "text")
        let options = try AnalysisCLI.options(&arguments)
        let output = try arguments.option("--output") ?? arguments.option("-o")
        let paths = try arguments.positionals()
        guard !paths.isEmpty else { throw CLIError("'hitch check' needs at least one TRACE (see --help)") }
        // The budget file first: a typo in it fails fast, before a long analysis.
        let budgets = try loadBudgets(budgetPath)
        let analysis = try AnalysisCLI.analyze(paths: paths, options: options)
        let outcomes = try evaluate(budgets, analysis, budgetPath)
        let text: String
        if format == "text" {
            text = outcomes.map { "\($0.passed ? "pass" : "FAIL")  \($0.name): \($0.message)" }.joined(separator: "\n") + "\n"
        } else {
            guard let renderer = Renderers.named(format) else { throw CLIError("unknown format '\(format)'") }
            text = try renderer.render(ReportInput(analysis: analysis, title: "hitch check", budgets: outcomes))
        }
        try AnalysisCLI.emit(text, to: output)
        return exitCode(for: outcomes)
    }

    static func loadBudgets(_ path: String) throws -> [Budget] {
        do { return try BudgetFile.load(path: path) } catch { throw CLIError(error.description) }
    }

    static func evaluate(_ budgets: [Budget], _ analysis: Analysis, _ path: String) throws -> [BudgetOutcome] {
        do { return try BudgetFile.evaluate(budgets, against: analysis, path: path) } catch { throw CLIError(error.description) }
    }

    /// 1 naming every broken budget on stderr; 0 otherwise.
    static func exitCode(for outcomes: [BudgetOutcome]) -> ExitCode {
        let broken = outcomes.filter { !$0.passed }
        guard !broken.isEmpty else { return .ok }
        writeError("\(broken.count) budget\(broken.count == 1 ? "" : "s") broken: " + broken.map { $0.message }.joined(separator: "; "))
        return .checkFailed
    }
}
