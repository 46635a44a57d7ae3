import Foundation
import HitchAnalysis

/// The stable JSON schema (docs/METRICS.md): the Analysis value, keys sorted. With budgets (from
/// `hitch check`), the object gains a "budgets" list of outcomes.
public enum JSONReport: AnalysisRenderer {
    public static let format = "json"

    public static func render(_ input: ReportInput) throws -> String {
        let data = try input.analysis.jsonData(pretty: true)
        var text = String(decoding: data, as: UTF8.self)
        if !input.budgets.isEmpty {
            let budgets = String(decoding: try BudgetOutcome.jsonData(input.budgets), as: UTF8.self)
            // Splice "budgets" in as the first key (keys stay sorted: "budgets" < "decode"...; JSON order
            // is not significant, but the bytes stay deterministic).
            text = "{\n  \"budgets\" : " + budgets.replacingOccurrences(of: "\n", with: "\n  ") + "," + text.dropFirst()
        }
        return text + "\n"
    }
}
