import Foundation
import HitchAnalysis
import HitchReport
import HitchTrace

enum ReportCommand: Subcommand {
    static let name = "report"
    static let summary = "Write a self-contained HTML report (one trace, or BASE NEW side by side)."
    static let help = """
    USAGE: hitch report TRACE... -o FILE.html [options]

    Writes one self-contained HTML page (inline CSS and SVG, no network) from the analysis of the
    traces: verdicts at each refresh rate, the frame timeline, frame-time histogram, pipeline stages,
    view updates and invalidations, flame graphs of main-thread samples, and LLM decode figures,
    each section only where the trace has the data. The same traces always give the same bytes.

    With exactly two traces the report compares them: BASE on the left, NEW on the right, changes
    highlighted. Use --merge to analyze two or more traces together as runs of one report instead.

    ARGUMENTS:
      TRACE                 FXT trace files (from `hitch record`, the recorder, or `hitch import`).

    OPTIONS:
      -o, --output FILE     Where to write the report (required).
      --refresh LIST        Refresh rates to judge at, in Hz (default 60,120).
      --title TEXT          The page title (default: the trace names).
      --merge               With two or more traces: one report of all runs, not a comparison.
      --threshold PERCENT   Comparison: smallest change that counts (default 5, as hitch diff).
      --device-budget-mb N  Device memory budget for the LLM memory bar (default 1200).
      -h, --help            Show this help.

    EXAMPLES:
      hitch report Traces/feed-naive-120hz.fxt -o Reports/feed-naive.html
      hitch report Traces/feed-naive-120hz.fxt Traces/feed-tuned-120hz.fxt -o Reports/feed-compare.html
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let output = try arguments.option("--output") ?? arguments.option("-o")
        let options = try ReportOptions.parse(&arguments)
        let title = try arguments.option("--title")
        let merge = arguments.flag("--merge")
        let threshold = try arguments.number("--threshold", in: 0.0...1000.0, default: 5.0)
        let traces = try arguments.positionals()
        guard !traces.isEmpty else { throw CLIError("'hitch report' needs at least one TRACE (see --help)") }
        guard let output else { throw CLIError("'hitch report' needs -o FILE.html") }

        let html: String
        if traces.count == 2 && !merge {
            let base = try TraceAnalysis.analyze([traces[0]], options: options)
            let new = try TraceAnalysis.analyze([traces[1]], options: options)
            let comparison = RunComparison.compare(base: [base], new: [new], thresholdPercent: threshold)
            html = HTMLReport.renderComparison(base: base, new: new, comparison: comparison, baseLabel: traces[0], newLabel: traces[1],
                                               title: title ?? "\(TraceAnalysis.displayName(traces[0])) vs \(TraceAnalysis.displayName(traces[1]))")
        } else {
            let analysis = try TraceAnalysis.analyze(traces, options: options)
            html = HTMLReport.render(analysis, title: title ?? traces.map(TraceAnalysis.displayName).joined(separator: " + "))
        }
        try TraceAnalysis.write(html, to: output)
        writeStandardError("wrote \(output)\n")
        return .ok
    }
}

/// The analyzer options the report and demo commands share.
enum ReportOptions {
    static func parse(_ arguments: inout Arguments) throws -> AnalyzerOptions {
        var options = AnalyzerOptions()
        if let list = try arguments.option("--refresh") {
            let rates = list.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard !rates.isEmpty, rates.allSatisfy({ $0 != nil && $0! >= 1 && $0! <= 1000 }) else {
                throw CLIError("option '--refresh' must be a comma-separated list of rates from 1 to 1000 Hz; got '\(list)'")
            }
            options.refreshRatesHz = rates.map { $0! }
        }
        let budgetMB = try arguments.number("--device-budget-mb", in: 1...1_000_000, default: 1200)
        options.deviceBudgetBytes = UInt64(budgetMB) * 1_000_000
        return options
    }
}

/// Reading traces into the analyzer, for the commands that render its results.
enum TraceAnalysis {
    /// One streaming pass over each trace (each trace is one run), errors as one CLI line.
    static func analyze(_ paths: [String], options: AnalyzerOptions) throws -> Analysis {
        do {
            return try Analyzer.analyze(paths: paths, options: options)
        } catch let error as TraceReadError {
            let chromeHint = paths.contains { $0.hasSuffix(".json") } && error.offset == 0
                ? " (for Chrome trace JSON, convert first: hitch import chrome FILE.json -o FILE.fxt)" : ""
            throw CLIError("\(error)" + chromeHint)
        } catch {
            throw CLIError("\(paths.joined(separator: ", ")): \(error)")
        }
    }

    /// "Traces/feed-naive-120hz.fxt" -> "feed-naive-120hz".
    static func displayName(_ path: String) -> String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        if let dot = file.lastIndex(of: "."), dot != file.startIndex { return String(file[..<dot]) }
        return file
    }

    /// Writes a report, creating its directory. A regular file (or a new one) is replaced
    /// atomically, so a report is never left half-written; anything else at the path (a device, a
    /// pipe) is written in place, never replaced by a renamed file (F6 in docs/RELIABILITY.md).
    static func write(_ text: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            try writeOutput(text, to: path)
            return
        }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url, options: .atomic)
        } catch {
            throw CLIError("cannot write '\(path)': \(error.localizedDescription)")
        }
    }
}
