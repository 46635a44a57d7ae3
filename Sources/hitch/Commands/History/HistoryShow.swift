#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchHistory
import HitchReport

enum HistoryShow: Subcommand {
    static let name = "show"
    static let summary = "One metric's values along a branch, with its change points."
    static let help = """
    USAGE: hitch history show METRIC [--branch main] [--last N] [--format text|json|markdown] [--db PATH|URL]

    Prints the metric's value at each run of the branch, oldest first, and the change points found.

    ARGUMENTS:
      METRIC                 A stored metric's path (hitch history list --metrics lists them).

    OPTIONS:
      --branch B             The branch (default main).
      --last N               Only the newest N runs.
      --threshold PCT        Smallest relative change that counts, 0 to 10000 (default 5).
      --max-pvalue P         Significance of a change point (default 0.0001).
      --window N             E-divisive window in runs (default 50).
      --format FORMAT        text (default), json, markdown.
    \(HistoryCommand.dbHelp)
      -h, --help             Show this help.

    EXAMPLE:
      hitch history show hitches.120.hitchTimeRatioMsPerS --branch main --last 50
    """
    struct Row: Encodable { var run: String; var commit: String; var time: String; var value: Double? }
    struct Output: Encodable { var metric: String; var branch: String; var values: [Row]; var changePoints: [ChangePointReport] }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let branch = try arguments.option("--branch") ?? "main"
        let last = try HistoryCommand.last(&arguments)
        let format = try arguments.choice("--format", ["text", "json", "markdown"], default: "text")
        let options = try HistoryCommand.detectorOptions(&arguments)
        let threshold = try arguments.thresholdPercent()
        let store = try HistoryCommand.openStore(&arguments)
        defer { store.close() }
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let metric = positionals.first else { throw CLIError("'hitch history show' needs one METRIC (see --help)") }
        try HistoryCommand.requireBranch(branch, in: store)
        let history = try HistoryCommand.store { () throws(HistoryError) in try store.series(branch: branch, metrics: [metric], last: last) }
        let result = HistoryCheck.check(history, branch: branch, thresholdPercent: threshold, options: options)
        let values = history.metrics.first?.values ?? []
        let rows = history.runs.enumerated().map { Row(run: String($1.id.prefix(12)), commit: $1.commit, time: HistoryCommand.time($1.timeMs), value: values.indices.contains($0) ? values[$0] : nil) }
        let changes = result.metrics.first?.changePoints ?? []
        let changeAt = Dictionary(changes.map { ($0.runIndex, $0) }, uniquingKeysWith: { a, _ in a })
        switch format {
        case "json": try writeStandardOutput(JSONOutput.text(Output(metric: metric, branch: branch, values: rows, changePoints: changes)))
        case "markdown":
            try writeStandardOutputLine("| time | commit | \(HistoryCommand.cell(metric)) | change |\n|---|---|---:|---|")
            for (index, row) in rows.enumerated() {
                try writeStandardOutputLine("| \(row.time) | `\(HistoryCommand.cell(row.commit))` | \(row.value.map(HistoryCommand.number) ?? "–") | \(changeAt[index].map(describe) ?? "") |")
            }
        default:
            if rows.isEmpty { try writeStandardOutputLine("no runs on branch \(branch)") }
            for (index, row) in rows.enumerated() {
                try writeStandardOutputLine("\(row.time)  \(row.commit)  \(row.value.map(HistoryCommand.number) ?? "–")" + (changeAt[index].map { "  <- " + describe($0) } ?? ""))
            }
        }
        return .ok
    }

    static func describe(_ change: ChangePointReport) -> String {
        let percent = change.changePercent.map { ($0 >= 0 ? "+" : "") + Format.fixed($0, 1) + "%" } ?? "from 0"
        return "\(change.verdict == "unchanged" ? "change" : change.verdict) \(HistoryCommand.number(change.meanBefore)) -> \(HistoryCommand.number(change.meanAfter)) (\(percent)), commits \(change.commitRange)"
    }
}
