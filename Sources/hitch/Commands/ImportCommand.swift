#if canImport(Glibc)
import Glibc
#endif
import HitchImport

enum ImportCommand: Subcommand {
    static let name = "import"
    static let summary = "Convert another tool's trace (Chrome JSON, framestats, Perfetto, xctrace) into an FXT trace."
    static let help = """
    USAGE: hitch import FORMAT FILE... -o FILE.fxt [options]

    Reads a trace another tool wrote and writes an FXT trace the analyzer reads: the same frames,
    stages and scheduling records the recorder writes, plus the platform's own verdict on each
    frame (docs/IMPORT.md says what each field becomes and what is lost). 'hitch analyze', 'check',
    'diff', 'report' and 'history add' also take these files directly.

    ARGUMENTS:
      FORMAT                 chrome      Chrome trace-event JSON (the array or {"traceEvents": [...]} form).
                             framestats  'adb shell dumpsys gfxinfo PACKAGE framestats' output (Android 6 and later).
                             perfetto    A Perfetto protobuf trace with the android.surfaceflinger.frametimeline
                                         data source (Android 12 and later), atrace or track-event slices, sched.
                             xctrace     'xctrace export' XML of an Instruments trace: hitches (and hitches-updates,
                                         hitches-renders, hitches-gpu, hitches-framewait), display-surface-swap,
                                         display-vsyncs-interval, device-display-info, time-profile, os-signpost,
                                         swiftui-updates, swiftui-causes, swiftui-full-causes, swiftui-update-groups
                                         tables (one or several files, one table or several each).
      FILE                   The file to read (xctrace: one or more exports, read as one trace).

    OPTIONS:
      -o, --output FILE      The FXT file to write (required; never the input).
      --refresh HZ           framestats: the display's refresh rate, for dumps before Android 12, which do
                             not record it (default: inferred from the frames' vsync spacing; said when the
                             spacing is not whole periods of it). A dump that records its rate (FrameInterval,
                             Android 12+) and a --refresh that contradicts it is refused.
    \(TraceInputs.processHelp)
                             framestats: the process (package or pid) whose window to import; without it, the
                             window with the most frames of the whole dump. The window read is said.
      -h, --help             Show this help.

    EXAMPLES:
      hitch import chrome trace.json -o trace.fxt
      adb shell dumpsys gfxinfo com.example.app framestats > frames.txt
      hitch import framestats frames.txt -o frames.fxt
      hitch import perfetto trace.pftrace -o trace.fxt
      hitch import perfetto trace.pftrace --process com.example.app -o app.fxt
      hitch import xctrace hitches.xml swaps.xml profile.xml -o run.fxt
      hitch analyze frames.fxt
    """

    static let formats = TraceInputs.formats.filter { $0 != "fxt" }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let output = try arguments.output()
        let refresh = try arguments.option("--refresh")
        let process = try TraceInputs.processSelection(&arguments)
        let words = try arguments.positionals(name, count: 1...Int.max, what: "a format and a file: \(formats.joined(separator: "|")) FILE")
        let format = words[0]
        guard formats.contains(format) else {
            throw CLIError("unknown import format '\(format)'; expected one of: \(formats.joined(separator: ", "))")
        }
        let inputs = Array(words.dropFirst())
        guard inputs.count == 1 || (format == ImportFormat.xctrace.rawValue && !inputs.isEmpty) else {
            throw CLIError(format == ImportFormat.xctrace.rawValue ? "'hitch import xctrace' needs at least one EXPORT.xml" : "'hitch import \(format)' needs exactly one FILE")
        }
        guard let output else { throw CLIError("'hitch import \(format)' needs -o FILE.fxt") }
        var seen: [(String, FileIdentity)] = []
        for path in inputs {
            if FileKind(path) == .directory {
                throw CLIError("'\(path)' is a directory: give the file to import (e.g. \(path.hasSuffix("/") ? path : path + "/")trace)")
            }
            // The same export twice would count its rows twice (every frame and hitch doubled).
            if let identity = FileIdentity(path) {
                if let earlier = seen.first(where: { $0.1 == identity }) {
                    throw CLIError("'\(path)' is the same file as '\(earlier.0)': each export counts once; give each file once")
                }
                seen.append((path, identity))
            }
        }
        var options = ImportOptions()
        if let refresh {
            guard format == "framestats" else { throw CLIError("option '--refresh' applies to 'hitch import framestats' only") }
            let rates = try Quantities.rates(refresh, option: "--refresh")
            guard rates.count == 1 else { throw CLIError("option '--refresh' takes one rate in Hz for an import, e.g. --refresh 90") }
            options.periodNs = Int64((1e9 / rates[0]).rounded())
        }
        if let process {
            guard format == ImportFormat.perfetto.rawValue || format == ImportFormat.framestats.rawValue else {
                throw CLIError("option '--process' applies to 'hitch import perfetto' and 'hitch import framestats' only")
            }
            options.process = process
        }
        // The checked writer: the FXT goes to a temporary file beside the target, renamed on success.
        let file = try OutputFile(path: output, inputs: inputs)
        let summary: ImportSummary
        do {
            summary = try TraceInputs.importFile(format: format, inputs: inputs, output: file.stagingPath ?? "/dev/stdout", options: options)
            try file.close()
        } catch {
            file.abandon()
            throw error
        }
        // An import of several files names the file in each warning itself.
        for warning in summary.warnings.prefix(10) { writeStandardError("hitch: warning: \(summary.namesFiles ? "" : inputs[0] + ": ")\(warning)\n") }
        let hangs = summary.hangs > 0 ? ", \(summary.hangs) hangs" : ""
        writeStandardError("wrote \(output): \(summary.frames) frames\(hangs), \(summary.events) events, \(summary.bytes) bytes\n")
        return .ok
    }
}
