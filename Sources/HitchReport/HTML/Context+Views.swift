import HitchAnalysis
import HitchReader
import HitchTrace

// The report's view-updates section: view body evaluations, invalidations and identity churn.

extension Context {
    func views(_ w: inout HTMLWriter) {
        if !analysis.views.isEmpty {
            w.element("div", [Attribute("class", "grid2")]) { w in
                w.element("div") { w in
                    w.element("h3", text: "Top views by body time")
                    Charts.horizontalBars(&w, rows: analysis.views.prefix(10).map {
                        Charts.BarRow(label: $0.type, value: $0.totalMs, valueText: Format.milliseconds($0.totalMs), highlight: $0.longUpdatesOver1ms > 0)
                    }, title: "Body time per view type")
                    Blocks.showing(&w, shown: min(10, analysis.views.count), of: analysis.views.count, what: "view types")
                }
                w.element("div") { w in
                    w.element("h3", text: "Top views by evaluations")
                    Charts.horizontalBars(&w, rows: analysis.views.sorted { ($0.bodyEvaluations, $1.type) > ($1.bodyEvaluations, $0.type) }.prefix(10).map {
                        Charts.BarRow(label: $0.type, value: Double($0.bodyEvaluations), valueText: Format.count($0.bodyEvaluations), series: 1)
                    }, title: "Body evaluations per view type")
                    Blocks.showing(&w, shown: min(10, analysis.views.count), of: analysis.views.count, what: "view types")
                }
            }
            var table = TableBuilder([("View type", false), ("Evaluations", true), ("Per frame", true), ("Total", true), ("Max", true),
                                      ("> " + Format.threshold(milliseconds: AnalysisThresholds.longUpdateMs), true), ("> " + Format.threshold(milliseconds: AnalysisThresholds.veryLongUpdateMs), true)])
            for view in analysis.views {
                table.add([.name(view.type), .number(Double(view.bodyEvaluations), Format.count(view.bodyEvaluations)),
                           .number(view.evaluationsPerFrame, Format.significant(view.evaluationsPerFrame)), ms(view.totalMs), ms(view.maxMs),
                           view.longUpdates > 0 ? .badge("warning", Format.count(view.longUpdates)) : .number(0, "0"),
                           view.longUpdatesOver1ms > 0 ? .badge("critical", Format.count(view.longUpdatesOver1ms)) : .number(0, "0")],
                          highlight: view.longUpdatesOver1ms > 0)
            }
            table.write(&w, fragment: fragment("t-", "views"), filterable: true,
                        caption: "Long updates: orange over " + Format.threshold(milliseconds: AnalysisThresholds.longUpdateMs) + ", red over "
                            + Format.threshold(milliseconds: AnalysisThresholds.veryLongUpdateMs) + " (Instruments' thresholds).")
        }
        if !analysis.invalidations.isEmpty {
            w.element("h3", text: "Invalidations: cause → effect")
            let edges = analysis.invalidations.prefix(30).map { edge in
                Charts.Edge(source: edge.writer.map { edge.source + " (" + $0 + ")" } ?? edge.source, target: edge.target, count: edge.count)
            }
            Charts.causeEffectGraph(&w, edges: Array(edges), title: "Invalidation graph")
            Blocks.showing(&w, shown: min(30, analysis.invalidations.count), of: analysis.invalidations.count, what: "edges (the most frequent)")
            if !analysis.invalidationSources.isEmpty {
                var table = TableBuilder([("Source (widest fan-out first)", false), ("Invalidations", true), ("View types", true)])
                for source in analysis.invalidationSources {
                    table.add([.name(source.source), .number(Double(source.invalidations), Format.count(source.invalidations)),
                               .number(Double(source.targetTypes), Format.count(source.targetTypes))])
                }
                table.write(&w, fragment: fragment("t-", "sources"))
            }
        }
        if let churn = analysis.identityChurn { identityChurn(&w, churn) }
    }

    /// Views torn down and rebuilt per update, and places flagged as likely unstable identity.
    private func identityChurn(_ w: inout HTMLWriter, _ c: IdentityChurnFigures) {
        w.element("h3", text: "Identity churn")
        Blocks.facts(&w, [
            ("Updates that built or tore down views", Format.count(c.updates)),
            ("Views built / torn down", "\(Format.count(c.viewsBuilt)) / \(Format.count(c.viewsTornDown))"),
            ("Replacements (same type, same place, new id)", Format.count(c.replacements)),
            ("Views rebuilt by replacements", Format.count(c.rebuiltViews)),
            ("Updates with replacements", Format.count(c.updatesWithReplacements)),
            ("Most views rebuilt in one update", Format.count(c.maxRebuiltViewsPerUpdate)),
            ("Likely unstable identity", c.unstableIdentitySlots == 0 ? "none" : "\(Format.count(c.unstableIdentitySlots)) places"),
        ])
        if !c.types.isEmpty {
            var table = TableBuilder([("View type", false), ("Built", true), ("Torn down", true), ("Replaced", true)])
            for t in c.types {
                table.add([.name(t.type), .number(Double(t.built), Format.count(t.built)), .number(Double(t.tornDown), Format.count(t.tornDown)),
                           t.replacements > 0 ? .badge("warning", Format.count(t.replacements)) : .number(0, "0")],
                          highlight: t.replacements > 0)
            }
            table.write(&w, fragment: fragment("t-", "churn-types"),
                        caption: "Built and torn down by type; replaced: torn down and rebuilt at the same place with a new id in one update.")
        }
        if !c.unstableIdentity.isEmpty {
            var table = TableBuilder([("View type", false), ("Parent", false), ("Position", true), ("Updates replaced in", true)])
            for u in c.unstableIdentity {
                table.add([.name(u.type), .name(u.parentType), .number(Double(u.position), String(u.position)),
                           .badge("critical", Format.count(u.replacements))], highlight: true)
            }
            table.write(&w, fragment: fragment("t-", "unstable-identity"),
                        caption: "Likely unstable identity: the same type rebuilt at the same position with a new id in \(unstableIdentityMinimumUpdates) or more updates.")
        }
    }
}
