import Foundation
import HitchAnalysis

// Renderings of a `Comparison` (hitch diff): text, JSON, markdown and JUnit. The figures, their
// roles and the verdict are the analyzer's (`RunComparison`); this only lays them out. The verdict
// line is the same words in every format, the HTML comparison included.

/// What a comparison report shows: the comparison and what the two sides were.
public struct ComparisonInput: Sendable {
    public var comparison: Comparison
    /// The base and new traces (file names), in the order given.
    public var basePaths: [String]
    public var newPaths: [String]
    public init(comparison: Comparison, basePaths: [String], newPaths: [String]) {
        self.comparison = comparison
        self.basePaths = basePaths
        self.newPaths = newPaths
    }
}

public enum ComparisonReport {
    /// The formats `hitch diff --format` offers.
    public static let formats = ["text", "json", "markdown", "junit"]

    public static func render(_ input: ComparisonInput, format: String) throws -> String {
        switch format {
        case "json": return try json(input.comparison)
        case "markdown": return markdown(input)
        case "junit": return junit(input)
        default: return text(input)
        }
    }

    // MARK: The verdict line

    /// "better: hitch time ratio at 120 Hz 90.3 → 0.0 ms/s, …": the comparison's answer in one line.
    public static func verdictLine(_ c: Comparison) -> String {
        let v = c.verdict
        switch v.outcome {
        case .unchanged:
            return "no change: no hitch or main-thread figure moved beyond \(Format.number(c.thresholdPercent, decimals: 2))%"
                + (c.usesSignificanceTest ? " and noise (Welch's t-test, p < \(Format.number(c.alpha, decimals: 6)))" : " and noise")
        case .better, .worse:
            // "and N more" counts every change the same way, so the line agrees with the counters
            // beside it (regressions, improvements) and with `hitch diff`'s stderr.
            let count = v.outcome == .worse ? v.regressionCount : v.improvementCount
            var line = v.outcome.rawValue + ": " + v.headline.map(change).joined(separator: ", ")
            if count > v.headline.count {
                line += ", and \(count - v.headline.count) more " + (v.outcome == .worse ? "regression" : "improvement") + (count - v.headline.count == 1 ? "" : "s")
            }
            // Judged figures that moved the other way: named, so a "better" never hides what got worse.
            if let first = v.caveats.first {
                line += "; though " + movement(first)
                if v.caveats.count > 1 {
                    line += " and \(v.caveats.count - 1) more figure\(v.caveats.count == 2 ? "" : "s") " + (v.outcome == .worse ? "improved" : "got worse")
                }
            }
            return line
        }
    }

    /// "hitches at 120 Hz rose 14.1 → 16.7 per s": a change with its direction in words.
    static func movement(_ f: FigureChange) -> String {
        "\(f.label) \(f.newMean > f.baseMean ? "rose" : "fell") \(value(f.baseMean, f.unit, withUnit: false)) → \(value(f.newMean, f.unit))"
    }

    /// "hitch time ratio at 120 Hz 90.3 → 0.0 ms/s".
    public static func change(_ f: FigureChange) -> String {
        "\(f.label) \(value(f.baseMean, f.unit, withUnit: false)) → \(value(f.newMean, f.unit))"
    }

    /// A compared value with its unit, formatted the same way everywhere.
    public static func value(_ v: Double, _ unit: FigureUnit, withUnit: Bool = true) -> String {
        let number: String
        let suffix: String
        switch unit {
        case .msPerS: number = Format.fixed(v, 1); suffix = " ms/s"
        case .percentOfFrames: number = Format.fixed(v, 1); suffix = "% of frames"
        case .fraction: number = Format.fixed(v * 100, 1); suffix = "%"
        case .bytes: return withUnit ? Format.bytes(v) : Format.significant(v)
        default: number = Format.significant(v); suffix = " " + unit.rawValue
        }
        return withUnit ? number + suffix : number
    }

    static func percent(_ f: FigureChange) -> String {
        guard let p = f.changePercent else { return f.newMean == f.baseMean ? "0%" : "from 0" }
        return (p >= 0 ? "+" : "") + Format.fixed(p, 1) + "%"
    }

    static func side(_ paths: [String]) -> String {
        paths.count == 1 ? paths[0] : "\(paths.count) runs (\(paths.joined(separator: ", ")))"
    }

    static func rules(_ c: Comparison) -> String {
        "threshold \(Format.number(c.thresholdPercent, decimals: 2))%, "
            + (c.usesSignificanceTest ? "Welch's t-test at alpha \(Format.number(c.alpha, decimals: 6))" : "one run a side: no significance test")
    }

    // MARK: Formats

    static func text(_ input: ComparisonInput) -> String {
        let c = input.comparison
        var out = [verdictLine(c),
                   "base: \(side(input.basePaths))",
                   "new:  \(side(input.newPaths))",
                   rules(c) + "; hitch and main-thread figures are judged, the rest is information; the hitch time ratio decides when it moved"]
        func line(_ f: FigureChange) -> String {
            let p = f.pValue.map { "  p=" + Format.number($0, decimals: 4) } ?? ""
            return "  \(f.label): \(value(f.baseMean, f.unit, withUnit: false)) → \(value(f.newMean, f.unit)) (\(percent(f)))\(p)  [\(f.metric)]"
        }
        func section(_ title: String, _ changes: [FigureChange], limit: Int = .max) {
            out.append("")
            out.append("\(title) (\(changes.count))" + (changes.isEmpty ? "" : ":"))
            out += changes.prefix(limit).map(line)
            if changes.count > limit { out.append("  … and \(changes.count - limit) more (--format json lists every figure)") }
        }
        section("Regressions", c.regressions)
        section("Improvements", c.improvements)
        section("Other changes, for information", c.informationalChanges, limit: 20)
        func only(_ title: String, _ changes: [FigureChange]) {
            guard !changes.isEmpty else { return }
            out.append("")
            out.append("\(title) (\(changes.count) figures): " + subjects(changes).joined(separator: ", "))
        }
        only("Only in base", c.onlyInBase)
        only("Only in new", c.onlyInNew)
        out.append("")
        out.append("Unchanged: \(c.unchanged.count) figures")
        return out.joined(separator: "\n") + "\n"
    }

    /// The stages and views a list of figures belongs to ("stage 'decode'", "view Thumbnail"), once each.
    static func subjects(_ changes: [FigureChange]) -> [String] {
        var seen: [String] = []
        for f in changes {
            let subject = f.metric.firstIndex(of: "]").map { String(f.metric[...$0]) } ?? f.metric
            if !seen.contains(subject) { seen.append(subject) }
        }
        return seen
    }

    static func json(_ c: Comparison) throws -> String {
        String(decoding: try JSONOutput.encoder().encode(c), as: UTF8.self) + "\n"
    }

    static func markdown(_ input: ComparisonInput) -> String {
        let c = input.comparison
        let icon = c.verdict.outcome == .worse ? "❌" : c.verdict.outcome == .better ? "✅" : "➖"
        var out = ["## hitch diff", "", "\(icon) **\(MarkdownReport.escape(verdictLine(c)))**", "",
                   "Base: \(input.basePaths.map { "`" + MarkdownReport.escape($0) + "`" }.joined(separator: ", ")) · "
                   + "New: \(input.newPaths.map { "`" + MarkdownReport.escape($0) + "`" }.joined(separator: ", ")) · \(rules(c))", ""]
        func table(_ title: String, _ changes: [FigureChange]) {
            guard !changes.isEmpty else { return }
            out.append("**\(title)**")
            out.append("")
            out.append("| figure | base | new | change |" + (c.usesSignificanceTest ? " p |" : ""))
            out.append("|---|---:|---:|---:|" + (c.usesSignificanceTest ? "---:|" : ""))
            for f in changes {
                out.append("| \(MarkdownReport.escape(f.label)) | \(value(f.baseMean, f.unit)) | \(value(f.newMean, f.unit)) | \(percent(f)) |"
                           + (c.usesSignificanceTest ? " \(f.pValue.map { Format.number($0, decimals: 4) } ?? "–") |" : ""))
            }
            out.append("")
        }
        table("Regressions", c.regressions)
        table("Improvements", c.improvements)
        table("Other changes, for information", Array(c.informationalChanges.prefix(20)))
        if c.informationalChanges.count > 20 {
            out.append("Showing 20 of \(c.informationalChanges.count) changes for information (--format json lists every figure).")
            out.append("")
        }
        if !c.onlyInBase.isEmpty { out.append("Only in base: " + subjects(c.onlyInBase).map(MarkdownReport.escape).joined(separator: ", ")); out.append("") }
        if !c.onlyInNew.isEmpty { out.append("Only in new: " + subjects(c.onlyInNew).map(MarkdownReport.escape).joined(separator: ", ")); out.append("") }
        return out.joined(separator: "\n") + "\n"
    }

    /// One test case per judged figure both sides have; a regression is a failure.
    static func junit(_ input: ComparisonInput) -> String {
        let c = input.comparison
        let judged = c.changes.filter { $0.role == .judged && $0.presence == .both }
        // Regressions fail when the verdict is worse; beside a better verdict they are its caveats.
        let failing = Set(c.verdict.outcome == .worse ? c.regressions.map(\.metric) : [])
        let failures = failing.count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites tests=\"\(judged.count)\" failures=\"\(failures)\">\n"
        out += "  <testsuite name=\"hitch diff\" tests=\"\(judged.count)\" failures=\"\(failures)\">\n"
        out += "    <properties><property name=\"verdict\" value=\"\(JUnitReport.escape(verdictLine(c)))\"/></properties>\n"
        for f in judged {
            let detail = "\(f.metric): \(change(f)) (\(percent(f)))"
            out += "    <testcase classname=\"hitch.diff\" name=\"\(JUnitReport.escape(f.label))\">"
            if failing.contains(f.metric) {
                out += "\n      <failure message=\"\(JUnitReport.escape(detail))\"/>\n    </testcase>\n"
            } else {
                out += "<system-out>\(JUnitReport.escape(detail))</system-out></testcase>\n"
            }
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }
}
