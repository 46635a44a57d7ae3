import HitchAnalysis

// The trend page of `hitch history report`: one chart per metric along a branch's runs, change
// points marked, every drawn point linking to its run's row. Charts lead with the hitch time ratios,
// then the hitch causes and decode figures (`FigureGroup`); a series that never moved folds into one
// list (the hitch time ratios are always drawn); labels come from `DisplayNames`. Same page, escaping and CSP as the
// other reports. A long history is down-sampled to a fixed number of columns (150) (each column draws
// its last run as a point and its min-max as a bar, so no spike hides), and every change point's
// run is always drawn.

public struct TrendReportInput: Sendable {
    public struct Run: Sendable {
        public var id: String
        public var commit: String
        public var branch: String
        /// Already formatted (UTC), so the page does not depend on the clock or locale.
        public var time: String
        public var machine: String
        public var tags: [String]
        public var traces: [String]
        public init(id: String, commit: String, branch: String, time: String, machine: String, tags: [String], traces: [String]) {
            self.id = id; self.commit = commit; self.branch = branch; self.time = time; self.machine = machine
            self.tags = tags; self.traces = traces
        }
    }

    public struct Change: Sendable {
        /// The first run at the new level.
        public var runIndex: Int
        /// "regression", "improvement" or "unchanged".
        public var verdict: String
        /// One line: "3.0 -> 6.1 (+103%), commits a1b2..c3d4".
        public var summary: String
        public init(runIndex: Int, verdict: String, summary: String) {
            self.runIndex = runIndex; self.verdict = verdict; self.summary = summary
        }
    }

    /// Every metric's change points at one run: one change in the code (`HistoryChange`).
    public struct ChangeGroup: Sendable {
        /// The first run at the new level.
        public var runIndex: Int
        /// "regression", "improvement" or "unchanged".
        public var verdict: String
        /// One line, led by the figure that tells it: "regression at a1b2..c3d4: hitch time ratio …".
        public var summary: String
        /// The metrics that moved here, the leading one first.
        public var metrics: [String]
        public init(runIndex: Int, verdict: String, summary: String, metrics: [String]) {
            self.runIndex = runIndex; self.verdict = verdict; self.summary = summary; self.metrics = metrics
        }
    }

    public struct Metric: Sendable {
        public var name: String
        /// One value per run (nil where the run lacks the figure).
        public var values: [Double?]
        public var changes: [Change]
        public init(name: String, values: [Double?], changes: [Change]) {
            self.name = name; self.values = values; self.changes = changes
        }
    }

    public var title: String
    public var subtitle: [String]
    public var runs: [Run]
    public var metrics: [Metric]
    /// The change points grouped by run, oldest first.
    public var changeGroups: [ChangeGroup]

    public init(title: String, subtitle: [String], runs: [Run], metrics: [Metric], changeGroups: [ChangeGroup] = []) {
        self.title = title; self.subtitle = subtitle; self.runs = runs; self.metrics = metrics; self.changeGroups = changeGroups
    }
}

public enum TrendReport {
    public static func render(_ input: TrendReportInput, columns: Int = 150) -> String {
        let columns = max(1, min(columns, input.runs.count))
        // Column c holds runs [bounds[c], bounds[c + 1]); the same columns for every metric, so the
        // runs drawn (and listed below) are few whatever the history's length.
        let bounds = (0...columns).map { $0 * input.runs.count / columns }
        var linked = Set<Int>()
        var sections: [PageSection] = []
        let runFragments = input.runs.indices.map { Fragment("run-", $0 + 1) }
        sections.append(PageSection(fragment: Fragment("sec-", "summary"), title: "Changes") { w in
            summary(&w, input: input, runFragments: runFragments)
        })
        // Reader's order: hitch time ratios, causes, decode, other hitch figures, work, the recorder.
        let ordered = input.metrics.enumerated().sorted {
            (FigureGroup(metric: $0.element.name), $0.offset) < (FigureGroup(metric: $1.element.name), $1.offset)
        }.map(\.element)
        let flat = ordered.filter { isFlat($0) && FigureGroup(metric: $0.name) != .hitchTimeRatio }
        let flatNames = Set(flat.map(\.name))
        var charts: [(metric: TrendReportInput.Metric, points: [Int])] = []
        for metric in ordered where !flatNames.contains(metric.name) {
            let points = drawnRuns(metric, bounds: bounds)
            linked.formUnion(points)
            charts.append((metric, points))
        }
        for (metric, points) in charts {
            sections.append(PageSection(fragment: Fragment("m-", metric.name), title: DisplayNames.metric(metric.name)) { w in
                w.element("p", [Attribute("class", "note")]) { $0.element("code", text: metric.name) }
                chart(&w, metric: metric, points: points, bounds: bounds, runs: input.runs, runFragments: runFragments)
            })
        }
        if !flat.isEmpty {
            sections.append(PageSection(fragment: Fragment("sec-", "flat"), title: "Flat series") { w in
                flatList(&w, flat)
            })
        }
        sections.append(PageSection(fragment: Fragment("sec-", "runs"), title: "Runs") { w in
            runTable(&w, input: input, shown: linked.sorted(), runFragments: runFragments)
        })
        // The summary and the first chart (a hitch time ratio) come before the navigation of every chart.
        return Page.render(title: input.title, subtitle: input.subtitle, sections: sections,
                           footer: "hitch history report · change points by E-divisive means (docs/HISTORY.md)",
                           leadSections: min(2, sections.count))
    }

    /// True when every run that has the figure has the same value (and so no change point).
    static func isFlat(_ metric: TrendReportInput.Metric) -> Bool {
        let present = metric.values.compactMap { $0 }
        guard let first = present.first else { return true }
        return metric.changes.isEmpty && present.allSatisfy { $0 == first }
    }

    /// The series that never moved, folded into one list: their one value each.
    static func flatList(_ w: inout HTMLWriter, _ metrics: [TrendReportInput.Metric]) {
        w.element("details", [Attribute("class", "more")]) { w in
            w.element("summary", text: "\(metrics.count) flat series (the same value in every run)")
            var table = TableBuilder([("Figure", false), ("Metric", false), ("Value", true)])
            for metric in metrics {
                let value = metric.values.compactMap { $0 }.first
                table.add([.name(DisplayNames.metric(metric.name)), .name(metric.name),
                           value.map { .number($0, Format.significant($0)) } ?? .text("–")])
            }
            table.write(&w, fragment: Fragment("t-", "flat"))
        }
    }

    /// The runs a metric's chart draws as points: each column's last run with a value, and every
    /// change point's run.
    static func drawnRuns(_ metric: TrendReportInput.Metric, bounds: [Int]) -> [Int] {
        var points = Set(metric.changes.map(\.runIndex))
        for c in 0..<(bounds.count - 1) {
            if let last = (bounds[c]..<bounds[c + 1]).last(where: { metric.values.indices.contains($0) && metric.values[$0] != nil }) {
                points.insert(last)
            }
        }
        return points.sorted()
    }

    static func summary(_ w: inout HTMLWriter, input: TrendReportInput, runFragments: [Fragment]) {
        let points = input.metrics.reduce(0) { $0 + $1.changes.count }
        let groups = input.changeGroups
        Blocks.stats(&w, [("runs", String(input.runs.count)), ("metrics", String(input.metrics.count)),
                          ("changes (commit ranges)", String(groups.count)),
                          ("regressions", String(groups.filter { $0.verdict == "regression" }.count)),
                          ("change points (all metrics)", String(points))])
        guard !groups.isEmpty else { Blocks.note(&w, "No change points: every metric held its level."); return }
        Blocks.note(&w, "One change in the code moves many figures at once: each row is every metric's change point at one run, "
                    + "led by the figure that tells it best. Shifts below the threshold are rows marked \"unchanged\".")
        w.element("div", [Attribute("class", "scroll")]) { w in
            w.element("table") { w in
                w.element("thead") { w in
                    w.element("tr") { w in for title in ["first run at new level", "change", "figures", "verdict"] { w.element("th", text: title) } }
                }
                w.element("tbody") { w in
                    for group in groups {
                        w.element("tr", group.verdict == "regression" ? [Attribute("class", "hl")] : []) { w in
                            w.element("td") { w in
                                if input.runs.indices.contains(group.runIndex) {
                                    w.element("a", [Attribute.link(to: runFragments[group.runIndex])]) { $0.name(input.runs[group.runIndex].commit) }
                                }
                            }
                            w.element("td", [Attribute("class", "wrap")]) { w in
                                if let lead = group.metrics.first {
                                    w.element("a", [Attribute.link(to: Fragment("m-", lead)), Attribute("title", lead)]) { $0.name(group.summary) }
                                }
                            }
                            w.element("td", [Attribute("title", group.metrics.joined(separator: ", "))], text: String(group.metrics.count))
                            w.element("td") { w in
                                w.element("span", [Attribute("class", "badge " + badge(group.verdict))], text: group.verdict)
                            }
                        }
                    }
                }
            }
        }
    }

    static func badge(_ verdict: String) -> String {
        switch verdict { case "regression": "bad"; case "improvement": "good"; default: "neutral" }
    }

    static func chart(_ w: inout HTMLWriter, metric: TrendReportInput.Metric, points: [Int], bounds: [Int], runs: [TrendReportInput.Run],
                      runFragments: [Fragment]) {
        let present = metric.values.compactMap { $0 }.filter(\.isFinite)
        guard let low = present.min(), let high = present.max() else { Blocks.note(&w, "No values."); return }
        let width = 1000.0, height = 200.0, left = 56.0, right = 8.0, top = 8.0, bottom = 20.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let base = min(0, low)
        let ticks = SVGCanvas.ticks(upTo: max(high - base, 1e-9), count: 4).map { $0 + base }
        let ceiling = max(ticks.last ?? high, high)
        let yScale = plotHeight / max(ceiling - base, 1e-12)
        let count = max(metric.values.count, 1)
        func x(_ run: Int) -> Double { left + (Double(run) + 0.5) / Double(count) * plotWidth }
        func y(_ value: Double) -> Double { top + plotHeight - (value - base) * yScale }
        SVGCanvas.draw(&w, width: width, height: height, title: DisplayNames.metric(metric.name) + " along " + String(runs.count) + " runs",
                       extra: [Attribute("data-metric", metric.name)]) { w in
            for tick in ticks {
                SVGCanvas.line(&w, x1: left, y1: y(tick), x2: width - right, y2: y(tick), class: "grid")
                SVGCanvas.text(&w, x: left - 4, y: y(tick) + 3, Format.significant(tick), class: "axis", anchor: .end)
            }
            // Each column's range (one path), so a spike between drawn points still shows.
            var ranges = ""
            for c in 0..<(bounds.count - 1) where bounds[c + 1] - bounds[c] > 1 {
                let values = metric.values[bounds[c]..<min(bounds[c + 1], metric.values.count)].compactMap { $0 }
                if let lo = values.min(), let hi = values.max(), hi > lo {
                    let mid = (x(bounds[c]) + x(bounds[c + 1] - 1)) / 2
                    ranges += "M" + SVGCanvas.n(mid) + " " + SVGCanvas.n(y(hi)) + "V" + SVGCanvas.n(y(lo))
                }
            }
            if !ranges.isEmpty { SVGCanvas.path(&w, ranges, class: "grid", strokeWidth: 3) }
            for change in metric.changes {
                let at = x(change.runIndex) - 0.5 * plotWidth / Double(count)
                SVGCanvas.line(&w, x1: at, y1: top, x2: at, y2: top + plotHeight, class: "marker")
                // Named on the chart, so a change point reads without the tooltip.
                let words = change.verdict == "unchanged" ? "shift" : change.verdict
                SVGCanvas.text(&w, x: at + 3, y: top + 10, words + " at run " + String(change.runIndex + 1), class: "axis marker-label")
            }
            let drawn = points.compactMap { run in metric.values[run].map { (run, $0) } }
            if drawn.count > 1 {
                let d = drawn.enumerated().map { ($0.offset == 0 ? "M" : "L") + SVGCanvas.n(x($0.element.0)) + " " + SVGCanvas.n(y($0.element.1)) }.joined()
                SVGCanvas.path(&w, d, class: "link")
            }
            let changed = Dictionary(metric.changes.map { ($0.runIndex, $0) }, uniquingKeysWith: { a, _ in a })
            for (run, value) in drawn {
                var tooltip = runs[run].commit + " · " + Format.significant(value)
                var cls = "pt s0"
                var radius = 2.5
                if let change = changed[run] {
                    tooltip += " · change point: " + change.summary
                    cls = change.verdict == "regression" ? "pt s9" : "pt s2"
                    radius = 4.5
                }
                w.element("a", [Attribute.link(to: runFragments[run])]) { w in
                    SVGCanvas.circle(&w, cx: x(run), cy: y(value), r: radius, class: cls, tooltip: tooltip)
                }
            }
            SVGCanvas.text(&w, x: left, y: height - 4, runs.first?.commit ?? "", class: "axis")
            SVGCanvas.text(&w, x: width - right, y: height - 4, runs.last?.commit ?? "", class: "axis", anchor: .end)
        }
        if metric.values.count > bounds.count - 1 {
            Blocks.note(&w, "\(metric.values.count) runs in \(bounds.count - 1) columns: a point is each column's last run, the bar its range; change points are always drawn.")
        }
    }

    static func runTable(_ w: inout HTMLWriter, input: TrendReportInput, shown: [Int], runFragments: [Fragment]) {
        if shown.count < input.runs.count {
            Blocks.note(&w, "The \(shown.count) runs drawn on the charts, of \(input.runs.count) (hitch history list shows all).")
        }
        w.element("div", [Attribute("class", "scroll")]) { w in
            w.element("table") { w in
                w.element("thead") { w in
                    w.element("tr") { w in for title in ["#", "commit", "time", "machine", "tags", "traces", "run id"] { w.element("th", text: title) } }
                }
                w.element("tbody") { w in
                    for index in shown where input.runs.indices.contains(index) {
                        let run = input.runs[index]
                        w.element("tr", [Attribute.id(runFragments[index])]) { w in
                            w.element("td", text: String(index + 1))
                            w.element("td") { $0.name(run.commit) }
                            w.element("td", text: run.time)
                            w.element("td") { $0.name(run.machine) }
                            w.element("td") { $0.name(run.tags.joined(separator: ", ")) }
                            w.element("td") { $0.name(run.traces.joined(separator: ", ")) }
                            w.element("td") { $0.name(String(run.id.prefix(16))) }
                        }
                    }
                }
            }
        }
    }
}
