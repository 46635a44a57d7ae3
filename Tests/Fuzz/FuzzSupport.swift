import Foundation
import HitchAnalysis

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
}
