#if canImport(Glibc)
import Glibc
#endif
import HitchAnalysis
import HitchImport

// Traces other tools wrote, taken where an FXT trace is: the analysis commands sniff each input's
// format (or take `--input-format`), import it into a temporary FXT file through the same importer
// `hitch import` runs, and analyze that. The analyzer never knows where a trace came from.

enum TraceInputs {
    /// What `--input-format` accepts.
    static let formats = ["fxt", "chrome"] + ImportFormat.allCases.map(\.rawValue)

    static let optionHelp = """
      --input-format F       Read every TRACE as F: fxt, chrome, \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", "))
                             (default: recognised from each file's first bytes; docs/IMPORT.md).
    \(processHelp)
    """

    /// `--process`'s help line, the same in `hitch import` and every analysis command.
    static let processHelp = """
      --process NAME|PID     Perfetto: the one app to read from a trace with frames of several (a pid, a
                             process name or the package its layer names); a trace with several and no
                             --process is refused with the candidates listed.
    """

    /// `--process NAME|PID`, checked: the app to read from a Perfetto trace with several.
    static func processSelection(_ arguments: inout Arguments) throws -> PerfettoProcessSelection? {
        guard let process = try arguments.option("--process") else { return nil }
        guard !process.isEmpty else { throw CLIError("option '--process' takes a process name or pid, e.g. --process com.example.app") }
        return PerfettoProcessSelection(process)
    }

    /// `--input-format`'s value, checked.
    static func checkedFormat(_ value: String) throws -> String {
        guard formats.contains(value) else {
            let closest = Spelling.closest(to: value, among: formats, limit: 1)
            throw CLIError("option '--input-format' must be one of \(formats.joined(separator: ", ")); got '\(value)'"
                           + (closest.isEmpty ? "" : " (did you mean '\(closest[0])'?)"))
        }
        return value
    }

    /// A trace ready for the FXT reader: `path` as the user named it, `fxtPath` where to read it.
    struct Prepared {
        var path: String
        var fxtPath: String
        var isTemporary: Bool
    }

    /// The format of `path`: `forced`, or recognised from its first bytes (FXT when nothing else fits,
    /// so the reader names what is wrong with it).
    static func format(of path: String, forced: String?) -> String {
        if let forced { return forced }
        let head = TraceImport.firstBytes(of: path, count: 4096)
        if head.starts(with: [0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00]) { return "fxt" }
        if TraceFiles.looksLikeJSON(head[...]) { return "chrome" }
        return ImportFormat.sniff(head[...])?.rawValue ?? "fxt"
    }

    /// Imports every input that is not FXT into a temporary file; `cleanUp` removes them. `process`
    /// (`--process`) picks the app of each Perfetto input; given with no Perfetto input, it is refused.
    static func prepare(_ paths: [String], forced: String?, process: PerfettoProcessSelection? = nil) throws -> [Prepared] {
        let formats = paths.map { format(of: $0, forced: forced) }
        if let process, !formats.contains(ImportFormat.perfetto.rawValue) {
            throw CLIError("option '--process' (\(process)) picks an app in a Perfetto trace, and no input is one: "
                           + zip(paths, formats).map { "'\($0)' is \($1)" }.joined(separator: ", "))
        }
        var prepared: [Prepared] = []
        do {
            for (path, format) in zip(paths, formats) {
                if format == "fxt" {
                    prepared.append(Prepared(path: path, fxtPath: path, isTemporary: false))
                    continue
                }
                let temporary = try temporaryFXT()
                prepared.append(Prepared(path: path, fxtPath: temporary, isTemporary: true))
                let summary = try importFile(format: format, inputs: [path], output: temporary,
                                             options: ImportOptions(process: format == ImportFormat.perfetto.rawValue ? process : nil))
                for warning in summary.warnings.prefix(3) { writeStandardError("hitch: warning: \(path): \(warning)\n") }
            }
        } catch {
            cleanUp(prepared)
            throw error
        }
        return prepared
    }

    static func cleanUp(_ prepared: [Prepared]) {
        for input in prepared where input.isTemporary { unlink(input.fxtPath) }
    }

    /// Runs the importer for `format` (chrome, framestats, ...) into the FXT file `output`. Errors
    /// are one line naming the input.
    static func importFile(format: String, inputs: [String], output: String, options: ImportOptions = ImportOptions()) throws -> ImportSummary {
        if format == "chrome" {
            let trace: ImportedTrace
            do {
                trace = try ChromeTraceImporter.importFile(path: inputs[0])
            } catch {
                throw CLIError("'\(inputs[0])': \(error)")
            }
            // An import with nothing in it would analyze as an empty run: refuse it, naming why.
            guard !trace.events.isEmpty else {
                throw CLIError("'\(inputs[0])' holds no trace events (no traceEvents list, or an empty one"
                               + (trace.warnings.isEmpty ? "" : "; \(trace.warnings.count) skipped") + "): nothing to import")
            }
            var summary = ImportSummary()
            do {
                summary.bytes = try trace.writeFXT(to: output)
            } catch {
                throw CLIError("cannot write '\(output)': \(error)")
            }
            summary.events = trace.events.count
            summary.frames = trace.events.reduce(0) { count, event in
                if case .frameBegan = event.payload { return count + 1 }
                return count
            }
            summary.warnings = trace.warnings
            return summary
        }
        guard let importFormat = ImportFormat(rawValue: format) else {
            throw CLIError("unknown input format '\(format)'; expected one of: \(formats.joined(separator: ", "))")
        }
        do {
            return try TraceImport.run(importFormat, inputs: inputs, output: output, options: options)
        } catch let error as ImportError {
            throw CLIError(error.description)
        }
    }

    private static func temporaryFXT() throws -> String {
        let directory = (getenv("TMPDIR").map { String(cString: $0) }).flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/hitch-import-XXXXXX.fxt").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 4) }
        guard fd >= 0 else { throw CLIError("cannot create a temporary file in \(directory) for the import: \(String(cString: strerror(errno)))") }
        close(fd)
        return String(cString: template.map { CChar(bitPattern: UInt8(bitPattern: $0)) })
    }
}
