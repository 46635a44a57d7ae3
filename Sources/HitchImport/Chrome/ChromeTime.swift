import HitchTrace

/// Chrome's `ts` and `dur` are microseconds, possibly fractional; hitch writes nanosecond times as
/// microseconds with three decimals, parsed back here exactly (no floating point on that path).
public enum ChromeTime {
    public static func nanoseconds(fromMicroseconds value: JSONValue) -> Int64? {
        guard let text = value.stringValue else { return nil }
        return nanoseconds(fromMicroseconds: text)
    }

    public static func nanoseconds(fromMicroseconds text: String) -> Int64? {
        var digits = Substring(text)
        var negative = false
        if digits.hasPrefix("-") { negative = true; digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count <= 2, !parts[0].isEmpty, parts[0].count <= 16, parts[0].allSatisfy(\.isASCIIDigit),
           parts.count == 1 || (parts[1].count <= 3 && !parts[1].isEmpty && parts[1].allSatisfy(\.isASCIIDigit)),
           let whole = Int64(parts[0]) {
            var fraction: Int64 = 0
            if parts.count == 2 {
                let padded = String(parts[1]) + String(repeating: "0", count: 3 - parts[1].count)
                fraction = Int64(padded) ?? 0
            }
            let (scaled, overflow) = whole.multipliedReportingOverflow(by: 1000)
            let (ns, overflow2) = scaled.addingReportingOverflow(fraction)
            guard !overflow, !overflow2 else { return nil }
            return negative ? -ns : ns
        }
        guard let micros = Double(text), micros.isFinite, abs(micros) < 9.2e15 else { return nil }
        return Int64((micros * 1000).rounded())
    }

    /// Nanoseconds as microseconds with exactly three decimals ("12.345").
    public static func microsecondsText(_ ns: Int64) -> String {
        let magnitude = ns.magnitude
        let fraction = String(magnitude % 1000)
        return (ns < 0 ? "-" : "") + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension JSONValue {
    /// The member named by a vocabulary argument.
    subscript(_ argument: HitchArgument) -> JSONValue? { self[argument.name] }
}
