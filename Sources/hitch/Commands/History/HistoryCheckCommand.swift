#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchHistory
import HitchReport

enum HistoryCheckCommand: Subcommand {
    static let name = "check"
    static let summary = "Change-point detection per metric; exit 1 when the newest change is a regression."
    static let help = """
    USAGE: hitch history check [--branch main] [--metric M]... [--threshold PCT] [--last N] [--format text|json|markdown] [--db PATH|URL]

    Finds change points in each metric's series along the branch with E-divisive means, as Apache
    Otava (formerly Hunter) does (docs/HISTORY.md). A metric regressed when its newest change point
    larger than --threshold percent and the metric's noise floor is a change for the worse; the
    message names the commit range that holds the cause.

    OPTIONS:
      --branch B             The branch (default main).
      --metric M             Only these metrics (repeatable; default every stored metric).
      --threshold PCT        Smallest relative change that counts, 0 to 10000 (default 5).
      --last N               Only the newest N runs.
      --max-pvalue P         Significance of a change point (default 0.0001).
      --window N             E-divisive window in runs (default 50).
      --format FORMAT        text (default), json, markdown.
    \(HistoryCommand.dbHelp)

    EXIT STATUS: 0 no regression, 1 a metric's newest change point is a regression, 2 bad input.
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let branch = try arguments.option("--branch") ?? "main"
        let metrics = try arguments.options("--metric")
        let threshold = try arguments.thresholdPercent()
        let last = try HistoryCommand.last(&arguments)
        let options = try HistoryCommand.detectorOptions(&arguments)
        let format = try arguments.choice("--format", ["text", "json", "markdown"], default: "text")
        let store = try HistoryCommand.openStore(&arguments)
        defer { store.close() }
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch history check' takes no arguments (see --help)") }
        try HistoryCommand.requireBranch(branch, in: store)
        let history = try HistoryCommand.store { () throws(HistoryError) in
            try store.series(branch: branch, metrics: metrics.isEmpty ? nil : metrics, last: last)
        }
        let result = HistoryCheck.check(history, branch: branch, thresholdPercent: threshold, options: options)
        switch format {
        case "json": try writeStandardOutput(JSONOutput.text(result))
        case "markdown":
            try writeStandardOutputLine("### hitch history check: \(HistoryCommand.cell(branch)), \(result.runs) runs\n\n\(HistoryCommand.coverage(result))\n\n| metric | newest change | verdict |\n|---|---|---|")
            for m in result.metrics {
                try writeStandardOutputLine("| `\(HistoryCommand.cell(m.metric))` | \(m.newest.map(HistoryShow.describe).map(HistoryCommand.cell) ?? "none") | \(m.verdict) |")
            }
        default:
            try writeStandardOutputLine("\(result.runs) runs on branch \(branch), \(result.metrics.count) metrics, \(result.metrics.reduce(0) { $0 + $1.changePoints.count }) change points")
            try writeStandardOutputLine(HistoryCommand.coverage(result))
            for m in result.metrics {
                guard let newest = m.newest else { continue }
                try writeStandardOutputLine("\(m.verdict == "regression" ? "FAIL" : "ok  ")  \(m.metric): newest \(HistoryShow.describe(newest))")
            }
        }
        let regressions = result.regressions
        guard !regressions.isEmpty else { return .ok }
        writeError("\(regressions.count) metric\(regressions.count == 1 ? "" : "s") regressed on \(branch): "
                   + regressions.map { "\($0.metric) \($0.newest.map(HistoryShow.describe) ?? "")" }.joined(separator: "; "))
        return .checkFailed
    }
}
