// The one entry point from a file another tool wrote to an FXT trace: picks the importer for the
// format and runs it into one `ImportSink`. The CLI's `hitch import` and the analysis commands'
// format sniffing both come through here.

/// One importer per format, all of one shape: each file goes into the one sink, then `finish` (an
/// importer that joins several files, as xctrace's tables, writes what it held there).
public protocol TraceImporter {
    mutating func importFile(path: String, into sink: ImportSink) throws
    /// Imports a file held in memory (tests, fuzzing).
    mutating func importBytes(_ bytes: [UInt8], name: String, into sink: ImportSink) throws
    mutating func finish(into sink: ImportSink) throws
}

extension TraceImporter {
    public mutating func finish(into sink: ImportSink) throws {}
}

/// The formats `hitch import` reads, and how a file of each is recognised.
public enum ImportFormat: String, Sendable, CaseIterable {
    case chrome, framestats, perfetto, xctrace

    /// The importer of this format.
    public func importer(options: ImportOptions = ImportOptions()) -> any TraceImporter {
        switch self {
        case .chrome: ChromeTraceImporter()
        case .framestats: FramestatsImporter(periodNs: options.periodNs, selection: options.process)
        case .perfetto: PerfettoImporter(selection: options.process)
        case .xctrace: XctraceImporter()
        }
    }

    /// Whether the sink writes events in the order the importer gives them. Chrome JSON is read whole
    /// and keeps its file order, as the recorder's files have it (per-thread buffers, not one global
    /// sort), so a trace exported and imported again comes back exactly; the other formats report
    /// out of time order and are sorted in the sink's bounded reorder stage.
    public var keepsFileOrder: Bool { self == .chrome }

    /// Where an import of this format gets its frames, for the error of one that had none.
    var whatGivesFrames: String {
        switch self {
        case .chrome: ""
        case .framestats: ": frames are the rows of a ---PROFILEDATA--- block"
        case .perfetto: ": frames come from the android.surfaceflinger.frametimeline data source (Android 12+), samples from none"
        case .xctrace: ": frames come from display-surface-swap or displayed-surfaces-interval, Apple's hitches from hitches, samples from time-profile, hangs from potential-hangs and hang-risks"
        }
    }

    /// The format of a file from its first bytes, if it is one of these. Chrome JSON starts with
    /// `[` or `{` (after a byte-order mark and white space); Perfetto traces are a protobuf `Trace`
    /// whose first field is `packet` (field 1, length-delimited: byte 0x0A).
    public static func sniff(_ head: ArraySlice<UInt8>) -> ImportFormat? {
        var bytes = head
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        // A UTF-16 text (a framestats dump Windows PowerShell saved) is sniffed as its UTF-8.
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            bytes = FramestatsImporter.utf8Text(Array(bytes.prefix(8192)))[...]
        }
        if let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), first == UInt8(ascii: "[") || first == UInt8(ascii: "{") {
            return .chrome
        }
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if text.contains("---PROFILEDATA---") || text.contains("Graphics info for pid") || text.hasPrefix("Applications Graphics Acceleration Info") {
            return .framestats
        }
        let trimmed = text.drop(while: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" })
        if trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<trace-query-result") { return .xctrace }
        // A Trace's first packet: field 1, wire type 2, then a length and the packet's first tag.
        if bytes.count >= 3, bytes.first == 0x0A, bytes.dropFirst().first.map({ $0 != 0x0A }) ?? false { return .perfetto }
        return nil
    }
}

public struct ImportOptions: Sendable {
    /// The refresh period for inputs that do not record one (framestats before Android 12).
    public var periodNs: Int64?
    /// Perfetto: the one app to import from a trace with several; framestats: the process whose
    /// window to import (`--process NAME|PID`).
    public var process: PerfettoProcessSelection?
    public init(periodNs: Int64? = nil, process: PerfettoProcessSelection? = nil) { self.periodNs = periodNs; self.process = process }
}

public enum TraceImport {
    /// Imports `inputs` (one file, or for xctrace one per table) of `format` into an FXT file at `output`.
    public static func run(_ format: ImportFormat, inputs: [String], output: String, options: ImportOptions = ImportOptions()) throws -> ImportSummary {
        let sink = try ImportSink(path: output, keepsFileOrder: format.keepsFileOrder)
        var importer = format.importer(options: options)
        for input in inputs {
            sink.currentInput = input
            try importer.importFile(path: input, into: sink)
        }
        sink.currentInput = nil
        try importer.finish(into: sink)
        let summary = try sink.finish()
        // Nothing to analyze is an error, not an empty trace that analyzes to "good": a platform's
        // export without frames, its own hitches, samples or hangs (Chrome JSON round-trips any of
        // the project's events, frames or not).
        if format != .chrome, summary.frames == 0, summary.platformHitches == 0, summary.samples == 0, summary.hangs == 0 {
            let found = summary.warnings.first.map { " (\($0))" } ?? ""
            throw ImportError(file: inputs.joined(separator: ", "), location: "whole \(inputs.count == 1 ? "file" : "files")",
                              expected: "frames, the platform's own hitches, samples or hangs to analyze; found none\(found)\(format.whatGivesFrames)")
        }
        return summary
    }

    /// The first `count` bytes of a file (fewer if it is shorter, none if it cannot be read).
    public static func firstBytes(of path: String, count: Int) -> [UInt8] {
        (try? readHead(path, count: count)) ?? []
    }
}

extension FramestatsImporter: TraceImporter {}
extension PerfettoImporter: TraceImporter {}
extension XctraceImporter: TraceImporter {}
extension ChromeTraceImporter: TraceImporter {}
