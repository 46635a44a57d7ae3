import HitchAnalysis

// The "What changed" table of a BASE/NEW report. The changes, their percentages and their verdicts
// (regression, improvement, unchanged) are the analyzer's `RunComparison` — the same figures and
// thresholds `hitch diff` gates CI on; this only lays them out, worst first.

struct ComparisonTable {
    let comparison: HitchAnalysis.Comparison

    func write(_ w: inout HTMLWriter) {
        // The same verdict line `hitch diff` prints first, computed once by the analyzer.
        let outcome = comparison.verdict.outcome
        w.element("p", [Attribute("class", "verdictline " + (outcome == .worse ? "bad" : outcome == .better ? "good" : "mute"))]) { w in
            w.element("strong", text: ComparisonReport.verdictLine(comparison))
        }
        let regressions = comparison.regressions, improvements = comparison.improvements
        let information = comparison.informationalChanges
        let apart = comparison.onlyInBase + comparison.onlyInNew
        let unchanged = comparison.unchanged
        Blocks.stats(&w, [("regressions", Format.count(regressions.count)), ("improvements", Format.count(improvements.count)),
                          ("changed, for information", Format.count(information.count)), ("unchanged", Format.count(unchanged.count))])
        Blocks.note(&w, "Hitch and main-thread figures are judged; totals are per frame or per second. A change counts when it is beyond "
                    + "\(Format.number(comparison.thresholdPercent, decimals: 2))% of the base and beyond a small per-figure floor"
                    + (comparison.usesSignificanceTest ? ", and significant by Welch's t-test (p < \(Format.significant(comparison.alpha)))." : ".")
                    + " The same rules as hitch diff.")
        if regressions.isEmpty && improvements.isEmpty && information.isEmpty {
            Blocks.note(&w, "No figure changed beyond the thresholds.")
        } else {
            // The analyzer's order (hitch figures first, then stages, views, decode), regressions highlighted.
            table(&w, regressions + improvements + information, id: "changed")
        }
        if !apart.isEmpty {
            w.element("details", [Attribute("class", "more")]) { w in
                w.element("summary", text: "\(apart.count) figures only in one run")
                table(&w, apart, id: "apart")
            }
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
            switch (change.presence, change.role, change.direction) {
            case (.onlyInBase, _, _): verdict = .text("only in base")
            case (.onlyInNew, _, _): verdict = .text("only in new")
            case (_, .judged, .worse): verdict = .badge("bad", "worse")
            case (_, .judged, .better): verdict = .badge("good", "better")
            case (_, .informational, .worse), (_, .informational, .better): verdict = .text("changed (information)")
            default: verdict = .text("unchanged")
            }
            table.add([.name(change.label + " (" + change.unit.rawValue + ")"),
                       .number(change.baseMean, ComparisonReport.value(change.baseMean, change.unit)),
                       .number(change.newMean, ComparisonReport.value(change.newMean, change.unit)),
                       percent]
                      + (tested ? [change.pValue.map { .number($0, Format.number($0, decimals: 4)) } ?? .text("—")] : [])
                      + [verdict],
                      highlight: change.isRegression)
        }
        table.write(&w, fragment: Fragment("t-", id), filterable: true)
    }
}
