#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchHistory
import HitchReport

enum HistoryList: Subcommand {
    static let name = "list"
    static let summary = "List stored runs (or, with --metrics, the stored metric names)."
    static let help = """
    USAGE: hitch history list [--branch B] [--last N] [--metrics] [--format text|json|markdown] [--db PATH|URL]

    OPTIONS:
      --branch B             Only this branch's runs (default every branch).
      --last N               Only the newest N runs.
      --metrics              List the stored metric names instead.
      --format FORMAT        text (default), json, markdown.
    \(HistoryCommand.dbHelp)
      -h, --help             Show this help.

    EXAMPLE:
      hitch history list --branch main --last 20
    """
    struct RunLine: Encodable { var id, commit, branch, time, machine, cpuModel: String; var cores: Int; var refreshHz: Double; var tags: [String: String]; var traces: [String] }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let branch = try arguments.option("--branch")
        let last = try HistoryCommand.last(&arguments)
        let metricsOnly = arguments.flag("--metrics")
        let format = try arguments.choice("--format", ["text", "json", "markdown"], default: "text")
        let store = try HistoryCommand.openStore(&arguments)
        defer { store.close() }
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch history list' takes no arguments (see --help)") }
        if let branch { try HistoryCommand.requireBranch(branch, in: store) }
        if metricsOnly {
            let names = try HistoryCommand.store { () throws(HistoryError) in try store.metricNames() }
            switch format {
            case "json": try writeStandardOutput(JSONOutput.text(names))
            case "markdown": try writeStandardOutputLine((["| metric |", "|---|"] + names.map { "| `\(HistoryCommand.cell($0))` |" }).joined(separator: "\n"))
            default: for name in names { try writeStandardOutputLine(name) }
            }
            return .ok
        }
        let runs = try HistoryCommand.store { () throws(HistoryError) in try store.runs(branch: branch, last: last) }
        let lines = runs.map { RunLine(id: $0.id, commit: $0.commit, branch: $0.branch, time: HistoryCommand.time($0.timeMs), machine: $0.machine.name,
                                       cpuModel: $0.machine.cpuModel, cores: $0.machine.cores, refreshHz: $0.machine.refreshHz, tags: $0.tags, traces: $0.traces) }
        switch format {
        case "json": try writeStandardOutput(JSONOutput.text(lines))
        case "markdown":
            try writeStandardOutputLine("| time | branch | commit | machine | tags | run |\n|---|---|---|---|---|---|")
            for l in lines {
                let tags = l.tags.keys.sorted().map { "\($0)=\(l.tags[$0] ?? "")" }.joined(separator: " ")
                try writeStandardOutputLine("| \(l.time) | \(HistoryCommand.cell(l.branch)) | `\(HistoryCommand.cell(l.commit))` | \(HistoryCommand.cell(l.machine)) | \(HistoryCommand.cell(tags)) | `\(l.id.prefix(12))` |")
            }
        default:
            if lines.isEmpty { try writeStandardOutputLine("no runs stored" + (branch.map { " on branch \($0)" } ?? "")) }
            for l in lines {
                let tags = l.tags.keys.sorted().map { "\($0)=\(l.tags[$0] ?? "")" }.joined(separator: " ")
                try writeStandardOutputLine("\(l.time)  \(l.branch)  \(l.commit)  \(l.machine)  \(l.id.prefix(12))" + (tags.isEmpty ? "" : "  " + tags))
            }
        }
        return .ok
    }
}
