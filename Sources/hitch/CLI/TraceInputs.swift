#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchImport

// Traces other tools wrote, taken where an FXT trace is: the analysis commands sniff each input's
// format (or take `--input-format`), import it into a temporary FXT file through the same importer
// `hitch import` runs, and analyze that. The analyzer never knows where a trace came from.

enum TraceInputs {
    /// What `--input-format` accepts.
    static let formats = ["fxt"] + ImportFormat.allCases.map(\.rawValue)

    static let optionHelp = """
      --input-format F       Read every TRACE as F: \(formats.joined(separator: ", "))
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

    /// A trace ready for the FXT reader: `path` as the user named it (an Instruments export's tables
    /// joined by " + "), `fxtPath` where to read it.
    struct Prepared {
        var path: String
        var fxtPath: String
        var isTemporary: Bool
    }

    /// The traces `paths` make, in order, as `hitch import` reads them: an Instruments export is
    /// several files (a table or more each), so every xctrace input of one command is one trace;
    /// every other file is a trace of its own. Two xctrace files that hold the same table cannot be
    /// one export: refused, with the commands that import each export on its own.
    static func traces(_ paths: [String], forced: String?) throws -> [(paths: [String], format: String)] {
        var traces: [(paths: [String], format: String)] = []
        var xctraceIndex: Int?
        var tables: [String: String] = [:]   // table schema -> the file that holds it
        for path in paths {
            let format = format(of: path, forced: forced)
            guard format == ImportFormat.xctrace.rawValue else { traces.append(([path], format)); continue }
            for table in XctraceTables.schemas(in: path) {
                if let other = tables[table], other != path {
                    throw CLIError("'\(other)' and '\(path)' both hold Instruments' '\(table)' table, so they are not tables of one export: "
                                   + "import each export into a trace of its own ('hitch import xctrace TABLE.xml… -o run.fxt') and give the .fxt files")
                }
                tables[table] = path
            }
            if let index = xctraceIndex { traces[index].paths.append(path) } else { xctraceIndex = traces.count; traces.append(([path], format)) }
        }
        return traces
    }

    /// The format of `path`: `forced`, or recognised from its first bytes (FXT when nothing else fits,
    /// so the reader names what is wrong with it).
    static func format(of path: String, forced: String?) -> String {
        if let forced { return forced }
        let head = TraceImport.firstBytes(of: path, count: 4096)
        if head.starts(with: [0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00]) { return "fxt" }
        return ImportFormat.sniff(head[...])?.rawValue ?? "fxt"
    }

    /// Imports every input that is not FXT into a temporary file; `cleanUp` removes them. `process`
    /// (`--process`) picks the app of each Perfetto input; given with no Perfetto input, it is refused.
    static func prepare(_ paths: [String], forced: String?, process: PerfettoProcessSelection? = nil) throws -> [Prepared] {
        let traces = try traces(paths, forced: forced)
        if let process, !traces.contains(where: { $0.format == ImportFormat.perfetto.rawValue }) {
            throw CLIError("option '--process' (\(process)) picks an app in a Perfetto trace, and no input is one: "
                           + traces.flatMap { trace in trace.paths.map { "'\($0)' is \(trace.format)" } }.joined(separator: ", "))
        }
        var prepared: [Prepared] = []
        do {
            for trace in traces {
                let name = trace.paths.joined(separator: " + ")
                if trace.format == "fxt" {
                    prepared.append(Prepared(path: name, fxtPath: trace.paths[0], isTemporary: false))
                    continue
                }
                let temporary = try temporaryFXT()
                prepared.append(Prepared(path: name, fxtPath: temporary, isTemporary: true))
                let summary = try importFile(format: trace.format, inputs: trace.paths, output: temporary,
                                             options: ImportOptions(process: trace.format == ImportFormat.perfetto.rawValue ? process : nil))
                for warning in summary.warnings.prefix(3) { writeStandardError("hitch: warning: \(name): \(warning)\n") }
            }
        } catch {
            cleanUp(prepared)
            throw error
        }
        return prepared
    }

    /// The one trace `paths` make, for a command that reads exactly one (info, export): an FXT file,
    /// another tool's file imported on the way in, or an Instruments export's tables. Checked as the
    /// analysis commands check their inputs; `cleanUp` it when done.
    static func one(_ paths: [String], command: String) throws -> Prepared {
        for path in paths { try TraceFiles.check(path, allowingImports: true) }
        let traces = try traces(paths, forced: nil)
        guard traces.count == 1 else {
            throw CLIError("'hitch \(command)' reads one trace; \(traces.map { "'" + $0.paths.joined(separator: " + ") + "'" }.joined(separator: " and ")) are \(traces.count): give one at a time")
        }
        return try prepare(paths, forced: nil)[0]
    }

    static func cleanUp(_ prepared: [Prepared]) {
        for input in prepared where input.isTemporary { unlink(input.fxtPath) }
    }

    /// Runs the importer for `format` (chrome, framestats, ...) into the FXT file `output`. Errors
    /// are one line naming the input.
    static func importFile(format: String, inputs: [String], output: String, options: ImportOptions = ImportOptions()) throws -> ImportSummary {
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

/// The tables an `xctrace export` file holds: the name of each `<schema name="…">` in it, read in
/// one pass of 1 MB blocks (a time profile's export can be large).
enum XctraceTables {
    static func schemas(in path: String) -> [String] {
        guard let file = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? file.close() }
        let marker = Array("<schema name=\"".utf8)
        var names: [String] = []
        var carry: [UInt8] = []
        while let block = try? file.read(upToCount: 1 << 20), !block.isEmpty {
            let bytes = carry + block
            var index = 0
            var unfinished: Int?   // a marker whose name runs past this block
            while let start = find(marker, in: bytes, from: index) {
                let nameStart = start + marker.count
                guard let end = bytes[nameStart...].firstIndex(of: UInt8(ascii: "\"")) else { unfinished = start; break }
                let name = String(decoding: bytes[nameStart..<end], as: UTF8.self)
                if !names.contains(name) { names.append(name) }
                index = end + 1
            }
            // Keep the tail: a marker (and a name) may straddle two blocks.
            // (A name is short: an unfinished one longer than 4 KB is not a table's, and is let go.)
            let keepFrom = unfinished.flatMap { bytes.count - $0 <= 4096 ? $0 : nil } ?? max(index, bytes.count - marker.count)
            carry = Array(bytes[keepFrom...])
        }
        return names
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
