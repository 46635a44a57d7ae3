import HitchAnalysis
import HitchReport

// `hitch check TRACE... --budget FILE`: the CI gate. Exit 0 when every budget holds, 1 naming each
// broken budget, 2 for a bad budget file, a figure the trace does not have (unless the budget is
// optional), or an unreadable trace: a check never passes what it could not read.
enum CheckCommand: Subcommand {
    static let name = "check"
    static let summary = "Gate CI: compare a trace's figures with JSON budgets (exit 1 on a broken budget)."
    static let formats = ["text", "json", "markdown", "junit"]
    static let help = """
    USAGE: hitch check TRACE... --budget FILE [options]

    Analyzes the traces (several = runs of one workload, merged) and checks each budget in FILE
    against the figure it names. A metric the analysis does not define, or a figure this trace does
    not have, is an error naming the closest valid metrics, unless the budget says "optional": true
    (then it is skipped, and reported as skipped). Refresh rates named by budgets
    (hitches.90.…) are analyzed even when --refresh does not list them.

    BUDGET FILE (JSON; metrics are paths into the `hitch analyze --format json` output, docs/METRICS.md):
      {"budgets": [
        {"metric": "hitches.120.hitchTimeRatioMsPerS", "max": 5},
        {"metric": "stages[filter].p95Ms", "max": 4, "name": "filter stays fast"},
        {"metric": "decode.tokensPerSecond", "min": 20, "optional": true}
      ]}

    ARGUMENTS:
      TRACE                  Trace files: FXT (.fxt), or another tool's, imported on the way in ('hitch import --help').

    OPTIONS:
      --budget FILE          The budget file (required).
      --format FORMAT        text (default), json (the budgets and their values), markdown, junit (one test case per budget).
      --merge                Merge traces of different workloads or refresh rates.
    \(CommandContext.evidenceHelp)
    \(CommandContext.optionsHelp)
      -o, --output FILE      Write the report to FILE (- for standard output, the default).
      -h, --help             Show this help.

    A trace without frames, with fewer than --min-frames, or cut short is refused (exit 2): a check
    never passes a run that recorded too little. An import on which Hitch and the recording platform
    disagree about more than 5% of the frames fails (exit 1) with that reason, whatever its budgets
    say, unless --accept-disagreement is given. A budget on a percentile taken from fewer values
    than it needs (P95: 100) passes or fails as asked, with a warning: gate it on repeated runs
    (several TRACEs are merged) or on a figure with more samples.

    EXIT STATUS: 0 all budgets hold, 1 a budget is broken, 2 bad budget file, missing figure, unreadable trace or too little to judge.

    EXAMPLES:
      hitch check Traces/feed-tuned-120hz.fxt --budget .ci/budgets.json
      hitch check Traces/feed-tuned-120hz.fxt --budget .ci/budgets.json --format junit -o budgets.xml
    """

    /// What `check --format json` writes: the budgets and their values, not the whole analysis.
    struct Report: Codable {
        var traces: [String]
        var passed: Int
        var failed: Int
        var skipped: Int
        var budgets: [BudgetOutcome]
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let budgetPath = try arguments.option("--budget") else { throw CLIError("'hitch check' needs --budget FILE (see --help)") }
        let format = try arguments.choice("--format", formats + ["html"], default: "text")
        if format == "html" {
            throw CLIError("'hitch check' has no html format: for the HTML report run 'hitch report TRACE -o FILE.html'; check writes text, json, markdown or junit")
        }
        let merge = arguments.flag("--merge")
        let evidence = try CommandContext.evidenceRule(&arguments)
        var context = try CommandContext.parse(&arguments, command: name)
        let paths = try arguments.positionals(name, count: 1...Int.max, what: "at least one TRACE")
        // The budget file first: a typo in it fails fast, before a long analysis.
        let budgets = try loadBudgets(budgetPath)
        for rate in BudgetFile.refreshRates(in: budgets) where !context.options.refreshRatesHz.contains(rate) {
            context.options.refreshRatesHz.append(rate)
        }
        let analysis = try context.analyze(paths, merge: merge)
        try CommandContext.requireEvidence(analysis, evidence)
        var outcomes = try evaluate(budgets, analysis, budgetPath)
        // A gate does not grade an import it cannot trust: the distrust is the first broken budget.
        if !evidence.acceptPlatformDisagreement, let distrust = BudgetOutcome.platformDistrust(in: analysis) { outcomes.insert(distrust, at: 0) }
        for outcome in outcomes { if let warning = outcome.warning { writeWarning(warning) } }
        let text: String
        switch format {
        case "json":
            text = try JSONOutput.text(Report(traces: paths, passed: outcomes.filter { $0.status == .passed }.count,
                                              failed: outcomes.filter { $0.status == .failed }.count,
                                              skipped: outcomes.filter { $0.status == .skipped }.count, budgets: outcomes))
        case "markdown", "junit":
            guard let renderer = Renderers.named(format) else { throw CLIError("unknown format '\(format)'") }
            text = try renderer.render(ReportInput(analysis: analysis, title: "hitch check", budgets: outcomes))
        default:
            text = outcomes.map { "\(label($0.status))  \($0.name): \($0.message)" }.joined(separator: "\n") + "\n"
        }
        try context.write(text, inputs: paths + [budgetPath])
        return exitCode(for: outcomes)
    }

    static func label(_ status: BudgetStatus) -> String {
        switch status {
        case .passed: "pass"
        case .failed: "FAIL"
        case .skipped: "skip"
        }
    }

    static func loadBudgets(_ path: String) throws -> [Budget] {
        do { return try BudgetFile.load(path: path) } catch { throw CLIError(error.description) }
    }

    static func evaluate(_ budgets: [Budget], _ analysis: Analysis, _ path: String) throws -> [BudgetOutcome] {
        do { return try BudgetFile.evaluate(budgets, against: analysis, path: path) } catch { throw CLIError(error.description) }
    }

    /// 1 naming every broken budget on stderr; 0 otherwise.
    static func exitCode(for outcomes: [BudgetOutcome]) -> ExitCode {
        let broken = outcomes.filter { $0.status == .failed }
        guard !broken.isEmpty else { return .ok }
        writeError("\(broken.count) budget\(broken.count == 1 ? "" : "s") broken: " + broken.map { $0.message }.joined(separator: "; "))
        return .checkFailed
    }
}
