#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchHistory
import HitchReport

enum HistoryAdd: Subcommand {
    static let name = "add"
    static let summary = "Analyze traces and store them as one run of a commit."
    static let help = """
    USAGE: hitch history add TRACE... --commit SHA [--branch B] [--tag key=value]... [--machine NAME] [--db PATH|URL]

    Analyzes the traces (several = merged runs, as in hitch analyze) and stores their figures under
    their metric paths (the names budgets and hitch diff use), in one transaction. The run id is a
    hash of the traces' content, the commit and the machine: adding the same run twice stores it once.

    ARGUMENTS:
      TRACE...               The run's traces (.fxt, or another tool's, imported as hitch analyze does).

    OPTIONS:
      --commit SHA           The commit the traces were recorded at (required).
      --branch B             Its branch (default main).
      --tag key=value        Any label (repeatable): --tag runner=ci-3 --tag os=debian12.
      --machine NAME         The machine's name (default the host name).
      --merge                Merge traces of different workloads into one run anyway.
    \(CommandContext.evidenceHelp)
    \(HistoryCommand.dbHelp)
    \(CommandContext.optionsHelp)
      -h, --help             Show this help.

    A trace without frames, with fewer than --min-frames, or cut short is refused (exit 2) before
    the database is opened: a run that recorded too little would become the baseline.

    EXAMPLE:
      hitch history add Traces/feed-tuned-120hz.fxt --commit "$(git rev-parse HEAD)" --branch main --tag runner=ci-1
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let commit = try arguments.option("--commit"), !commit.isEmpty else { throw CLIError("'hitch history add' needs --commit SHA (see --help)") }
        let branch = try arguments.option("--branch") ?? "main"
        guard !branch.isEmpty else { throw CLIError("option '--branch' must not be empty") }
        let tags = try HistoryCommand.tags(&arguments)
        let machineName = try arguments.option("--machine")
        let merge = arguments.flag("--merge")
        let evidence = try CommandContext.evidenceRule(&arguments)
        let context = try CommandContext.parse(&arguments, command: "history add", takesOutput: false)
        let location = try arguments.option("--db")
        let paths = try arguments.positionals()
        guard !paths.isEmpty else { throw CLIError("'hitch history add' needs at least one TRACE (see --help)") }
        // Check, hash and analyze first: a bad trace fails before the database is touched.
        try context.checkTraces(paths)
        let hashes = try HistoryCommand.store { () throws(HistoryError) in try paths.map { path throws(HistoryError) in try RunIdentity.contentHash(path: path) } }
        let analysis = try context.analyze(paths, merge: merge)
        try CommandContext.requireEvidence(analysis, evidence)
        let machine = RunIdentity.thisMachine(name: machineName, analysis: analysis)
        let run = RunRecord(id: RunIdentity.runID(traceHashes: hashes, commit: commit, machine: machine), commit: commit,
                            branch: branch, timeMs: Int64((Date().timeIntervalSince1970 * 1000).rounded()), machine: machine,
                            tags: tags, traces: paths.map { ($0 as NSString).lastPathComponent },
                            metrics: RunIdentity.metrics(of: analysis))
        var rest = Arguments(location.map { ["--db", $0] } ?? [])
        let store = try HistoryCommand.openStore(&rest, access: .create)
        defer { store.close() }
        let added = try HistoryCommand.store { () throws(HistoryError) in try store.add(run) }
        try writeStandardOutputLine(added ? "added run \(run.id.prefix(12)) (\(run.metrics.count) metrics, commit \(commit), branch \(branch))"
                    : "run \(run.id.prefix(12)) is already stored (same traces, commit and machine); nothing written")
        return .ok
    }
}
