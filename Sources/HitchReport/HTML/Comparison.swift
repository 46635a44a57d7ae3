import HitchAnalysis

// The "What changed" table of a BASE/NEW report. The changes, their percentages and their verdicts
// (regression, improvement, unchanged) are the analyzer's `RunComparison` — the same figures and
// thresholds `hitch diff` gates CI on; this only lays them out, worst first.

struct ComparisonTable {
    let comparison: HitchAnalysis.Comparison

    /// Display text for a value of the figure at `metric` (a metric path such as
    /// `hitches.120.longestHitchMs` or `stages[filter].onMainThreadFraction`), by its unit suffix.
    static func format(_ value: Double, metric: String) -> String {
        let leaf = metric.split(separator: ".").last.map(String.init) ?? metric
        if leaf.hasSuffix("Ms") || metric.contains("Ms.p") {
            return Format.milliseconds(value)
        }
        if leaf.hasSuffix("Share") || leaf.hasSuffix("Fraction") || leaf == "utilization" { return Format.percent(value) }
        if leaf == "bytesPerToken" { return Format.bytes(value) }
        if leaf == "hitchTimeRatioMsPerS" { return Format.fixed(value, 2) + " ms/s" }
        if leaf == "bandwidthGBps" { return Format.significant(value) + " GB/s" }
        if leaf == "tokensPerSecond" { return Format.significant(value) + " tok/s" }
        if value == value.rounded() && abs(value) < 1e15 { return Format.count(value) }
        return Format.significant(value)
    }

    func write(_ w: inout HTMLWriter) {
        let regressions = comparison.changes.filter { $0.verdict == "regression" }
        let improvements = comparison.changes.filter { $0.verdict == "improvement" }
        let unchanged = comparison.changes.filter { $0.verdict != "regression" && $0.verdict != "improvement" }
        Blocks.stats(&w, [("regressions", Format.count(regressions.count)), ("improvements", Format.count(improvements.count)),
                          ("unchanged", Format.count(unchanged.count))])
        Blocks.note(&w, "A change counts when it is beyond \(Format.number(comparison.thresholdPercent, decimals: 2))% of the base and beyond a small per-figure floor"
                    + (comparison.baseRuns >= 2 && comparison.newRuns >= 2 ? ", and significant by Welch's t-test (p < \(Format.significant(comparison.alpha)))." : ".")
                    + " The same rules as hitch diff.")
        if regressions.isEmpty && improvements.isEmpty {
            Blocks.note(&w, "No figure changed beyond the thresholds.")
        } else {
            // The analyzer's order (hitch figures first, then stages, views, decode), regressions highlighted.
            table(&w, comparison.changes.filter { $0.verdict == "regression" || $0.verdict == "improvement" }, id: "changed")
        }
        if !unchanged.isEmpty {
            w.element("details", [Attribute("class", "more")]) { w in
                w.element("summary", text: "\(unchanged.count) figures unchanged")
                table(&w, unchanged, id: "unchanged")
            }
        }
    }

    private func table(_ w: inout HTMLWriter, _ changes: [FigureChange], id: String) {
        // The p column only when there were repeated runs to test.
        let tested = changes.contains { $0.pValue != nil }
        var table = TableBuilder([("Figure", false), ("Base", true), ("New", true), ("Change", true)] + (tested ? [("p", true)] : []) + [("Verdict", false)])
        for change in changes {
            let percent: TableBuilder.Cell = change.changePercent.map { .number($0, Format.signedPercent($0 / 100)) }
                ?? .text(change.newMean == change.baseMean ? "0" : "from 0")
            let verdict: TableBuilder.Cell
            switch change.verdict {
            case "regression": verdict = .badge("bad", "worse")
            case "improvement": verdict = .badge("good", "better")
            default: verdict = .text("unchanged")
            }
            table.add([.name(change.metric),
                       .number(change.baseMean, ComparisonTable.format(change.baseMean, metric: change.metric)),
                       .number(change.newMean, ComparisonTable.format(change.newMean, metric: change.metric)),
                       percent]
                      + (tested ? [change.pValue.map { .number($0, Format.number($0, decimals: 4)) } ?? .text("—")] : [])
                      + [verdict],
                      highlight: change.verdict == "regression")
        }
        table.write(&w, fragment: Fragment("t-", id), filterable: true)
    }
}
