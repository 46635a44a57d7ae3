import Foundation
import HitchAnalysis
import HitchReport
import HitchTrace

// `hitch analyze TRACE...`: the main CI job. Several traces are several runs of one workload,
// merged (figures aggregate; frames never join across files).
enum AnalyzeCommand: Subcommand {
    static let name = "analyze"
    static let summary = "Hitch time ratio at 60/120 Hz, stage cost, view updates, decode bandwidth."
    static let help = """
    USAGE: hitch analyze TRACE... [--format text|json|markdown|junit|html] [--refresh 60,120] [--device-budget 1.2GB]

    Reads each trace in one streaming pass and reports: hitches judged at the recorded refresh rate
    and replayed at each --refresh rate (hitch time ratio graded on Apple's test scale and Xcode
    Organizer's field scale), per-stage pipeline cost, view body evaluations, the invalidation graph,
    hitch attribution, and for LLM traces decode bandwidth against the recorded peak.
    Several traces are merged as repeated runs. Definitions: docs/METRICS.md.

    ARGUMENTS:
      TRACE                  FXT trace files (.fxt).

    OPTIONS:
      --format FORMAT        text (default), json (stable schema), markdown (CI summary), junit, html.
      --refresh LIST         Refresh rates in Hz to judge at, comma separated (default 60,120).
      --device-budget SIZE   Device memory budget for the LLM memory figures (default 1.2GB).
      -o, --output FILE      Write the report to FILE instead of stdout.
      -h, --help             Show this help.

    EXAMPLE:
      hitch analyze Traces/feed-naive-120hz.fxt --format json --refresh 60,90,120
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", Renderers.formats, default: "text")
        let options = try AnalysisCLI.options(&arguments)
        let output = try arguments.option("--output") ?? arguments.option("-o")
        let paths = try arguments.positionals()
        guard !paths.isEmpty else { throw CLIError("'hitch analyze' needs at least one TRACE (see --help)") }
        let analysis = try AnalysisCLI.analyze(paths: paths, options: options)
        guard let renderer = Renderers.named(format) else { throw CLIError("unknown format '\(format)'") }
        let title = paths.count == 1 ? "hitch analyze" : "hitch analyze (\(paths.count) runs)"
        let text = try renderer.render(ReportInput(analysis: analysis, title: title))
        try AnalysisCLI.emit(text, to: output)
        return .ok
    }
}

/// Option parsing and plumbing shared by analyze, check and diff.
enum AnalysisCLI {
    static func options(_ arguments: inout Arguments) throws -> AnalyzerOptions {
        var options = AnalyzerOptions()
        if let list = try arguments.option("--refresh") {
            options.refreshRatesHz = try parseRates(list)
        }
        if let budget = try arguments.option("--device-budget") {
            options.deviceBudgetBytes = try parseBytes(budget, flag: "--device-budget")
        }
        return options
    }

    static func parseRates(_ list: String) throws -> [Double] {
        let rates = try list.split(separator: ",", omittingEmptySubsequences: false).map { word -> Double in
            let text = word.trimmingCharacters(in: .whitespaces)
            guard let rate = Double(text), rate.isFinite, rate >= 1, rate <= 1000 else {
                throw CLIError("option '--refresh' takes refresh rates in Hz from 1 to 1000, comma separated (e.g. 60,120); got '\(list)'")
            }
            return rate
        }
        var unique: [Double] = []
        for rate in rates where !unique.contains(rate) { unique.append(rate) }
        return unique
    }

    /// "1.2GB", "800MB", "512MiB", "1200000000".
    static func parseBytes(_ text: String, flag: String) throws -> UInt64 {
        let units: [(String, Double)] = [("GiB", 1_073_741_824), ("MiB", 1_048_576), ("KiB", 1024), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("B", 1)]
        var number = text.trimmingCharacters(in: .whitespaces)
        var scale = 1.0
        for (suffix, value) in units where number.uppercased().hasSuffix(suffix.uppercased()) {
            number = String(number.dropLast(suffix.count)).trimmingCharacters(in: .whitespaces)
            scale = value
            break
        }
        guard let value = Double(number), value.isFinite, value > 0, value * scale < 1.8e19 else {
            throw CLIError("option '\(flag)' must be a size such as 1.2GB, 800MB or 512MiB; got '\(text)'")
        }
        return UInt64(value * scale)
    }

    /// Analyzes traces as merged runs; an unreadable trace is one line and exit 2.
    static func analyze(paths: [String], options: AnalyzerOptions) throws -> Analysis {
        let progress = ProgressBar(label: "analyzing", runs: paths.count)
        defer { progress.finish() }
        do {
            return try Analyzer.analyze(paths: paths, options: options) { run, fraction in progress.update(run: run, fraction: fraction) }
        } catch let error as TraceReadError {
            throw CLIError(error.description)
        }
    }

    /// Writes `text` to `path` (or standard output); see `writeOutput`.
    static func emit(_ text: String, to path: String?) throws {
        try writeOutput(text, to: path)
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal (never in CI logs).
final class ProgressBar {
    private let label: String
    private let runs: Int
    private let enabled: Bool
    private var lastDrawn = -1
    private var drew = false

    init(label: String, runs: Int) {
        self.label = label
        self.runs = max(1, runs)
        enabled = standardErrorIsTerminal
    }

    func update(run: Int, fraction: Double) {
        guard enabled else { return }
        let overall = (Double(run) + min(max(fraction, 0), 1)) / Double(runs)
        let percent = Int(overall * 100)
        guard percent != lastDrawn else { return }
        lastDrawn = percent
        let width = 30
        let filled = Int(overall * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let which = runs > 1 ? " trace \(run + 1)/\(runs)" : ""
        writeStandardError("\r\(label)\(which) [\(bar)] \(percent)%")
        drew = true
    }

    func finish() {
        if drew { writeStandardError("\r" + String(repeating: " ", count: 60) + "\r") }
    }
}
