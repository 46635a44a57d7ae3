import Foundation
import HitchAnalysis

extension Analysis {
    /// The first lines where this analysis's JSON differs from `expected`'s ("" when they are
    /// equal): a short failure message.
    public func difference(from expected: Analysis) -> String {
        guard self != expected else { return "" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let a = String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self).split(separator: "\n")
        let b = String(decoding: (try? encoder.encode(expected)) ?? Data(), as: UTF8.self).split(separator: "\n")
        guard let index = a.indices.first(where: { $0 >= b.count || a[$0] != b[$0] }) else { return "longer: \(b.count) vs \(a.count) lines" }
        return a[max(0, index - 6)...index].joined(separator: " ") + "  EXPECTED " + (index < b.count ? b[index] : "end")
    }
}
