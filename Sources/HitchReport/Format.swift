// Number formatting that is the same on every machine and locale (reports must be byte-identical
// when regenerated), written out by hand instead of through locale-aware formatters. Every report
// format and the CLI's own summaries format numbers, durations and byte counts here.

public enum Format {
    /// `value` rounded to `decimals` places, trailing zeros kept: fixed(3.14159, 2) == "3.14".
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "–" : (value < 0 ? "-∞" : "∞") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9.0e18 else { return value < 0 ? "-" + huge(abs(value)) : huge(value) }
        let units = UInt64(scaled)
        let divisor = UInt64(scale)
        let whole = units / divisor
        var text = (value < 0 && units != 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let fraction = String(units % divisor)
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return text
    }

    /// Like `fixed` with trailing zeros (and a trailing point) removed: for SVG coordinates.
    public static func number(_ value: Double, decimals: Int) -> String {
        var text = fixed(value, decimals)
        guard text.contains(".") else { return text }
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        if text == "-0" { text = "0" }
        return text
    }

    /// Three significant-ish digits: 1234 -> "1234", 12.345 -> "12.3", 0.01234 -> "0.0123".
    public static func significant(_ value: Double) -> String {
        guard value.isFinite else { return fixed(value, 0) }
        let magnitude = abs(value)
        if magnitude >= 100 || magnitude == 0 { return fixed(value, 0) }
        if magnitude >= 10 { return fixed(value, 1) }
        if magnitude >= 1 { return fixed(value, 2) }
        if magnitude >= 0.01 { return number(value, decimals: 3) }
        return number(value, decimals: 5)
    }

    /// A refresh rate: "60 Hz", "59.94 Hz".
    public static func rate(_ hz: Double) -> String { number(hz, decimals: 2) + " Hz" }

    /// A duration given in milliseconds, in the unit that reads best.
    public static func milliseconds(_ ms: Double) -> String {
        guard ms.isFinite else { return fixed(ms, 0) }
        let magnitude = abs(ms)
        if magnitude >= 10_000 { return fixed(ms / 1000, 1) + " s" }
        if magnitude >= 1000 { return fixed(ms / 1000, 2) + " s" }
        if magnitude >= 1 || magnitude == 0 { return significant(ms) + " ms" }
        return significant(ms * 1000) + " µs"
    }

    public static func nanoseconds(_ ns: Int64) -> String { milliseconds(Double(ns) / 1e6) }

    /// An integer with thin thousands separators: 10000 -> "10,000".
    public static func count(_ value: some BinaryInteger) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    public static func count(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 9e18 else { return fixed(value, 0) }
        return count(Int64(value.rounded()))
    }

    /// A byte count in decimal units (kB = 1e3, GB = 1e9, as bandwidth figures use): "254 MB", "1.2 GB".
    public static func bytes(_ value: Double) -> String {
        let magnitude = abs(value)
        for (scale, unit) in [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")] where magnitude >= scale {
            return significant(value / scale) + " " + unit
        }
        return fixed(value, 0) + " B"
    }

    public static func bytes(_ value: some BinaryInteger) -> String { bytes(Double(value)) }

    /// A threshold given in milliseconds, as people write one: "500 µs", "1 ms", "8.33 ms".
    public static func threshold(milliseconds ms: Double, space: Bool = true) -> String {
        func plain(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : fixed(v, 2) }
        let gap = space ? " " : ""
        return ms < 1 ? plain(ms * 1000) + gap + (space ? "µs" : "us") : plain(ms) + gap + "ms"
    }

    /// A 0…1 share as a percentage.
    public static func percent(_ share: Double) -> String {
        guard share.isFinite else { return fixed(share, 0) }
        return (abs(share) >= 0.1 ? fixed(share * 100, 0) : fixed(share * 100, 1)) + "%"
    }

    /// A signed change, for comparisons: "+12.3%".
    public static func signedPercent(_ share: Double) -> String {
        guard share.isFinite else { return share > 0 ? "new" : "–" }
        return (share > 0 ? "+" : "") + fixed(share * 100, 1) + "%"
    }

    private static func huge(_ value: Double) -> String {
        var exponent = 0
        var mantissa = value
        while mantissa >= 10 { mantissa /= 10; exponent += 1 }
        return fixed(mantissa, 2) + "e" + String(exponent)
    }
}
