import Foundation
// The one parser for sizes, counts and refresh rates, shared by every command, so a setting is
// spelled and read the same way everywhere (`--device-budget 1.2GB` in analyze, check, diff,
// report and budget).

enum Quantities {
    /// Bytes: "1.2GB", "800MB", "512MiB", "6GiB", "4096" (a bare number is bytes and must be whole).
    /// Decimal units (KB, MB, GB, TB; K, M, G, T alike) are powers of 1000; binary ones (KiB, MiB,
    /// GiB, TiB) of 1024. Case does not matter.
    static func bytes(_ text: String, option: String) throws -> UInt64 {
        let units: [(String, Double)] = [("KIB", 1024), ("MIB", 1_048_576), ("GIB", 1_073_741_824), ("TIB", 1_099_511_627_776),
                                         ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("B", 1),
                                         ("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)]
        let trimmed = text.trimmingSpaces
        let upper = trimmed.uppercased()
        let failure = CLIError("option '\(option)' takes a size such as 1.2GB, 800MB or 512MiB; got '\(text)'")
        for (suffix, scale) in units where upper.hasSuffix(suffix) {
            let number = String(upper.dropLast(suffix.count)).trimmingSpaces
            guard let value = Double(number), value.isFinite, value > 0, value * scale >= 1, value * scale < 1.8e19 else { throw failure }
            return UInt64(value * scale)
        }
        // No unit: whole bytes only, so "1.2" (meant as GB) is never read as one byte.
        guard let value = UInt64(trimmed), value > 0 else {
            if let value = Double(trimmed), value > 0 {
                throw CLIError("option '\(option)' needs a unit: a bare number is bytes; did you mean '\(trimmed)GB' or '\(trimmed)MB'?")
            }
            throw failure
        }
        return value
    }

    /// A count: "1B", "0.4B", "500M", "7K", "1200" (B = 10^9, M = 10^6, K = 10^3), within `range`.
    static func count(_ text: String, option: String, in range: ClosedRange<Double>) throws -> Double {
        let upper = text.trimmingSpaces.uppercased()
        let scales: [(String, Double)] = [("B", 1e9), ("M", 1e6), ("K", 1e3)]
        var value: Double?
        if let (suffix, scale) = scales.first(where: { upper.hasSuffix($0.0) }) {
            value = Double(upper.dropLast(suffix.count)).map { $0 * scale }
        } else {
            value = Double(upper)
        }
        guard let value, value.isFinite else {
            throw CLIError("option '\(option)' takes a count such as 1B, 0.4B or 500M; got '\(text)'")
        }
        guard range.contains(value) else {
            throw CLIError("option '\(option)' must be from \(countText(range.lowerBound)) to \(countText(range.upperBound)); got '\(text)'")
        }
        return value
    }

    static func countText(_ value: Double) -> String {
        if value >= 1e9 { return String(format: "%gB", value / 1e9) }
        if value >= 1e6 { return String(format: "%gM", value / 1e6) }
        return String(format: "%g", value)
    }

    /// Every `--refresh`, recording or judging: a display refresh rate in Hz.
    static let refreshRange = 1.0...1000.0
    /// The display rate a recording runs at without `--refresh`.
    static let defaultRecordingRefreshHz = 120.0
    /// Every `--threshold` (diff, report, history): the smallest relative change that counts, in percent.
    static let thresholdRange = 0.0...10_000.0

    /// One refresh rate in Hz (1 to 1000).
    static func rate(_ text: String, option: String) throws -> Double {
        guard let rate = Double(text.trimmingSpaces), rate.isFinite, refreshRange.contains(rate) else {
            throw CLIError("option '\(option)' takes a refresh rate in Hz from 1 to 1000; got '\(text)'")
        }
        return rate
    }

    /// Refresh rates in Hz, comma separated ("60,120"), duplicates dropped, order kept.
    static func rates(_ list: String, option: String) throws -> [Double] {
        var unique: [Double] = []
        for word in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let rate = Double(word.trimmingSpaces), rate.isFinite, refreshRange.contains(rate) else {
                throw CLIError("option '\(option)' takes refresh rates in Hz from 1 to 1000, comma separated (e.g. 60,120); got '\(list)'")
            }
            if !unique.contains(rate) { unique.append(rate) }
        }
        return unique
    }
}

extension Substring {
    var trimmingSpaces: String { String(self).trimmingSpaces }
}
