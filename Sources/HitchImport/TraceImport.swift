// The one entry point from a file another tool wrote to an FXT trace: picks the importer for the
// format and runs it into one `ImportSink`. The CLI's `hitch import` and the analysis commands'
// format sniffing both come through here.

public struct ImportOptions: Sendable {
    /// The refresh period for inputs that do not record one (framestats before Android 12).
    public var periodNs: Int64?
    /// Perfetto: the one app to import from a trace with several (`--process NAME|PID`).
    public var process: PerfettoProcessSelection?
    public init(periodNs: Int64? = nil, process: PerfettoProcessSelection? = nil) { self.periodNs = periodNs; self.process = process }
}

public enum TraceImport {
    /// Imports `inputs` (one file, or for xctrace one per table) of `format` into an FXT file at `output`.
    public static func run(_ format: ImportFormat, inputs: [String], output: String, options: ImportOptions = ImportOptions()) throws -> ImportSummary {
        let sink = try ImportSink(path: output)
        switch format {
        case .framestats:
            for input in inputs { try FramestatsImporter(periodNs: options.periodNs).importFile(path: input, into: sink) }
        case .perfetto:
            for input in inputs { try PerfettoImporter(selection: options.process).importFile(path: input, into: sink) }
        case .xctrace:
            var importer = XctraceImporter()
            for input in inputs { try importer.importFile(path: input, into: sink) }
            importer.finish(into: sink)
        }
        return try sink.finish()
    }

    /// The format of the file at `path` from its first bytes, if it is one `run` reads.
    public static func sniff(path: String) -> ImportFormat? {
        ImportFormat.sniff(firstBytes(of: path, count: 4096)[...])
    }

    /// The first `count` bytes of a file (fewer if it is shorter, none if it cannot be read).
    public static func firstBytes(of path: String, count: Int) -> [UInt8] {
        (try? readHead(path, count: count)) ?? []
    }
}
