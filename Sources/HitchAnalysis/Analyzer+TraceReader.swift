import HitchReader

extension Analyzer {
    /// Streams one FXT trace (one run). The concrete overload for the usual input: a caller in
    /// another module (the CLI) reaching the generic `add` gets an unspecialized per-event path
    /// (the input's calls through witness tables).
    public mutating func add(_ reader: inout TraceReader, path: String, progress: ((Double) -> Void)? = nil) throws {
        try addInput(&reader, path: path, progress: progress)
    }

    /// The generic `add`, reached from a generic context (a concrete `TraceReader` argument would pick the overload above).
    private mutating func addInput<Input: TraceInput>(_ input: inout Input, path: String, progress: ((Double) -> Void)?) throws {
        try add(&input, path: path, progress: progress)
    }

    /// Analyzes events in memory (tests, generators).
    public static func analyze(_ lists: [TraceEventList], options: AnalyzerOptions = AnalyzerOptions()) throws -> Analysis {
        var analyzer = Analyzer(options: options)
        for (index, list) in lists.enumerated() {
            var input = list
            try analyzer.add(&input, path: "run \(index + 1)")
        }
        return analyzer.finish()
    }

    /// Analyzes trace files as runs of one analysis; `progress(runIndex, fraction)` for progress bars.
    public static func analyze(paths: [String], options: AnalyzerOptions = AnalyzerOptions(),
                               progress: ((Int, Double) -> Void)? = nil) throws -> Analysis {
        var analyzer = Analyzer(options: options)
        for (index, path) in paths.enumerated() {
            var reader = try TraceReader(path: path)
            try analyzer.add(&reader, path: path, progress: progress.map { report in { report(index, $0) } })
            let warnings = reader.warningCount
            if warnings > 0 { analyzer.addWarning("\(path): \(warnings) records skipped (first: \(reader.warnings.first?.description ?? "?"))") }
        }
        return analyzer.finish()
    }
}
