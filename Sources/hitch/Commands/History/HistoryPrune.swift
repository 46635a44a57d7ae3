#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchHistory
import HitchReport

enum HistoryPrune: Subcommand {
    static let name = "prune"
    static let summary = "Delete runs older than N days (retention)."
    static let help = """
    USAGE: hitch history prune --older-than DAYS [--branch B] [--db PATH|URL]

    Deletes runs added more than DAYS days ago (with their figures and tags), in one transaction.

    OPTIONS:
      --older-than DAYS      Delete runs added more than DAYS days ago (required).
      --branch B             Only this branch's runs (default every branch).
    \(HistoryCommand.dbHelp)
      -h, --help             Show this help.

    EXAMPLE:
      hitch history prune --older-than 365 --db "$HITCH_DB"
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let text = try arguments.option("--older-than") else { throw CLIError("'hitch history prune' needs --older-than DAYS (see --help)") }
        guard let days = Double(text), days.isFinite, days >= 0 else { throw CLIError("option '--older-than' must be a number of days; got '\(text)'") }
        let branch = try arguments.option("--branch")
        let store = try HistoryCommand.openStore(&arguments, access: .readWrite)
        defer { store.close() }
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch history prune' takes no arguments (see --help)") }
        let cutoff = Int64((Date().timeIntervalSince1970 - days * 86_400) * 1000)
        let removed = try HistoryCommand.store { () throws(HistoryError) in try store.prune(olderThanMs: cutoff, branch: branch) }
        try writeStandardOutputLine("removed \(removed) run\(removed == 1 ? "" : "s") older than \(text) days")
        return .ok
    }
}
