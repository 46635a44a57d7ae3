#if canImport(Glibc)
import Glibc
#endif
import HitchTrace

enum ImportCommand: Subcommand {
    static let name = "import"
    static let summary = "Convert another tool's trace (Chrome trace-event JSON) into an FXT trace."
    static let help = """
    USAGE: hitch import chrome FILE.json -o FILE.fxt

    Reads Chrome trace-event JSON (the array form or the {"traceEvents": [...]} object form) and
    writes an FXT trace the analyzer reads. Traces written by `hitch export --format chrome` come
    back with everything the analyzer uses (frames, stages, bodies, invalidations, ops, tokens,
    counters, samples, metadata); other producers' slices, instants, counters and samples map to
    generic intervals, instants, counters and samples.

    ARGUMENTS:
      chrome                The input format (the one format offered).
      FILE.json             The Chrome trace to read.

    OPTIONS:
      -o, --output FILE     The FXT file to write (required; never the input).
      -h, --help            Show this help.

    EXAMPLES:
      hitch import chrome trace.json -o trace.fxt
      hitch analyze trace.fxt
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let output = try arguments.output()
        let words = try arguments.positionals(name, count: 1...2, what: "a format and a file: chrome FILE.json")
        guard words[0] == "chrome" else { throw CLIError("unknown import format '\(words[0])'; expected one of: chrome") }
        guard words.count == 2 else { throw CLIError("'hitch import chrome' needs exactly one FILE.json") }
        guard let output else { throw CLIError("'hitch import chrome' needs -o FILE.fxt") }
        let path = words[1]
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw CLIError("'\(path)' is a directory: give the Chrome JSON file to import (e.g. \(path.hasSuffix("/") ? path : path + "/")trace.json)")
        }
        let trace: ImportedTrace
        do {
            trace = try ChromeTraceImporter.importFile(path: path)
        } catch {
            throw CLIError("'\(path)': \(error)")
        }
        // An import with nothing in it would analyze as an empty run: refuse it here, naming why.
        guard !trace.events.isEmpty else {
            throw CLIError("'\(path)' holds no trace events (no traceEvents list, or an empty one"
                           + (trace.warnings.isEmpty ? "" : "; \(trace.warnings.count) skipped") + "): nothing to import")
        }
        // The checked writer: the FXT goes to a temporary file beside the target, renamed on success.
        let file = try OutputFile(path: output, inputs: [path])
        let bytes: UInt64
        do {
            bytes = try trace.writeFXT(to: file.stagingPath ?? "/dev/stdout")
            try file.close()
        } catch let error as CLIError {
            file.abandon()
            throw error
        } catch {
            file.abandon()
            throw CLIError("cannot write '\(output)': \(error)")
        }
        for warning in trace.warnings.prefix(10) { writeStandardError("hitch: warning: \(path): \(warning)\n") }
        writeStandardError("wrote \(output): \(trace.events.count) events, \(bytes) bytes\n")
        return .ok
    }
}
