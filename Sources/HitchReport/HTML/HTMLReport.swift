import HitchAnalysis

// The HTML report: one self-contained page from an `Analysis` (or two, side by side). Each section
// appears only when the analysis has its data. Every figure shown is read from the Analysis value; the
// renderer only arranges, scales and formats them.

public enum HTMLReport {
    /// Deadline lines drawn on frame charts: one 120 Hz and one 60 Hz period.
    static let deadlinesMs: [Double] = [1000.0 / 120, 1000.0 / 60]

    /// The report of one analysis (one or more runs merged).
    public static func render(_ analysis: Analysis, title: String) -> String {
        var sections: [PageSection] = []
        let context = Context(analysis: analysis, prefix: "a")
        if context.hasFrames {
            sections.append(PageSection(fragment: Fragment("sec-", "verdict"), title: "Verdict") { w in context.verdict(&w) })
            sections.append(PageSection(fragment: Fragment("sec-", "timeline"), title: "Frame timeline") { w in context.timeline(&w) })
            sections.append(PageSection(fragment: Fragment("sec-", "frame-times"), title: "Frame times") { w in context.frameTimes(&w) })
        }
        if !analysis.offenders.isEmpty || !analysis.hitchAttributions.isEmpty {
            sections.append(PageSection(fragment: Fragment("sec-", "why"), title: "Why frames were late") { w in context.offenders(&w) })
        }
        if !analysis.stages.isEmpty {
            sections.append(PageSection(fragment: Fragment("sec-", "stages"), title: "Pipeline stages") { w in context.stages(&w) })
        }
        if !analysis.views.isEmpty || !analysis.invalidations.isEmpty || analysis.identityChurn != nil {
            sections.append(PageSection(fragment: Fragment("sec-", "views"), title: "View updates") { w in context.views(&w) })
        }
        if !analysis.samples.folded.isEmpty || !analysis.samples.foldedInHitches.isEmpty {
            sections.append(PageSection(fragment: Fragment("sec-", "samples"), title: "Main thread samples") { w in context.flameGraphs(&w) })
        }
        if analysis.decode != nil || analysis.tokens != nil {
            sections.append(PageSection(fragment: Fragment("sec-", "llm"), title: "LLM decode") { w in context.llm(&w) })
        }
        sections.append(PageSection(fragment: Fragment("sec-", "trace"), title: "Trace") { w in context.traceInfo(&w) })
        return Page.render(title: title, subtitle: context.subtitle, sections: sections, footer: footer)
    }

    /// Two analyses side by side (BASE left, NEW right), led by the analyzer's comparison of them
    /// (`RunComparison.compare`, the figures and verdicts `hitch diff` uses) with regressions highlighted.
    public static func renderComparison(base: Analysis, new: Analysis, comparison: HitchAnalysis.Comparison,
                                        baseLabel: String, newLabel: String, title: String) -> String {
        let baseContext = Context(analysis: base, prefix: "b")
        let newContext = Context(analysis: new, prefix: "n")
        let changes = ComparisonTable(comparison: comparison)
        var sections: [PageSection] = []
        sections.append(PageSection(fragment: Fragment("sec-", "changes"), title: "What changed") { w in changes.write(&w) })
        func sideBySide(_ id: StaticString, _ title: String, stacked: Bool = false, when present: @escaping (Context) -> Bool,
                        _ body: @escaping (Context, inout HTMLWriter) -> Void) {
            guard present(baseContext) || present(newContext) else { return }
            sections.append(PageSection(fragment: Fragment(id, ""), title: title) { w in
                w.element("div", [Attribute("class", stacked ? "compare stacked" : "compare")]) { w in
                    for (label, context) in [(baseLabel, baseContext), (newLabel, newContext)] {
                        w.element("div") { w in
                            w.element("p", [Attribute("class", "runlabel")]) { $0.name(label) }
                            if present(context) { body(context, &w) } else { Blocks.note(&w, "No data in this run.") }
                        }
                    }
                }
            })
        }
        sideBySide("sec-verdict", "Verdict", when: { $0.hasFrames }) { c, w in c.verdict(&w) }
        sideBySide("sec-timeline", "Frame timeline", stacked: true, when: { $0.hasFrames }) { c, w in c.timeline(&w) }
        sideBySide("sec-frame-times", "Frame times", when: { $0.hasFrames }) { c, w in c.frameTimes(&w) }
        sideBySide("sec-why", "Why frames were late", when: { !$0.analysis.offenders.isEmpty }) { c, w in c.offenders(&w) }
        sideBySide("sec-views", "View updates", when: { !$0.analysis.views.isEmpty || !$0.analysis.invalidations.isEmpty || $0.analysis.identityChurn != nil }) { c, w in c.views(&w) }
        sideBySide("sec-samples", "Main thread samples", stacked: true, when: { !$0.analysis.samples.folded.isEmpty }) { c, w in c.flameGraphs(&w) }
        sideBySide("sec-llm", "LLM decode", when: { $0.analysis.decode != nil || $0.analysis.tokens != nil }) { c, w in c.llm(&w) }
        sideBySide("sec-trace", "Traces", when: { _ in true }) { c, w in c.traceInfo(&w) }
        return Page.render(title: title, subtitle: ["Base: " + baseLabel, "New: " + newLabel], sections: sections, footer: footer)
    }

    static let footer = "Generated by hitch report. Self-contained: no network, scripts only add interaction."
}

// MARK: - One analysis

struct Context {
    let analysis: Analysis
    /// Keeps element ids unique when two analyses share a page.
    let prefix: String

    var hasFrames: Bool { analysis.recorded.frameCount > 0 || !analysis.frames.isEmpty }

    /// Hitch figures in a stable order: by rate, recorded first when it is not one of the rates.
    var ratesInOrder: [HitchFigures] {
        analysis.hitches.keys.sorted { (Double($0) ?? 0, $0) < (Double($1) ?? 0, $1) }.compactMap { analysis.hitches[$0] }
    }

    var subtitle: [String] {
        var lines: [String] = []
        let paths = analysis.runs.map(\.path).filter { !$0.isEmpty }
        if !paths.isEmpty { lines.append((paths.count == 1 ? "Trace: " : "Traces: ") + paths.joined(separator: ", ")) }
        var facts: [String] = []
        for key in ["workload", "variant", "host", "cpu"] {
            if let value = analysis.metadata[key] { facts.append(key + " " + value) }
        }
        if !facts.isEmpty { lines.append(facts.joined(separator: " · ")) }
        return lines
    }

    func fragment(_ kind: StaticString, _ value: String) -> Fragment { Fragment(kind, prefix + "-" + value) }

    static func gradeClass(_ grade: String) -> String {
        switch grade {
        case "good": return "good"
        case "warning", "fair": return "warning"
        case "poor", "critical": return "critical"
        default: return "neutral"
        }
    }

    static func rateTitle(_ figures: HitchFigures) -> String {
        let rate = figures.rateHz > 0 ? Format.rate(figures.rateHz) : "mixed rates"
        return figures.source == "recorded" ? rate + " · recorded" : rate + " · replayed"
    }

    // MARK: Verdict

    func verdict(_ w: inout HTMLWriter) {
        w.element("div", [Attribute("class", "cards")]) { w in
            var cards = ratesInOrder
            if cards.isEmpty || analysis.recordedRates.count > 1 { cards.insert(analysis.recorded, at: 0) }
            for figures in cards {
                w.element("div", [Attribute("class", "verdict " + Context.gradeClass(figures.appleTestScale.grade))]) { w in
                    w.element("div", [Attribute("class", "rate")], text: Context.rateTitle(figures))
                    w.element("div", [Attribute("class", "big")]) { w in
                        w.text(Format.fixed(figures.hitchTimeRatioMsPerS, 1))
                        w.element("small", text: " ms/s hitch time")
                    }
                    badge(&w, figures.appleTestScale, fallbackScale: "Apple test scale")
                    badge(&w, figures.organizerScale, fallbackScale: "Xcode Organizer scale")
                    Blocks.facts(&w, [
                        ("Frames", Format.count(figures.frameCount)),
                        ("Hitches", Format.count(figures.hitchCount) + " (" + Format.count(figures.commitHitchCount) + " commit, " + Format.count(figures.renderHitchCount) + " render)"),
                        ("Longest hitch", Format.milliseconds(figures.longestHitchMs)),
                        ("Total hitch time", Format.milliseconds(figures.totalHitchMs)),
                        ("Animating time", Format.fixed(figures.animatingSeconds, 2) + " s (" + figures.animatingTimeSource + ")"),
                        ("Slow / frozen frames", Format.count(figures.slowFrames) + " / " + Format.count(figures.frozenFrames)),
                    ] + (figures.tripleBufferedFrames > 0 ? [("Triple-buffered", Format.count(figures.tripleBufferedFrames) + " frames, +" + Format.milliseconds(figures.addedLatencyMs) + " latency")] : [])
                      + (figures.worstWindow.hitchMs > 0 ? [("Worst second", "from " + Format.fixed(figures.worstWindow.startMs / 1000, 2) + " s: " + Format.milliseconds(figures.worstWindow.hitchMs) + " in " + Format.count(figures.worstWindow.hitchCount) + " hitches")] : []))
                }
            }
        }
        var notes: [(String, String)] = [("Dropped events", Format.count(analysis.droppedEvents))]
        if !analysis.recordedRates.isEmpty {
            notes.append(("Recorded at", analysis.recordedRates.map { Format.rate($0.rateHz) + " (" + Format.count($0.frameCount) + " frames)" }.joined(separator: ", ")))
        }
        if !analysis.refreshRateChanges.isEmpty {
            notes.append(("Refresh-rate changes", analysis.refreshRateChanges.prefix(5).map {
                Format.fixed($0.atMs / 1000, 2) + " s: " + Format.rate($0.fromHz) + " → " + Format.rate($0.toHz)
            }.joined(separator: "; ") + (analysis.refreshRateChanges.count > 5 ? "; …" : "")))
        }
        Blocks.facts(&w, notes)
        if analysis.droppedEvents > 0 {
            Blocks.note(&w, "The recorder dropped events: figures may undercount.")
        }
    }

    /// A grade badge: the grade and the scale's short name; the analyzer's full scale text (with its
    /// thresholds) is the tooltip.
    private func badge(_ w: inout HTMLWriter, _ verdict: HitchVerdict, fallbackScale shortName: String) {
        let scale = verdict.scale.isEmpty ? shortName : verdict.scale
        w.element("span", [Attribute("class", "badge " + Context.gradeClass(verdict.grade)), Attribute("title", scale)],
                  text: verdict.grade + " · " + shortName)
    }

    // MARK: Timeline

    func timeline(_ w: inout HTMLWriter) {
        let attributed = Dictionary(analysis.hitchAttributions.map { ("\($0.run)-\($0.frameID)", $0) }, uniquingKeysWith: { a, _ in a })
        let runs = Array(Set(analysis.frames.map(\.run))).sorted()
        Blocks.note(&w, "Each bar is a frame's time (main thread + render) at its start time; red = hitch. Dashed lines: 8.33 ms (120 Hz) and 16.67 ms (60 Hz). Click a red bar for the frame's stages, body evaluations and stacks." )
        let inspectorID = fragment("insp-", "timeline")
        for run in runs {
            if runs.count > 1 {
                let path = run < analysis.runs.count ? analysis.runs[run].path : "run \(run + 1)"
                w.element("h3") { $0.name(path) }
            }
            let frames = analysis.frames.filter { $0.run == run }.map { frame -> TimelineFrame in
                let key = "\(frame.run)-\(frame.frameID)"
                var tooltip = "frame \(frame.frameID) at \(Format.fixed(frame.startMs / 1000, 3)) s: \(Format.milliseconds(frame.frameTimeMs)) (main \(Format.milliseconds(frame.mainThreadMs)), render \(Format.milliseconds(frame.renderMs)))"
                if frame.hitchMs > 0 { tooltip += ", \(frame.kind) hitch \(Format.milliseconds(frame.hitchMs))" }
                else if frame.kind == "latency" { tooltip += ", triple-buffered" }
                return TimelineFrame(startMs: frame.startMs, durationMs: frame.frameTimeMs, isHitch: frame.hitchMs > 0,
                                     tooltip: tooltip, detail: attributed[key] != nil ? fragment("f-", key) : nil)
            }
            w.element("div", [Attribute("class", "timeline-wrap"), Attribute("data-inspector", inspectorID.identifier)]) { w in
                Charts.frameTimeline(&w, frames: frames, deadlinesMs: HTMLReport.deadlinesMs,
                                     title: "Frame timeline: \(frames.count) frames", fragment: fragment("tl-", String(run)))
            }
        }
        if analysis.framesTruncated { Blocks.note(&w, "The timeline shows the first \(Format.count(analysis.frames.count)) frames.") }
        w.element("div", [Attribute("class", "inspector"), Attribute.id(inspectorID), Attribute("aria-live", "polite")])
        if !analysis.hitchAttributions.isEmpty {
            w.element("h3", text: "Hitching frames (worst first)")
            let shownOpen = 8
            for attribution in analysis.hitchAttributions.prefix(shownOpen) {
                hitchDetails(&w, attribution)
            }
            if analysis.hitchAttributions.count > shownOpen {
                w.element("details", [Attribute("class", "more")]) { w in
                    w.element("summary", text: "\(analysis.hitchAttributions.count - shownOpen) more hitching frames")
                    for attribution in analysis.hitchAttributions.dropFirst(shownOpen) {
                        hitchDetails(&w, attribution)
                    }
                }
            }
        }
    }

    private func hitchDetails(_ w: inout HTMLWriter, _ a: HitchAttribution) {
        w.element("details", [Attribute("class", "frame")]) { w in
            w.element("summary") { w in
                w.element("strong", text: "Frame \(a.frameID)")
                w.text(" at \(Format.fixed(a.startMs / 1000, 3)) s — \(a.kind) hitch \(Format.milliseconds(a.hitchMs)); main thread \(Format.milliseconds(a.mainThreadMs)), render \(Format.milliseconds(a.renderMs))")
            }
            w.element("div", [Attribute("class", "target"), Attribute.id(fragment("f-", "\(a.run)-\(a.frameID)"))]) { w in
                w.element("div", [Attribute("class", "grid2")]) { w in
                    if !a.stages.isEmpty {
                        w.element("div") { w in
                            w.element("h3", text: "Stages")
                            Charts.horizontalBars(&w, rows: a.stages.map { Charts.BarRow(label: $0.name, value: $0.ms, valueText: Format.milliseconds($0.ms) + " ×" + Format.count($0.count)) },
                                                  title: "Stages in frame \(a.frameID)")
                        }
                    }
                    if !a.bodies.isEmpty {
                        w.element("div") { w in
                            w.element("h3", text: "Body evaluations")
                            Charts.horizontalBars(&w, rows: a.bodies.map { Charts.BarRow(label: $0.name, value: $0.ms, valueText: Format.milliseconds($0.ms) + " ×" + Format.count($0.count), series: 1) },
                                                  title: "Body evaluations in frame \(a.frameID)")
                        }
                    }
                }
                if !a.concurrentStages.isEmpty {
                    w.element("p", [Attribute("class", "note")],
                              text: "Meanwhile on other threads (not part of the frame, competing for the CPU): "
                                  + a.concurrentStages.map { "\($0.name) \(Format.milliseconds($0.ms))" }.joined(separator: ", "))
                }
                if !a.stacks.isEmpty {
                    w.element("h3", text: "Top main-thread stacks")
                    for stack in a.stacks {
                        w.element("p", [Attribute("class", "note")], text: "\(Format.count(stack.samples)) samples")
                        w.element("ol", [Attribute("class", "stack")]) { w in
                            for frame in stack.frames.prefix(24) { w.element("li") { $0.name(frame) } }
                        }
                    }
                }
            }
        }
    }

    // MARK: Frame times

    func frameTimes(_ w: inout HTMLWriter) {
        let histogram = analysis.recorded.frameTimeHistogram
        let p = analysis.recorded.frameTimeMs
        if !histogram.counts.isEmpty, histogram.binMs > 0 {
            // About 50 bins up to past the P99 (at least past the 60 Hz deadline), each a whole number
            // of the analysis' bins; the tail goes into the last bin.
            let upper = min(max(p.p99.isFinite ? p.p99 * 1.25 : 0, HTMLReport.deadlinesMs[1] * 1.2),
                            Double(histogram.counts.count) * histogram.binMs)
            let step = max(1, Int(((SVGCanvas.ticks(upTo: upper, count: 50).dropFirst().first ?? 1) / histogram.binMs).rounded()))
            let binMs = Double(step) * histogram.binMs
            let binCount = max(1, Int((upper / binMs).rounded(.up)))
            var counts = [Int](repeating: 0, count: binCount)
            for (index, count) in histogram.counts.enumerated() { counts[min(binCount - 1, index / step)] += count }
            let bins = counts.enumerated().map { Charts.Bin(lowerMs: Double($0.offset) * binMs, upperMs: Double($0.offset + 1) * binMs, count: $0.element) }
            Charts.histogram(&w, bins: bins,
                             markers: [Charts.Marker(label: "P50", valueMs: p.p50), Charts.Marker(label: "P95", valueMs: p.p95), Charts.Marker(label: "P99", valueMs: p.p99)],
                             deadlinesMs: HTMLReport.deadlinesMs, title: "Frame-time histogram")
            Blocks.note(&w, "Frame time of the recorded frames (last bin holds everything from \(Format.significant(Double(binCount - 1) * binMs)) ms up).")
        }
        var table = TableBuilder([("Rate", false), ("Frame P50", true), ("P90", true), ("P95", true), ("P99", true), ("Max", true),
                                  ("Overrun P95", true), ("Overrun P99", true), ("Slow", true), ("Frozen", true)])
        let rates = ratesInOrder
        let recordedIsARate = rates.contains { $0.source == "recorded" && $0.rateHz == analysis.recorded.rateHz }
        for figures in (recordedIsARate ? [] : [analysis.recorded]) + rates where figures.frameCount > 0 {
            let f = figures.frameTimeMs, o = figures.overrunMs
            table.add([.text(Context.rateTitle(figures)), ms(f.p50), ms(f.p90), ms(f.p95), ms(f.p99), ms(f.max), ms(o.p95), ms(o.p99),
                       .number(Double(figures.slowFrames), Format.count(figures.slowFrames)),
                       .number(Double(figures.frozenFrames), Format.count(figures.frozenFrames))])
        }
        table.write(&w, fragment: fragment("t-", "percentiles"))
    }

    private func ms(_ value: Double) -> TableBuilder.Cell { .number(value, Format.milliseconds(value)) }

    // MARK: Offenders

    func offenders(_ w: inout HTMLWriter) {
        if !analysis.offenders.isEmpty {
            Blocks.note(&w, "What ran on the main thread during hitches, weighted by hitch time.")
            let kinds = ["stage", "view", "function"]
            Charts.horizontalBars(&w, rows: analysis.offenders.prefix(15).map {
                Charts.BarRow(label: $0.kind + ": " + $0.name, value: $0.weightedHitchMs,
                              valueText: Format.milliseconds($0.weightedHitchMs) + " in " + Format.count($0.hitchingFrames) + " frames",
                              series: kinds.firstIndex(of: $0.kind) ?? 3)
            }, title: "Top offenders")
        }
        let attributions = analysis.hitchAttributions.sorted { ($0.run, $0.startMs, $0.frameID) < ($1.run, $1.startMs, $1.frameID) }
        let withStages = attributions.filter { !$0.stages.isEmpty }
        if !withStages.isEmpty {
            // Series: stages in order of first appearance across the worst frames (top 9), the rest as "other".
            var seriesOrder: [String] = []
            for attribution in analysis.hitchAttributions { for stage in attribution.stages where !seriesOrder.contains(stage.name) { seriesOrder.append(stage.name) } }
            let shown = Array(seriesOrder.prefix(9))
            let series = shown + (seriesOrder.count > shown.count ? ["other"] : [])
            let columns = withStages.map { attribution -> Charts.StackedColumn in
                var values = [Double](repeating: 0, count: series.count)
                for stage in attribution.stages {
                    if let index = shown.firstIndex(of: stage.name) { values[index] += stage.ms } else { values[series.count - 1] += stage.ms }
                }
                return Charts.StackedColumn(label: "frame \(attribution.frameID)", values: values, detail: fragment("f-", "\(attribution.run)-\(attribution.frameID)"))
            }
            w.element("h3", text: "Stages per hitching frame (in time order)")
            Charts.stackedBars(&w, columns: columns, series: series, unit: "ms", title: "Stage time in each hitching frame",
                               referenceLines: HTMLReport.deadlinesMs)
        }
    }

    // MARK: Stages

    func stages(_ w: inout HTMLWriter) {
        let hottest = Set(analysis.stages.filter { $0.inHitchingFramesMs > 0 }.sorted { $0.inHitchingFramesMs > $1.inHitchingFramesMs }.prefix(3).map(\.name))
        let bySelfTime = analysis.stages.sorted { ($0.selfMs, $1.name) > ($1.selfMs, $0.name) }
        Charts.horizontalBars(&w, rows: bySelfTime.prefix(12).map {
            Charts.BarRow(label: $0.name, value: $0.selfMs, valueText: Format.milliseconds($0.selfMs) + " self", highlight: hottest.contains($0.name))
        }, title: "Stage self time")
        Blocks.note(&w, "Self time excludes nested stages. Highlighted: the stages with the most time inside hitching frames.")
        var table = TableBuilder([("Stage", false), ("Count", true), ("Total", true), ("Self", true), ("Mean", true), ("P95", true), ("Max", true),
                                  ("Main-thread share", true), ("On main", true), ("In hitches", true), ("Threads", false)])
        for stage in analysis.stages {
            table.add([.name(stage.name), .number(Double(stage.count), Format.count(stage.count)), ms(stage.totalMs), ms(stage.selfMs),
                       ms(stage.meanMs), ms(stage.p95Ms), ms(stage.maxMs),
                       .number(stage.mainThreadShare, Format.percent(stage.mainThreadShare)),
                       .number(stage.onMainThreadFraction, Format.percent(stage.onMainThreadFraction)),
                       ms(stage.inHitchingFramesMs), .name(stage.threads.joined(separator: ", "))],
                      highlight: hottest.contains(stage.name))
        }
        table.write(&w, fragment: fragment("t-", "stages"), filterable: true)
        if analysis.layout.passes > 0 {
            Blocks.facts(&w, [("Layout passes", Format.count(analysis.layout.passes)), ("Layout time", Format.milliseconds(analysis.layout.totalMs)),
                              ("Longest pass", Format.milliseconds(analysis.layout.maxMs)), ("Views laid out", Format.count(analysis.layout.viewsLaidOut))])
        }
    }

    // MARK: Views

    func views(_ w: inout HTMLWriter) {
        if !analysis.views.isEmpty {
            w.element("div", [Attribute("class", "grid2")]) { w in
                w.element("div") { w in
                    w.element("h3", text: "Top views by body time")
                    Charts.horizontalBars(&w, rows: analysis.views.prefix(10).map {
                        Charts.BarRow(label: $0.type, value: $0.totalMs, valueText: Format.milliseconds($0.totalMs), highlight: $0.longUpdatesOver1ms > 0)
                    }, title: "Body time per view type")
                }
                w.element("div") { w in
                    w.element("h3", text: "Top views by evaluations")
                    Charts.horizontalBars(&w, rows: analysis.views.sorted { ($0.bodyEvaluations, $1.type) > ($1.bodyEvaluations, $0.type) }.prefix(10).map {
                        Charts.BarRow(label: $0.type, value: Double($0.bodyEvaluations), valueText: Format.count($0.bodyEvaluations), series: 1)
                    }, title: "Body evaluations per view type")
                }
            }
            var table = TableBuilder([("View type", false), ("Evaluations", true), ("Per frame", true), ("Total", true), ("Max", true),
                                      ("> 500 µs", true), ("> 1 ms", true)])
            for view in analysis.views {
                table.add([.name(view.type), .number(Double(view.bodyEvaluations), Format.count(view.bodyEvaluations)),
                           .number(view.evaluationsPerFrame, Format.significant(view.evaluationsPerFrame)), ms(view.totalMs), ms(view.maxMs),
                           view.longUpdates > 0 ? .badge("warning", Format.count(view.longUpdates)) : .number(0, "0"),
                           view.longUpdatesOver1ms > 0 ? .badge("critical", Format.count(view.longUpdatesOver1ms)) : .number(0, "0")],
                          highlight: view.longUpdatesOver1ms > 0)
            }
            table.write(&w, fragment: fragment("t-", "views"), filterable: true,
                        caption: "Long updates: orange over 500 µs, red over 1 ms (Instruments' thresholds).")
        }
        if !analysis.invalidations.isEmpty {
            w.element("h3", text: "Invalidations: cause → effect")
            let edges = analysis.invalidations.prefix(30).map { edge in
                Charts.Edge(source: edge.writer.map { edge.source + " (" + $0 + ")" } ?? edge.source, target: edge.target, count: edge.count)
            }
            Charts.causeEffectGraph(&w, edges: Array(edges), title: "Invalidation graph")
            if analysis.invalidations.count > 30 { Blocks.note(&w, "The graph shows the 30 most frequent of \(Format.count(analysis.invalidations.count)) edges.") }
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

    // MARK: Samples

    func flameGraphs(_ w: inout HTMLWriter) {
        let samples = analysis.samples
        Blocks.stats(&w, [("main-thread samples", Format.count(samples.mainThreadSamples)), ("in hitching frames", Format.count(samples.samplesInHitches))])
        if !samples.foldedInHitches.isEmpty {
            w.element("h3", text: "During hitching frames")
            Charts.flameGraph(&w, stacks: samples.foldedInHitches.map(folded), title: "Flame graph of main-thread samples in hitching frames")
        }
        if !samples.folded.isEmpty {
            w.element("h3", text: "All main-thread samples")
            Charts.flameGraph(&w, stacks: samples.folded.map(folded), title: "Flame graph of all main-thread samples")
        }
        Blocks.note(&w, "Icicle layout: callers above callees; width is the share of samples. Hover a frame for its count.")
    }

    private func folded(_ stack: FoldedStack) -> Charts.FoldedStack {
        Charts.FoldedStack(frames: stack.stack.split(separator: ";", omittingEmptySubsequences: false).map(String.init), count: stack.count)
    }

    // MARK: LLM

    func llm(_ w: inout HTMLWriter) {
        if let decode = analysis.decode {
            Blocks.stats(&w, [
                ("decode tokens/s (median)", Format.significant(decode.tokensPerSecond)),
                ("best tokens/s", Format.significant(decode.bestTokensPerSecond)),
                ("time to first token", Format.milliseconds(decode.timeToFirstTokenMs)),
                ("prefill tokens/s", Format.significant(decode.prefillTokensPerSecond)),
                ("per token", Format.milliseconds(decode.msPerToken)),
                ("bytes per token", Format.bytes(decode.bytesPerToken)),
                ("achieved bandwidth", Format.significant(decode.bandwidthGBps) + " GB/s"),
            ] + (decode.peakBandwidthGBps > 0 ? [("of measured peak " + Format.significant(decode.peakBandwidthGBps) + " GB/s", Format.percent(decode.utilization))] : []))
            if decode.peakBandwidthMayBeCacheBound {
                Blocks.note(&w, "The bandwidth probe's arrays were below 4x the last-level cache (memory did not allow more): the measured peak may be a cache figure, and utilization is judged against it.")
            }
            if decode.notBandwidthBound {
                w.element("p") { w in
                    w.element("span", [Attribute("class", "badge critical")], text: "not bandwidth-bound")
                    w.text("Decode uses under 30% of the measured peak bandwidth: time goes elsewhere than reading weights.")
                }
            }
            w.element("h3", text: "Bytes per token")
            Blocks.meter(&w, parts: [("weights", decode.weightBytesPerToken), ("KV cache", decode.kvCacheBytesPerToken), ("other", decode.otherBytesPerToken)],
                         limit: decode.bytesPerToken, unitText: Format.bytes, isBudget: false)
            if !decode.ops.isEmpty {
                w.element("div", [Attribute("class", "grid2")]) { w in
                    w.element("div") { w in
                        w.element("h3", text: "Time per op")
                        Charts.horizontalBars(&w, rows: decode.ops.map {
                            Charts.BarRow(label: $0.name, value: $0.timeShare, valueText: Format.percent($0.timeShare) + " · " + Format.milliseconds($0.totalMs))
                        }, title: "Share of op time")
                    }
                    w.element("div") { w in
                        w.element("h3", text: "Bandwidth per op")
                        Charts.horizontalBars(&w, rows: decode.ops.map {
                            Charts.BarRow(label: $0.name, value: $0.bandwidthGBps, valueText: Format.significant($0.bandwidthGBps) + " GB/s",
                                          highlight: $0.bound == "compute", series: 2)
                        }, title: "Achieved GB/s per op", maximum: decode.peakBandwidthGBps)
                    }
                }
                if decode.peakBandwidthGBps > 0 && decode.peakGFLOPS > 0 {
                    w.element("h3", text: "Roofline")
                    Charts.roofline(&w, peakBandwidthGBps: decode.peakBandwidthGBps, peakGflops: decode.peakGFLOPS,
                                    points: decode.ops.map { Charts.RooflinePoint(label: $0.name, flopsPerByte: $0.flopsPerByte, achievedGflops: $0.gflops, boundBy: $0.bound + "-bound") },
                                    title: "Roofline of decode ops")
                    Blocks.note(&w, "Ridge point at \(Format.significant(decode.ridgeFlopsPerByte)) FLOP/byte: ops left of it are bandwidth-bound, right of it compute-bound.")
                }
                var table = TableBuilder([("Op", false), ("Unit", false), ("Count", true), ("Total", true), ("Time share", true), ("GB/s", true),
                                          ("GFLOP/s", true), ("FLOP/byte", true), ("Bound", false), ("Of roofline", true)])
                for op in decode.ops {
                    table.add([.name(op.name), .name(op.computeUnit), .number(Double(op.count), Format.count(op.count)), ms(op.totalMs),
                               .number(op.timeShare, Format.percent(op.timeShare)), .number(op.bandwidthGBps, Format.significant(op.bandwidthGBps)),
                               .number(op.gflops, Format.significant(op.gflops)), .number(op.flopsPerByte, Format.significant(op.flopsPerByte)),
                               .badge(op.bound == "compute" ? "warning" : "neutral", op.bound),
                               .number(op.rooflineEfficiency, Format.percent(op.rooflineEfficiency))])
                }
                table.write(&w, fragment: fragment("t-", "ops"))
            }
            let memory = decode.memory
            if memory.totalBytes > 0 {
                w.element("h3", text: "Memory budget")
                Blocks.meter(&w, parts: [(memory.weightsBytesEstimated ? "weights (estimated)" : "weights", Double(memory.weightsBytes)),
                                         (memory.kvCacheBytesEstimated ? "KV cache (estimated)" : "KV cache", Double(memory.kvCacheBytes)),
                                         ("peak resident", Double(memory.peakResidentBytes))],
                             limit: Double(memory.deviceBudgetBytes), unitText: Format.bytes)
            }
        }
        if let tokens = analysis.tokens {
            w.element("h3", text: "Tokens produced vs shown")
            Charts.horizontalBars(&w, rows: [
                Charts.BarRow(label: "produced", value: Double(tokens.produced), valueText: Format.count(tokens.produced)),
                Charts.BarRow(label: "delivered", value: Double(tokens.delivered), valueText: Format.count(tokens.delivered), series: 4),
                Charts.BarRow(label: "shown", value: Double(tokens.shown), valueText: Format.count(tokens.shown), series: 2),
                Charts.BarRow(label: "dropped", value: Double(tokens.dropped), valueText: Format.count(tokens.dropped), highlight: tokens.dropped > 0),
                Charts.BarRow(label: "lost", value: Double(tokens.lost), valueText: Format.count(tokens.lost), highlight: tokens.lost > 0),
            ], title: "Token counts")
            let latency = tokens.tokenToScreenMs
            Blocks.facts(&w, [("Token to screen P50 / P95 / P99", "\(Format.milliseconds(latency.p50)) / \(Format.milliseconds(latency.p95)) / \(Format.milliseconds(latency.p99))"),
                              ("P95 in frames", Format.significant(tokens.tokenToScreenP95Frames))])
        }
    }

    // MARK: Trace info

    func traceInfo(_ w: inout HTMLWriter) {
        var runs = TableBuilder([("Trace", false), ("Events", true), ("Dropped", true), ("Duration", true), ("Frames", true)])
        for run in analysis.runs {
            runs.add([.name(run.path), .number(Double(run.eventCount), Format.count(run.eventCount)),
                      .number(Double(run.droppedEvents), Format.count(run.droppedEvents)), ms(run.durationMs),
                      .number(Double(run.frameCount), Format.count(run.frameCount))], highlight: run.droppedEvents > 0)
        }
        runs.write(&w, fragment: fragment("t-", "runs"))
        if !analysis.metadata.isEmpty {
            w.element("h3", text: "Metadata")
            Blocks.facts(&w, analysis.metadata.keys.sorted().prefix(60).map { ($0, analysis.metadata[$0] ?? "") })
        }
        if !analysis.warnings.isEmpty {
            w.element("h3", text: "Warnings")
            w.element("ul") { w in
                for warning in analysis.warnings.prefix(50) { w.element("li") { $0.name(warning) } }
            }
        }
    }
}
