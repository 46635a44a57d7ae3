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
    larger than --threshold percent and the metric's noise floor is a change for the worse. Change
    points of many metrics at one commit range are one change, told once: led by the figure that
    says it best (the hitch time ratio first), with every figure that moved with it beneath.

    OPTIONS:
      --branch B             The branch (default main).
      --metric M             Only these metrics (repeatable; default every stored metric).
      --threshold PCT        Smallest relative change that counts, 0 to 10000 (default 5).
      --last N               Only the newest N runs.
      --max-pvalue P         Significance of a change point (default 0.0001).
      --window N             E-divisive window in runs (default 50).
      --format FORMAT        text (default), json, markdown.
    \(HistoryCommand.dbHelp)
      -h, --help             Show this help.

    EXIT STATUS: 0 no regression, 1 a metric's newest change point is a regression, 2 bad input.

    EXAMPLE:
      hitch history check --branch main --metric hitches.120.hitchTimeRatioMsPerS
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", ["text", "json", "markdown"], default: "text")
        let (branch, history, threshold, options) = try HistoryCommand.series(&arguments, command: name)
        let result = HistoryCheck.check(history, branch: branch, thresholdPercent: threshold, options: options)
        switch format {
        case "json": try writeStandardOutput(JSONOutput.text(result))
        case "markdown":
            try writeStandardOutputLine("### hitch history check: \(HistoryCommand.cell(branch)), \(result.runs) runs\n\n\(HistoryCommand.coverage(result))\n\n| commits | change | figures that moved with it |\n|---|---|---|")
            for change in result.changes {
                let others = change.metrics.dropFirst().map { "`\(HistoryCommand.cell($0.metric))` \($0.changePoint.verdict)" }
                try writeStandardOutputLine("| `\(HistoryCommand.cell(change.commitRange))` | \(HistoryCommand.cell(describe(change))) | \(others.isEmpty ? "none" : others.joined(separator: ", ")) |")
            }
        default:
            let points = result.metrics.reduce(0) { $0 + $1.changePoints.count }
            try writeStandardOutputLine("\(result.runs) runs on branch \(branch), \(result.metrics.count) metrics, \(points) change point\(points == 1 ? "" : "s")"
                                        + " at \(result.changes.count) commit range\(result.changes.count == 1 ? "" : "s")")
            try writeStandardOutputLine(HistoryCommand.coverage(result))
            // Every change point, grouped by where it is: one change in the code is told once, led by
            // the figure that says it best, with the figures that moved with it beneath.
            let failing = Set(result.failingChanges.map(\.runIndex))
            for change in result.changes {
                try writeStandardOutputLine("\(failing.contains(change.runIndex) ? "FAIL" : "    ")  " + describe(change))
                for member in change.metrics {
                    try writeStandardOutputLine("        \(member.metric): \(HistoryShow.describe(member.changePoint))")
                }
            }
        }
        let failingChanges = result.failingChanges
        guard !failingChanges.isEmpty else { return .ok }
        writeError("\(failingChanges.count) regression\(failingChanges.count == 1 ? "" : "s") on \(branch): "
                   + failingChanges.map(describe).joined(separator: "; "))
        return .checkFailed
    }

    /// "regression at aaaa004..aaaa005: hitch time ratio at 120 Hz (hitches.120.hitchTimeRatioMsPerS)
    /// 3.93 → 214 (+5356.0%), with 80 figures that moved with it (54 worse, 5 better in all)".
    static func describe(_ change: HistoryChange) -> String {
        let lead = change.leading
        let percent = lead.changePoint.changePercent.map { ($0 >= 0 ? "+" : "") + Format.fixed($0, 1) + "%" } ?? "from 0"
        let label = DisplayNames.metric(lead.metric)
        var line = "\(change.verdict == "unchanged" ? "shift" : change.verdict) at \(change.commitRange): \(label)\(label == lead.metric ? "" : " (" + lead.metric + ")") "
            + "\(HistoryCommand.number(lead.changePoint.meanBefore)) → \(HistoryCommand.number(lead.changePoint.meanAfter)) (\(percent))"
        let others = change.metrics.count - 1
        if others > 0 {
            line += ", with \(others) figure\(others == 1 ? "" : "s") that moved with it (\(change.regressions) worse, \(change.improvements) better in all)"
        }
        return line
    }
}
