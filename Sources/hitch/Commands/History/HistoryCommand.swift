#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchHistory
import HitchReport

// `hitch history <add|list|show|check|report|prune|bench>`: every run's figures kept in a results
// store (SQLite by default, PostgreSQL for a fleet), regressions found as change points along a
// branch, and a trend page. docs/HISTORY.md.
enum HistoryCommand: Subcommand {
    static let name = "history"
    static let summary = "Results over time: store runs (SQLite/PostgreSQL), find change points, trend page."
    static let help = """
    USAGE: hitch history <add|list|show|check|report|prune|bench> [options] [--db PATH|postgres://…]

    \(subcommandSection("SUBCOMMANDS", subcommands))

    The database is --db (default .hitch/history.sqlite, or $HITCH_DB): an SQLite file, created on
    first use, or a postgres:// URL shared by a fleet of CI runners. docs/HISTORY.md.

    OPTIONS:
      -h, --help   Show this help ('hitch history <subcommand> --help' for the subcommand's options).

    EXAMPLES:
      hitch history add Traces/feed-tuned-120hz.fxt --commit "$(git rev-parse HEAD)"
      hitch history check
    """
    static let subcommands = [HistoryAdd.entry, HistoryList.entry, HistoryShow.entry, HistoryCheckCommand.entry,
                              HistoryReport.entry, HistoryPrune.entry, HistoryBench.entry]
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        try dispatch(&arguments, among: subcommands, parent: name)
    }

    static let dbHelp = "  --db PATH|URL          SQLite file or postgres:// URL (default $HITCH_DB, else \(HistoryStore.defaultLocation))."

    /// Opens the store named by --db, $HITCH_DB or the default; its errors become one line, exit 2.
    /// Only `add` creates a database; the commands that read open it read-only.
    static func openStore(_ arguments: inout Arguments, access: HistoryStore.Access = .readOnly) throws -> HistoryStore {
        let location = try arguments.option("--db") ?? ProcessInfo.processInfo.environment["HITCH_DB"] ?? HistoryStore.defaultLocation
        return try store { () throws(HistoryError) in try HistoryStore(location: location, access: access) }
    }

    /// What check and report read: a branch's series (--branch, --metric..., --last) from the store
    /// --db names, and the detector's settings (--threshold, --max-pvalue, --window). `command`
    /// names the subcommand in the error for a stray argument.
    static func series(_ arguments: inout Arguments, command: String)
        throws -> (branch: String, history: HistorySeries, threshold: Double, options: ChangePointOptions) {
        let branch = try arguments.option("--branch") ?? "main"
        let metrics = try arguments.options("--metric")
        let threshold = try arguments.thresholdPercent()
        let last = try HistoryCommand.last(&arguments)
        let options = try HistoryCommand.detectorOptions(&arguments)
        let store = try HistoryCommand.openStore(&arguments)
        defer { store.close() }
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch history \(command)' takes no arguments (see --help)") }
        try HistoryCommand.requireBranch(branch, in: store)
        let history = try HistoryCommand.store { () throws(HistoryError) in
            try store.series(branch: branch, metrics: metrics.isEmpty ? nil : metrics, last: last)
        }
        return (branch, history, threshold, options)
    }

    /// What the runs can and cannot show: too few to judge, with the number needed, or how many of
    /// the newest runs a change could still hide in.
    static func coverage(_ result: HistoryCheckResult) -> String {
        let side = result.runsNeeded / 2
        if result.tooFewRuns {
            return "too few runs to find change points: \(result.runs) on branch \(result.branch), at least \(result.runsNeeded) needed (\(side) either side of a change)"
        }
        return "a change among the newest \(side - 1) runs shows once \(side) runs follow it (p < \(Format.significant(result.maxPValue)) for \(result.runs) runs)"
    }

    /// A branch without stored runs is an error (a typo must not read as "no change"), naming the
    /// closest branch the store has.
    static func requireBranch(_ branch: String, in store: HistoryStore) throws {
        let branches = try self.store { () throws(HistoryError) in try store.branches() }
        guard !branches.contains(branch) else { return }
        guard !branches.isEmpty else { throw CLIError("no runs stored yet: add one with 'hitch history add TRACE --commit SHA --branch \(branch)'") }
        let closest = Spelling.closest(to: branch, among: branches, limit: 1)
        throw CLIError("no runs on branch '\(branch)'" + (closest.isEmpty ? "" : "; did you mean '\(closest[0])'?")
                       + " (branches: \(branches.prefix(20).joined(separator: ", "))\(branches.count > 20 ? ", …" : ""))")
    }

    /// Runs a store operation, turning its error into the CLI's one line and exit 2.
    static func store<T>(_ body: () throws(HistoryError) -> T) throws -> T {
        do { return try body() } catch { throw CLIError(error.description) }
    }

    /// "2026-12-01T15:04:05Z", the same on every machine.
    static func time(_ ms: Int64) -> String {
        var seconds = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    static func number(_ value: Double) -> String { Format.significant(value) }

    /// A markdown table cell: pipes and line breaks would break the table.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    static func last(_ arguments: inout Arguments) throws -> Int? {
        guard let text = try arguments.option("--last") else { return nil }
        guard let value = Int(text), value > 0 else { throw CLIError("option '--last' must be a positive number of runs; got '\(text)'") }
        return value
    }

    static func detectorOptions(_ arguments: inout Arguments) throws -> ChangePointOptions {
        var options = ChangePointOptions()
        if let text = try arguments.option("--max-pvalue") {
            guard let value = Double(text), (1e-12...0.5).contains(value) else {
                throw CLIError("option '--max-pvalue' must be a number from 1e-12 to 0.5; got '\(text)'")
            }
            options.maxPValue = value
            options.scalesWithLength = false
        }
        options.windowLength = try arguments.number("--window", in: 6...100_000, default: options.windowLength)
        return options
    }
}
