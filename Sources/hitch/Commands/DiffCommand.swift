import Foundation
import HitchAnalysis
import HitchReport

// `hitch diff BASE NEW` or `hitch diff --base A --base B --new C --new D`: figure by figure, with
// Welch's t-test when both sides have two or more runs. Exit 1 on a regression beyond --threshold.
enum DiffCommand: Subcommand {
    static let name = "diff"
    static let summary = "Compare two runs figure by figure, with a significance test for repeated runs."
    static let help = """
    USAGE: hitch diff BASE NEW [options]
           hitch diff --base A.fxt --base B.fxt ... --new C.fxt --new D.fxt ... [options]

    Compares hitch, stage, view, decode and token figures (the metric paths of docs/METRICS.md).
    A change is a regression when it is worse by more than --threshold percent (and by more than a
    small absolute floor per figure). With two or more runs on each side, each run is analyzed on its
    own and the change must also be significant by Welch's t-test (p < --alpha), so noise does not fail CI.

    OPTIONS:
      --base TRACE           A baseline run (repeat for several runs).
      --new TRACE            A new run (repeat for several runs).
      --threshold PERCENT    Smallest change that counts (default 5).
      --alpha P              Significance level for repeated runs (default 0.05).
      --format FORMAT        text (default) or json.
      --refresh LIST         Refresh rates in Hz (default 60,120).
      --device-budget SIZE   Device memory budget (default 1.2GB).

    EXIT STATUS: 0 no regression, 1 a regression beyond the threshold, 2 bad usage or unreadable trace.

    EXAMPLE:
      hitch diff --base base1.fxt --base base2.fxt --base base3.fxt --new new1.fxt --new new2.fxt --new new3.fxt --threshold 10
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        var base = try arguments.options("--base")
        var new = try arguments.options("--new")
        let threshold = try arguments.number("--threshold", in: 0.0...10_000.0, default: 5.0)
        let alpha = try arguments.number("--alpha", in: 0.000001...0.5, default: 0.05)
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let options = try AnalysisCLI.options(&arguments)
        let positionals = try arguments.positionals()
        if base.isEmpty && new.isEmpty {
            guard positionals.count == 2 else {
                throw CLIError("'hitch diff' takes BASE NEW, or --base/--new for repeated runs (see --help)")
            }
            base = [positionals[0]]; new = [positionals[1]]
        } else {
            guard positionals.isEmpty else { throw CLIError("'hitch diff': with --base/--new, give every trace with one of them (extra: '\(positionals[0])')") }
            guard !base.isEmpty, !new.isEmpty else { throw CLIError("'hitch diff' needs at least one --base and one --new trace") }
        }
        // One analysis per run: the significance test needs each run's own figures.
        let baseAnalyses = try base.map { try AnalysisCLI.analyze(paths: [$0], options: options) }
        let newAnalyses = try new.map { try AnalysisCLI.analyze(paths: [$0], options: options) }
        let comparison = RunComparison.compare(base: baseAnalyses, new: newAnalyses, thresholdPercent: threshold, alpha: alpha)
        if format == "json" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            try AnalysisCLI.emit(String(decoding: try encoder.encode(comparison), as: UTF8.self) + "\n", to: nil)
        } else {
            try AnalysisCLI.emit(render(comparison), to: nil)
        }
        let regressions = comparison.regressions
        guard regressions.isEmpty else {
            writeError("\(regressions.count) regression\(regressions.count == 1 ? "" : "s") beyond \(Format.significant(threshold))%: " + regressions.map(\.metric).joined(separator: ", "))
            return .checkFailed
        }
        return .ok
    }

    static func render(_ c: Comparison) -> String {
        var out = "hitch diff: \(c.baseRuns) base run\(c.baseRuns == 1 ? "" : "s") vs \(c.newRuns) new run\(c.newRuns == 1 ? "" : "s"), threshold \(Format.significant(c.thresholdPercent))%"
        out += c.baseRuns >= 2 && c.newRuns >= 2 ? ", Welch's t-test at alpha \(c.alpha)\n" : " (one run a side: no significance test)\n"
        func line(_ f: FigureChange) -> String {
            let change = f.changePercent.map { ($0 >= 0 ? "+" : "") + Format.fixed($0, 1) + "%" } ?? "new"
            let p = f.pValue.map { "  p=" + Format.number($0, decimals: 4) } ?? ""
            return "  \(f.metric): \(Format.significant(f.baseMean)) -> \(Format.significant(f.newMean)) (\(change))\(p)"
        }
        let regressions = c.regressions, improvements = c.improvements
        out += "Regressions (\(regressions.count)):\n" + regressions.map(line).joined(separator: "\n") + (regressions.isEmpty ? "" : "\n")
        out += "Improvements (\(improvements.count)):\n" + improvements.map(line).joined(separator: "\n") + (improvements.isEmpty ? "" : "\n")
        let other = c.changes.filter { $0.verdict == "unchanged" && $0.baseMean != $0.newMean }
        out += "Within noise or threshold (\(other.count)):\n" + other.prefix(20).map(line).joined(separator: "\n") + (other.isEmpty ? "" : "\n")
        return out
    }
}
