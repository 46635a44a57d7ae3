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

    With exactly two traces the report compares them: BASE on the left, NEW on the right, opening
    with the verdict hitch diff prints. Use --merge to analyze two or more traces together as runs
    of one report instead.

    ARGUMENTS:
      TRACE                  Trace files: FXT (from `hitch record` or the recorder), or another tool's, imported
                             on the way in ('hitch import --help').

    OPTIONS:
      -o, --output FILE      Where to write the report (required; - for standard output).
      --title TEXT           The page title (default: the trace names).
      --merge                With two or more traces: one report of all runs, not a comparison
                             (also when their workloads or refresh rates differ).
      --threshold PERCENT    Comparison: smallest change that counts (default 5, as hitch diff).
    \(CommandContext.optionsHelp)
      -h, --help             Show this help.

    EXAMPLES:
      hitch report Traces/feed-naive-120hz.fxt -o Reports/feed-naive.html
      hitch report Traces/feed-naive-120hz.fxt Traces/feed-tuned-120hz.fxt -o Reports/feed-compare.html
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let title = try arguments.option("--title")
        let merge = arguments.flag("--merge")
        let threshold = try arguments.thresholdPercent()
        let context = try CommandContext.parse(&arguments, command: name)
        let traces = try arguments.positionals(name, count: 1...Int.max, what: "at least one TRACE")
        guard let output = context.output else { throw CLIError("'hitch report' needs -o FILE.html") }

        let html: String
        // Two traces compare; an Instruments export's tables are one trace (`TraceInputs.traces`).
        let sides = try TraceInputs.traces(traces, forced: context.inputFormat).map(\.paths)
        if sides.count == 2 && !merge {
            // Each side on its own: comparing a trace with itself is allowed (it shows no change).
            let analyses = try sides.map { try context.analyzeEach($0)[0] }
            analyses.forEach(CommandContext.warnIfCutShort)
            let comparison = RunComparison.compare(base: [analyses[0]], new: [analyses[1]], thresholdPercent: threshold)
            let labels = sides.map { $0.joined(separator: " + ") }
            html = HTMLReport.renderComparison(base: analyses[0], new: analyses[1], comparison: comparison, baseLabel: labels[0], newLabel: labels[1],
                                               title: title ?? "\(TraceAnalysis.displayName(sides[0][0])) vs \(TraceAnalysis.displayName(sides[1][0]))")
        } else {
            let analysis = try context.analyze(traces, merge: merge)
            CommandContext.warnIfCutShort(analysis)
            html = HTMLReport.render(analysis, title: title ?? traces.map(TraceAnalysis.displayName).joined(separator: " + "))
        }
        try context.write(html, inputs: traces)
        if !OutputFile.isStandardOutput(output) { writeStandardError("wrote \(output)\n") }
        return .ok
    }
}

/// Naming and writing for the commands that render whole reports (report, demo).
enum TraceAnalysis {
    /// One streaming pass over each trace (each trace is one run), errors as one CLI line.
    static func analyze(_ paths: [String], options: AnalyzerOptions) throws -> Analysis {
        try CommandContext(command: "demo", options: options, output: nil).analyze(paths, merge: true)
    }

    /// "Traces/feed-naive-120hz.fxt" -> "feed-naive-120hz".
    static func displayName(_ path: String) -> String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        if let dot = file.lastIndex(of: "."), dot != file.startIndex { return String(file[..<dot]) }
        return file
    }

    /// Writes a report through the checked writer, creating its directory.
    static func write(_ text: String, to path: String) throws {
        try writeOutput(text, to: path)
    }
}
