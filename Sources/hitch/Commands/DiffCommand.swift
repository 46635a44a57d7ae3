import HitchAnalysis
import HitchReport

// `hitch diff BASE NEW` or `hitch diff --base A --base B --new C --new D`: figure by figure, with a
// verdict first. Exit 1 only when the verdict is worse (docs/METRICS.md "Comparing runs": the hitch
// time ratio decides when it moved, the other judged figures when it did not).
enum DiffCommand: Subcommand {
    static let name = "diff"
    static let summary = "Compare two runs: a verdict first, then figure by figure (exit 1 on a regression)."
    static let help = """
    USAGE: hitch diff BASE NEW [options]
           hitch diff --base A.fxt --base B.fxt ... --new C.fxt --new D.fxt ... [options]

    Compares two runs (or two sets of repeated runs) and prints the verdict first: better, worse or
    no change. Totals are compared per frame or per second, so a run that delivers more frames is
    not worse for it. Hitch figures and main-thread figures are judged; the rest (off-main stages,
    self times, decode, tokens) is shown for information. The hitch time ratio and the app's share
    of it decide the verdict when they moved ("better, though hitches/s rose ..."); the other judged
    figures decide when they did not. Figures only one side has are listed apart.
    A change counts when it is beyond --threshold percent and a small absolute floor per figure;
    with two or more runs a side, each run is analyzed on its own and the change must also be
    significant by Welch's t-test (p < --alpha). Definitions: docs/METRICS.md "Comparing runs".

    ARGUMENTS:
      BASE NEW               The baseline and the new trace (.fxt, or another tool's: 'hitch import --help').

    OPTIONS:
      --base TRACE           A baseline run (repeat for several runs).
      --new TRACE            A new run (repeat for several runs).
      --threshold PERCENT    Smallest change that counts, 0 to 10000 (default 5).
      --alpha P              Significance level for repeated runs (default 0.05).
      --format FORMAT        text (default), json, markdown (CI summary), junit (one test case per judged figure).
      --cross-workload       Compare traces whose metadata names different workloads (refused by default).
      --cross-rate           Compare traces recorded at different refresh rates (refused by default).
    \(CommandContext.evidenceHelp)
    \(CommandContext.optionsHelp)
      -o, --output FILE      Write the report to FILE (- for standard output, the default).
      -h, --help             Show this help.

    Traces of different workloads or recorded rates, and traces without frames or cut short, are
    refused (exit 2): a comparison of those would say better or worse about nothing.

    EXIT STATUS: 0 better or no change, 1 worse, 2 bad usage or unreadable trace.

    EXAMPLES:
      hitch diff Traces/feed-naive-120hz.fxt Traces/feed-tuned-120hz.fxt
      hitch diff --base b1.fxt --base b2.fxt --base b3.fxt --new n1.fxt --new n2.fxt --new n3.fxt --format markdown -o diff.md
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        var base = try arguments.options("--base")
        var new = try arguments.options("--new")
        let threshold = try arguments.thresholdPercent()
        let alpha = try arguments.number("--alpha", in: 0.000001...0.5, default: 0.05)
        let format = try arguments.choice("--format", ComparisonReport.formats, default: "text")
        let acrossWorkloads = arguments.flag("--cross-workload"), acrossRates = arguments.flag("--cross-rate")
        let evidence = try CommandContext.evidenceRule(&arguments)
        let context = try CommandContext.parse(&arguments, command: name)
        if base.isEmpty && new.isEmpty {
            let positionals = try arguments.positionals(name, count: 2...2, what: "BASE NEW (two traces), or --base/--new for repeated runs")
            base = [positionals[0]]; new = [positionals[1]]
        } else {
            _ = try arguments.positionals(name, count: 0...0, what: "every trace with --base or --new when those are used")
            guard !base.isEmpty, !new.isEmpty else { throw CLIError("'hitch diff' needs at least one --base and one --new trace") }
        }
        // One analysis per run: the significance test needs each run's own figures.
        let baseAnalyses = try context.analyzeEach(base)
        let newAnalyses = try context.analyzeEach(new)
        try TraceFiles.checkComparable(Array(zip(base + new, baseAnalyses + newAnalyses)), acrossWorkloads: acrossWorkloads, acrossRates: acrossRates)
        for (path, analysis) in zip(base + new, baseAnalyses + newAnalyses) {
            try CommandContext.requireEvidence(analysis, evidence)
            try context.requireAskedRates(analysis, path: path)
        }
        let comparison = RunComparison.compare(base: baseAnalyses, new: newAnalyses, thresholdPercent: threshold, alpha: alpha)
        let text = try ComparisonReport.render(ComparisonInput(comparison: comparison, basePaths: base, newPaths: new), format: format)
        try context.write(text, inputs: base + new)
        guard comparison.verdict.outcome != .worse else {
            // The count is every regression (as the report's counter says); the figures named are
            // the ones that decided the verdict.
            let count = comparison.regressions.count
            writeError("\(count) regression\(count == 1 ? "" : "s") beyond \(Format.number(threshold, decimals: 2))%, decided by: "
                       + comparison.decidingChanges.map { ComparisonReport.change($0) }.joined(separator: "; "))
            return .checkFailed
        }
        return .ok
    }
}
