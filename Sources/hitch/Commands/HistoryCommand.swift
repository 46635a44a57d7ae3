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
    static let hasNestedSubcommands = true
    static let name = "history"
    static let summary = "Results over time: store runs (SQLite/PostgreSQL), find change points, trend page."
    static let help = """
    USAGE: hitch history <add|list|show|check|report|prune|bench> [options] [--db PATH|postgres://…]

    SUBCOMMANDS:
      add       Analyze traces and store them as one run of a commit.
      list      List stored runs (or, with --metrics, the stored metric names).
      show      One metric's values along a branch, with its change points.
      check     Change-point detection per metric; exit 1 when the newest change is a regression.
      report    A self-contained HTML trend page: one chart per metric, change points marked.
      prune     Delete runs older than N days (retention).
      bench     Time check and report on a generated history (JSON).

    The database is --db (default .hitch/history.sqlite, or $HITCH_DB): an SQLite file, created on
    first use, or a postgres:// URL shared by a fleet of CI runners. docs/HISTORY.md.
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        try dispatch(&arguments, among: [HistoryAdd.entry, HistoryList.entry, HistoryShow.entry, HistoryCheckCommand.entry,
                                         HistoryReport.entry, HistoryPrune.entry, HistoryBench.entry], parent: "history")
    }

    static let dbHelp = "  --db PATH|URL          SQLite file or postgres:// URL (default $HITCH_DB, else \(HistoryStore.defaultLocation))."

    /// Opens the store named by --db, $HITCH_DB or the default; its errors become one line, exit 2.
    /// Only `add` creates a database; the commands that read open it read-only.
    static func openStore(_ arguments: inout Arguments, access: HistoryStore.Access = .readOnly) throws -> HistoryStore {
        let location = try arguments.option("--db") ?? ProcessInfo.processInfo.environment["HITCH_DB"] ?? HistoryStore.defaultLocation
        return try store { () throws(HistoryError) in try HistoryStore(location: location, access: access) }
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

enum HistoryAdd: Subcommand {
    static let name = "add"
    static let summary = "Analyze traces and store them as one run."
    static let help = """
    USAGE: hitch history add TRACE... --commit SHA [--branch B] [--tag key=value]... [--machine NAME] [--db PATH|URL]

    Analyzes the traces (several = merged runs, as in hitch analyze) and stores their figures under
    their metric paths (the names budgets and hitch diff use), in one transaction. The run id is a
    hash of the traces' content, the commit and the machine: adding the same run twice stores it once.

    OPTIONS:
      --commit SHA           The commit the traces were recorded at (required).
      --branch B             Its branch (default main).
      --tag key=value        Any label (repeatable): --tag runner=ci-3 --tag os=debian12.
      --machine NAME         The machine's name (default the host name).
      --merge                Merge traces of different workloads into one run anyway.
    \(CommandContext.evidenceHelp)
    \(HistoryCommand.dbHelp)
    \(CommandContext.optionsHelp)

    A trace without frames, with fewer than --min-frames, or cut short is refused (exit 2) before
    the database is opened: a run that recorded too little would become the baseline.

    EXAMPLE:
      hitch history add Traces/feed-tuned-120hz.fxt --commit "$(git rev-parse HEAD)" --branch main --tag runner=ci-1
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let commit = try arguments.option("--commit"), !commit.isEmpty else { throw CLIError("'hitch history add' needs --commit SHA (see --help)") }
        let branch = try arguments.option("--branch") ?? "main"
        guard !branch.isEmpty else { throw CLIError("option '--branch' must not be empty") }
        var tags: [String: String] = [:]
        for tag in try arguments.options("--tag") {
            guard let equals = tag.firstIndex(of: "="), equals != tag.startIndex else {
                throw CLIError("option '--tag' takes key=value; got '\(tag)'")
            }
            tags[String(tag[..<equals])] = String(tag[tag.index(after: equals)...])
        }
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

enum HistoryList: Subcommand {
    static let name = "list"
    static let summary = "List stored runs, or metric names."
    static let help = """
    USAGE: hitch history list [--branch B] [--last N] [--metrics] [--format text|json|markdown] [--db PATH|URL]

    OPTIONS:
      --branch B             Only this branch's runs (default every branch).
      --last N               Only the newest N runs.
      --metrics              List the stored metric names instead.
      --format FORMAT        text (default), json, markdown.
    \(HistoryCommand.dbHelp)
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

enum HistoryShow: Subcommand {
    static let name = "show"
    static let summary = "One metric along a branch, with change points."
    static let help = """
    USAGE: hitch history show METRIC [--branch main] [--last N] [--format text|json|markdown] [--db PATH|URL]

    Prints the metric's value at each run of the branch, oldest first, and the change points found.

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

enum HistoryCheckCommand: Subcommand {
    static let name = "check"
    static let summary = "Change points per metric; exit 1 when the newest is a regression."
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

enum HistoryReport: Subcommand {
    static let name = "report"
    static let summary = "A self-contained HTML trend page."
    static let help = """
    USAGE: hitch history report -o FILE [--branch main] [--metric M]... [--last N] [--threshold PCT] [--db PATH|URL]

    One chart per metric along the branch's runs, change points marked (red: regressions), each
    point linking to its run's details. Self-contained (no network), names escaped, and the same
    bytes for the same history. A long history is down-sampled to 150 columns; change points are
    always drawn.

    EXAMPLE:
      hitch history report --branch main -o trend.html
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let output = try arguments.option("--output") ?? arguments.option("-o") else { throw CLIError("'hitch history report' needs -o FILE (see --help)") }
        let branch = try arguments.option("--branch") ?? "main"
        let metrics = try arguments.options("--metric")
        let threshold = try arguments.thresholdPercent()
        let last = try HistoryCommand.last(&arguments)
        let options = try HistoryCommand.detectorOptions(&arguments)
        let store = try HistoryCommand.openStore(&arguments)
        defer { store.close() }
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch history report' takes no arguments (see --help)") }
        try HistoryCommand.requireBranch(branch, in: store)
        let history = try HistoryCommand.store { () throws(HistoryError) in
            try store.series(branch: branch, metrics: metrics.isEmpty ? nil : metrics, last: last)
        }
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

enum HistoryPrune: Subcommand {
    static let name = "prune"
    static let summary = "Delete runs older than N days."
    static let help = """
    USAGE: hitch history prune --older-than DAYS [--branch B] [--db PATH|URL]

    Deletes runs added more than DAYS days ago (with their figures and tags), in one transaction.

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

enum HistoryBench: Subcommand {
    static let name = "bench"
    static let summary = "Time check and report on a generated history."
    static let help = """
    USAGE: hitch history bench [--runs 100000] [--metrics 50] [--db PATH] [--keep]

    Fills an SQLite history (a temporary file unless --db) with generated runs on one branch, each
    metric a noisy series with a few steps, then times what `hitch history check` and `report` do
    (open, read the branch, detect change points, judge / render), wall and CPU time (all threads).
    Prints JSON.
    """
    struct Figures: Encodable {
        var runs, metrics: Int
        var fillSeconds, checkSeconds, reportSeconds: Double
        /// CPU time of every thread of the process (the machine is shared: wall time counts other processes' slices).
        var checkCPUSeconds, reportCPUSeconds: Double
        var changePoints, regressions, reportBytes: Int
        var databaseBytes: Int
        var loadAverage: String
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let runCount = try arguments.number("--runs", in: 10...10_000_000, default: 100_000)
        let metricCount = try arguments.number("--metrics", in: 1...1000, default: 50)
        let keep = arguments.flag("--keep")
        let given = try arguments.option("--db")
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch history bench' takes no arguments (see --help)") }
        let path = given ?? NSTemporaryDirectory() + "hitch-history-bench-\(getpid()).sqlite"
        if given == nil { unlink(path) }
        defer { if given == nil && !keep { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } } }
        var cpu = 0.0
        func processCPUSeconds() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        func seconds(_ body: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds, startCPU = processCPUSeconds()
            try body()
            cpu = processCPUSeconds() - startCPU
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        let fill = try seconds {
            let store = try HistoryCommand.store { () throws(HistoryError) in try HistoryStore(location: path) }
            defer { store.close() }
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            func uniform() -> Double {   // SplitMix64 in [-1, 1)
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return Double((z ^ (z >> 31)) >> 11) / Double(1 << 52) - 1
            }
            let machine = MachineInfo(name: "bench", cpuModel: "generated", cores: 2, refreshHz: 120)
            var batch: [RunRecord] = []
            for index in 0..<runCount {
                let metrics = (0..<metricCount).map { m -> MetricValue in
                    // Every metric steps up 50% at 3/4 of the history and metric 0 also at 1/4.
                    var level = 10.0 + Double(m)
                    if index >= runCount * 3 / 4 { level *= 1.5 }
                    if m == 0 && index >= runCount / 4 { level *= 1.2 }
                    return MetricValue(metric: "bench.metric\(m < 10 ? "0" : "")\(m).valueMs", value: level + uniform(), absoluteFloor: 0.1)
                }
                let id = RunIdentity.runID(traceHashes: [String(index)], commit: "c\(index)", machine: machine)
                batch.append(RunRecord(id: id, commit: "c\(index)", branch: "main", timeMs: 1_700_000_000_000 + Int64(index) * 60_000,
                                       machine: machine, metrics: metrics))
                if batch.count == 5_000 || index == runCount - 1 {
                    _ = try HistoryCommand.store { () throws(HistoryError) in try store.add(batch) }
                    batch.removeAll(keepingCapacity: true)
                }
            }
        }
        var result: HistoryCheckResult?
        let check = try seconds {
            let store = try HistoryCommand.store { () throws(HistoryError) in try HistoryStore(location: path) }
            defer { store.close() }
            let history = try HistoryCommand.store { () throws(HistoryError) in try store.series(branch: "main") }
            result = HistoryCheck.check(history, branch: "main", thresholdPercent: RunComparison.defaultThresholdPercent)
        }
        let checkCPU = cpu
        var bytes = 0
        let report = try seconds {
            let store = try HistoryCommand.store { () throws(HistoryError) in try HistoryStore(location: path) }
            defer { store.close() }
            let history = try HistoryCommand.store { () throws(HistoryError) in try store.series(branch: "main") }
            let page = HistoryReport.render(history, branch: "main", threshold: RunComparison.defaultThresholdPercent, options: ChangePointOptions())
            let output = path + ".html"
            try writeOutput(page, to: output)
            bytes = page.utf8.count
            unlink(output)
        }
        let reportCPU = cpu
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        let load = BenchClock.loadAverages().joined(separator: " ")
        let figures = Figures(runs: runCount, metrics: metricCount, fillSeconds: fill, checkSeconds: check, reportSeconds: report,
                              checkCPUSeconds: checkCPU, reportCPUSeconds: reportCPU, changePoints: result?.metrics.reduce(0) { $0 + $1.changePoints.count } ?? 0,
                              regressions: result?.regressions.count ?? 0, reportBytes: bytes, databaseBytes: size, loadAverage: load)
        try writeStandardOutput(JSONOutput.text(figures))
        return .ok
    }
}
