import Foundation
import HitchAnalysis
import HitchReader

// Shared by the analyzer-facing fuzz targets (compiled into each of them by scripts/dev/fuzz.sh).
enum FuzzJSON {
    /// Encodes an Analysis the way a JSON renderer would. A value JSON cannot hold (NaN, infinity)
    /// would make `--format json` fail on that input, so it is a finding: trap with the reason.
    static func encode(_ analysis: Analysis) -> Int {
        do {
            return try JSONEncoder().encode(analysis).count
        } catch {
            fatalError("Analysis is not JSON-encodable: \(error)")
        }
    }

    /// Analyzes `input` at `rates` and encodes the analysis; an error is the input's, and ends the
    /// run with nothing to encode.
    static func analyze<Input: TraceInput>(_ input: inout Input, path: String, rates: [Double] = [60, 120]) {
        var analyzer = Analyzer(options: AnalyzerOptions(refreshRatesHz: rates))
        do {
            try analyzer.add(&input, path: path)
        } catch {
            _ = "\(error)"
            return
        }
        _ = encode(analyzer.finish())
    }
}
