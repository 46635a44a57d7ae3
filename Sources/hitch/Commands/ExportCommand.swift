import Foundation
import HitchAnalysis
import HitchReport
import HitchTrace

// `hitch export TRACE --format F`: the trace for other viewers. One renderer per format; adding a
// format is one more case in `export(_:format:...)`.
enum ExportCommand: Subcommand {
    static let name = "export"
    static let summary = "Convert a trace for other viewers: chrome (trace-event JSON) or folded stacks."
    static let formats = ["folded", "chrome"]
    static let help = """
    USAGE: hitch export TRACE --format folded|chrome [--from MS] [--to MS] [-o FILE]

    Converts a trace for other tools, in one streaming pass.

    FORMATS:
      folded    Collapsed stacks of the trace's samples (flamegraph.pl, speedscope, inferno):
                one line per distinct stack, `root;caller;...;leaf COUNT`, sorted.
      chrome    Chrome trace-event JSON (chrome://tracing, Perfetto UI, speedscope, Firefox
                Profiler): frames, stages, bodies, invalidations as flow arrows, ops with their
                arguments, counters, samples and thread names. `hitch import chrome` reads it back
                losslessly (docs/REPORTS.md). --from/--to apply to folded only.

    ARGUMENTS:
      TRACE                 An .fxt trace file.

    OPTIONS:
      --format FORMAT       One of: \(formats.joined(separator: ", ")) (required).
      --from MS             Only samples at or after MS milliseconds from the trace's first event.
      --to MS               Only samples before MS milliseconds from the trace's first event.
      -o, --output FILE     Write to FILE instead of standard output.
      -h, --help            Show this help.

    EXAMPLE:
      hitch export Traces/feed-naive-120hz.fxt --format folded --from 1500 --to 2500 -o naive.folded
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let format = try arguments.option("--format") else {
            throw CLIError("'hitch export' needs --format (one of: \(formats.joined(separator: ", ")))")
        }
        guard formats.contains(format) else {
            throw CLIError("option '--format' must be one of \(formats.joined(separator: ", ")); got '\(format)'")
        }
        let fromMs = try arguments.number("--from", in: 0.0...1e12, default: -1)
        let toMs = try arguments.number("--to", in: 0.0...1e12, default: -1)
        let longOutput = try arguments.option("--output")
        let output = try arguments.option("-o") ?? longOutput
        let paths = try arguments.positionals()
        guard paths.count == 1 else { throw CLIError("'hitch export' takes exactly one TRACE (see --help)") }
        if fromMs >= 0, toMs >= 0, toMs <= fromMs {
            throw CLIError("option '--to' (\(toMs)) must be after '--from' (\(fromMs))")
        }
        let path = paths[0]
        var reader = try openTrace(path)
        let file = try OutputFile(path: output)
        do {
            try export(&reader, format: format, fromNs: fromMs >= 0 ? Int64(fromMs * 1e6) : nil,
                       toNs: toMs >= 0 ? Int64(toMs * 1e6) : nil) { try file.write($0) }
        } catch let error as TraceReadError {
            file.abandon()
            throw CLIError("\(path): \(error)")
        } catch {
            file.abandon()
            throw error
        }
        try file.close()
        // What the reader skipped (a record cut off by a killed writer) is said, not silently lost.
        for warning in reader.warnings.prefix(10) { writeStandardError("hitch: warning: \(path): \(warning)\n") }
        return .ok
    }

    private static func openTrace(_ path: String) throws -> TraceReader {
        do { return try TraceReader(path: path) } catch { throw CLIError("\(path): \(error)") }
    }

    /// One renderer per format; `write` receives the output in pieces.
    static func export<Input: AnalysisInput>(_ input: inout Input, format: String, fromNs: Int64?, toNs: Int64?,
                                             write: @escaping (String) throws -> Void) throws {
        switch format {
        case "folded":
            try write(try FoldedStacks.render(&input, fromNs: fromNs, toNs: toNs))
        case "chrome":
            try ChromeTraceExporter.export(&input, sink: write)
        default:
            throw CLIError("option '--format' must be one of \(formats.joined(separator: ", ")); got '\(format)'")
        }
    }
}
