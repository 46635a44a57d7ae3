import Foundation
import HitchAnalysis
import HitchReport
import HitchImport
import HitchReader

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
                losslessly (docs/REPORTS.md). --from/--to apply to folded only (an error with chrome).
      Swift functions are shown simplified (module, type, function), as Instruments shows them.

    ARGUMENTS:
      TRACE                 An .fxt trace file.

    OPTIONS:
      --format FORMAT       One of: \(formats.joined(separator: ", ")) (required).
      --from MS             Only samples at or after MS milliseconds from the trace's first event.
      --to MS               Only samples before MS milliseconds from the trace's first event.
      --full-names          Show Swift functions with their full demangled names.
      -o, --output FILE     Write to FILE (- for standard output, the default); never one of the inputs.
      -h, --help            Show this help.

    EXAMPLES:
      hitch export Traces/feed-naive-120hz.fxt --format chrome -o naive.json
      hitch export Traces/feed-naive-120hz.fxt --format folded --from 1500 --to 2500 -o naive.folded
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let format = try arguments.option("--format") else {
            throw CLIError("'hitch export' needs --format (one of: \(formats.joined(separator: ", ")))")
        }
        guard formats.contains(format) else {
            throw CLIError("option '--format' must be one of \(formats.joined(separator: ", ")); got '\(format)'")
        }
        let fromMs = try arguments.option("--from").map { try milliseconds($0, option: "--from") }
        let toMs = try arguments.option("--to").map { try milliseconds($0, option: "--to") }
        let fullNames = arguments.flag("--full-names")
        let output = try arguments.output()
        let path = try arguments.positionals(name, count: 1...1, what: "exactly one TRACE")[0]
        if format == "chrome", fromMs != nil || toMs != nil {
            throw CLIError("options '--from' and '--to' apply to --format folded only; the chrome export is always the whole trace")
        }
        if let fromMs, let toMs, toMs <= fromMs {
            throw CLIError("option '--to' (\(toMs)) must be after '--from' (\(fromMs))")
        }
        try TraceFiles.check(path)
        // Refused before the trace is opened: writing the input while reading it destroys both.
        let file = try OutputFile(path: output, inputs: [path])
        do {
            var reader = try TraceReader(path: path)
            try export(&reader, format: format, fromNs: fromMs.map { Int64($0 * 1e6) }, toNs: toMs.map { Int64($0 * 1e6) },
                       fullNames: fullNames) { try file.write($0) }
            try file.close()
            // What the reader skipped (a record cut off by a killed writer) is said, not silently lost.
            for warning in reader.warnings.prefix(10) { writeStandardError("hitch: warning: \(path): \(warning)\n") }
        } catch let error as TraceReadError {
            file.abandon()
            throw TraceFiles.error(error, path: path)
        } catch {
            file.abandon()
            throw error
        }
        return .ok
    }

    static func milliseconds(_ text: String, option: String) throws -> Double {
        guard let value = Double(text.trimmingSpaces), value.isFinite, value >= 0, value <= 1e12 else {
            throw CLIError("option '\(option)' takes milliseconds from the trace's first event (0 or more); got '\(text)'")
        }
        return value
    }

    /// One renderer per format; `write` receives the output in pieces.
    static func export<Input: TraceInput>(_ input: inout Input, format: String, fromNs: Int64?, toNs: Int64?, fullNames: Bool = false,
                                             write: @escaping (String) throws -> Void) throws {
        switch format {
        case "folded":
            try write(try FoldedStacks.render(&input, fromNs: fromNs, toNs: toNs, fullNames: fullNames))
        case "chrome":
            try ChromeTraceExporter.export(&input, fullNames: fullNames, sink: write)
        default:
            throw CLIError("option '--format' must be one of \(formats.joined(separator: ", ")); got '\(format)'")
        }
    }
}
