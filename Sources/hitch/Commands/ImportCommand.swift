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
      FILE.json             The Chrome trace to read.

    OPTIONS:
      -o, --output FILE     The FXT file to write (required).
      -h, --help            Show this help.

    EXAMPLE:
      hitch import chrome trace.json -o trace.fxt
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let output = try arguments.option("--output") ?? arguments.option("-o")
        let words = try arguments.positionals()
        guard let format = words.first else { throw CLIError("'hitch import' needs a format: chrome (see --help)") }
        guard format == "chrome" else { throw CLIError("unknown import format '\(format)'; expected one of: chrome") }
        guard words.count == 2 else { throw CLIError("'hitch import chrome' needs exactly one FILE.json") }
        guard let output else { throw CLIError("'hitch import chrome' needs -o FILE.fxt") }
        let trace: ImportedTrace
        do {
            trace = try ChromeTraceImporter.importFile(path: words[1])
        } catch {
            throw CLIError("\(error)")
        }
        let bytes: UInt64
        do {
            bytes = try trace.writeFXT(to: output)
        } catch {
            throw CLIError("\(error)")
        }
        for warning in trace.warnings.prefix(10) { writeStandardError("hitch: warning: \(warning)\n") }
        writeStandardError("wrote \(output): \(trace.events.count) events, \(bytes) bytes\n")
        return .ok
    }
}
