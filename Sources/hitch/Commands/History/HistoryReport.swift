#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchHistory
import HitchReport

enum HistoryReport: Subcommand {
    static let name = "report"
    static let summary = "A self-contained HTML trend page: one chart per metric, change points marked."
    static let help = """
    USAGE: hitch history report -o FILE [--branch main] [--metric M]... [--last N] [--threshold PCT] [--db PATH|URL]

    One chart per metric along the branch's runs, change points marked (red: regressions), each
    point linking to its run's details. Self-contained (no network), names escaped, and the same
    bytes for the same history. A long history is down-sampled to 150 columns; change points are
    always drawn.

    OPTIONS:
      -o, --output FILE      The page to write (required).
      --branch B             The branch (default main).
      --metric M             Only these metrics (repeatable; default every stored metric).
      --last N               Only the newest N runs.
      --threshold PCT        Smallest relative change that counts, 0 to 10000 (default 5).
      --max-pvalue P         Significance of a change point (default 0.0001).
      --window N             E-divisive window in runs (default 50).
    \(HistoryCommand.dbHelp)
      -h, --help             Show this help.

    EXAMPLE:
      hitch history report --branch main -o trend.html
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let output = try arguments.option("--output") ?? arguments.option("-o") else { throw CLIError("'hitch history report' needs -o FILE (see --help)") }
        let (branch, history, threshold, options) = try HistoryCommand.series(&arguments, command: name)
        let page = render(history, branch: branch, threshold: threshold, options: options)
        try writeOutput(page, to: output)
        return .ok
    }

    static func render(_ history: HistorySeries, branch: String, threshold: Double, options: ChangePointOptions) -> String {
        let result = HistoryCheck.check(history, branch: branch, thresholdPercent: threshold, options: options)
        let runs = history.runs.map { run in
            TrendReportInput.Run(id: run.id, commit: run.commit, branch: run.branch, time: HistoryCommand.time(run.timeMs),
                                 machine: "\(run.machine.name) (\(run.machine.cpuModel), \(run.machine.cores) cores, \(HistoryCommand.number(run.machine.refreshHz)) Hz)",
                                 tags: run.tags.keys.sorted().map { "\($0)=\(run.tags[$0] ?? "")" }, traces: run.traces)
        }
        // The recorded rate's hitch time ratio is the first chart (the page draws charts by figure group, in this order within one).
        let recordedRateHz = history.runs.last?.machine.refreshHz ?? 0
        let ordered = zip(history.metrics, result.metrics).enumerated().sorted {
            (HistoryCheck.leadPreference($0.element.0.metric, recordedRateHz: recordedRateHz), $0.offset)
                < (HistoryCheck.leadPreference($1.element.0.metric, recordedRateHz: recordedRateHz), $1.offset)
        }.map(\.element)
        let metrics = ordered.map { series, check in
            TrendReportInput.Metric(name: series.metric, values: series.values, changes: check.changePoints.map {
                TrendReportInput.Change(runIndex: $0.runIndex, verdict: $0.verdict, summary: HistoryShow.describe($0))
            })
        }
        let span = history.runs.isEmpty ? "no runs" : "\(history.runs.count) runs, \(HistoryCommand.time(history.runs.first!.timeMs)) to \(HistoryCommand.time(history.runs.last!.timeMs))"
        let groups = result.changes.map {
            TrendReportInput.ChangeGroup(runIndex: $0.runIndex, verdict: $0.verdict, summary: HistoryCheckCommand.describe($0), metrics: $0.metrics.map(\.metric))
        }
        return TrendReport.render(TrendReportInput(title: "hitch history: " + branch, subtitle: [span], runs: runs, metrics: metrics, changeGroups: groups))
    }
}
