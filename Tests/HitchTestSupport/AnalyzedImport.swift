import Foundation
import HitchAnalysis
import HitchImport
import HitchReader

/// Another tool's trace as the analysis commands read it: imported through `TraceImport.run` into a
/// temporary FXT file (removed after), then analyzed.
public enum AnalyzedImport {
    /// What the import wrote and the analysis of it at `refreshRatesHz`.
    public static func run(_ format: ImportFormat, inputs: [String], options: ImportOptions = ImportOptions(),
                           refreshRatesHz: [Double] = [60, 120]) throws -> (ImportSummary, Analysis) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).fxt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let summary = try TraceImport.run(format, inputs: inputs, output: output, options: options)
        var analyzer = Analyzer(options: AnalyzerOptions(refreshRatesHz: refreshRatesHz))
        var reader = try TraceReader(path: output)
        try analyzer.add(&reader, path: output)
        return (summary, analyzer.finish())
    }
}
