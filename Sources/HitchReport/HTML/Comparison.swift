import HitchAnalysis

// The "What changed" table of a BASE/NEW report: the same figures read from both analyses, side by
// side, with the change colored by whether it is better or worse. The relative change is the only
// arithmetic here, and it is presentation (how far apart two shown numbers are), not a metric.

struct Comparison {
    let base: Analysis
    let new: Analysis
    let baseLabel: String
    let newLabel: String

    enum Better { case lower, higher }

    struct Row {
        var figure: String
        var base: Double?
        var new: Double?
        var format: (Double) -> String
        var better: Better
    }

    var rows: [Row] {
        var rows: [Row] = []
        let rates = Set(base.hitches.keys).union(new.hitches.keys).sorted { (Double($0) ?? 0, $0) < (Double($1) ?? 0, $1) }
        for rate in rates {
            let b = base.hitches[rate], n = new.hitches[rate]
            rows.append(Row(figure: "Hitch time ratio @ \(rate) Hz (ms/s)", base: b?.hitchTimeRatioMsPerS, new: n?.hitchTimeRatioMsPerS, format: { Format.fixed($0, 2) }, better: .lower))
            rows.append(Row(figure: "Hitches @ \(rate) Hz", base: b.map { Double($0.hitchCount) }, new: n.map { Double($0.hitchCount) }, format: Format.count, better: .lower))
            rows.append(Row(figure: "Longest hitch @ \(rate) Hz", base: b?.longestHitchMs, new: n?.longestHitchMs, format: Format.milliseconds, better: .lower))
        }
        if base.recorded.frameCount > 0 || new.recorded.frameCount > 0 {
            rows.append(Row(figure: "Frames", base: Double(base.recorded.frameCount), new: Double(new.recorded.frameCount), format: Format.count, better: .higher))
            rows.append(Row(figure: "Frame time P95", base: base.recorded.frameTimeMs.p95, new: new.recorded.frameTimeMs.p95, format: Format.milliseconds, better: .lower))
            rows.append(Row(figure: "Frame time P99", base: base.recorded.frameTimeMs.p99, new: new.recorded.frameTimeMs.p99, format: Format.milliseconds, better: .lower))
        }
        // Stages: the union, in the base's order then the new ones; main-thread self time is what hitches.
        var stageNames = base.stages.prefix(12).map(\.name)
        for stage in new.stages.prefix(12) where !stageNames.contains(stage.name) { stageNames.append(stage.name) }
        for name in stageNames {
            let b = base.stages.first { $0.name == name }, n = new.stages.first { $0.name == name }
            rows.append(Row(figure: "Stage \(name): self time", base: b?.selfMs, new: n?.selfMs, format: Format.milliseconds, better: .lower))
            rows.append(Row(figure: "Stage \(name): main-thread share", base: b?.mainThreadShare, new: n?.mainThreadShare, format: Format.percent, better: .lower))
        }
        var viewNames = base.views.prefix(8).map(\.type)
        for view in new.views.prefix(8) where !viewNames.contains(view.type) { viewNames.append(view.type) }
        for name in viewNames {
            let b = base.views.first { $0.type == name }, n = new.views.first { $0.type == name }
            rows.append(Row(figure: "View \(name): body evaluations", base: b.map { Double($0.bodyEvaluations) }, new: n.map { Double($0.bodyEvaluations) }, format: Format.count, better: .lower))
            rows.append(Row(figure: "View \(name): body time", base: b?.totalMs, new: n?.totalMs, format: Format.milliseconds, better: .lower))
        }
        if base.decode != nil || new.decode != nil {
            let b = base.decode, n = new.decode
            rows.append(Row(figure: "Decode tokens/s", base: b?.tokensPerSecond, new: n?.tokensPerSecond, format: Format.significant, better: .higher))
            rows.append(Row(figure: "Time to first token", base: b?.timeToFirstTokenMs, new: n?.timeToFirstTokenMs, format: Format.milliseconds, better: .lower))
            rows.append(Row(figure: "Bytes per token", base: b?.bytesPerToken, new: n?.bytesPerToken, format: Format.bytes, better: .lower))
            rows.append(Row(figure: "Decode bandwidth (GB/s)", base: b?.bandwidthGBps, new: n?.bandwidthGBps, format: Format.significant, better: .higher))
            rows.append(Row(figure: "Bandwidth utilization", base: b?.utilization, new: n?.utilization, format: Format.percent, better: .higher))
        }
        if base.tokens != nil || new.tokens != nil {
            rows.append(Row(figure: "Tokens dropped", base: base.tokens.map { Double($0.dropped) }, new: new.tokens.map { Double($0.dropped) }, format: Format.count, better: .lower))
            rows.append(Row(figure: "Token to screen P95", base: base.tokens?.tokenToScreenMs.p95, new: new.tokens?.tokenToScreenMs.p95, format: Format.milliseconds, better: .lower))
        }
        rows.append(Row(figure: "Dropped events", base: Double(base.droppedEvents), new: Double(new.droppedEvents), format: Format.count, better: .lower))
        return rows
    }

    enum Change: Int { case worse = 0, better = 1, same = 2, incomparable = 3 }

    /// How a row changed: significant when the relative change is at least 2%.
    static func change(_ row: Row) -> (Change, String) {
        guard let b = row.base, let n = row.new else { return (.incomparable, "—") }
        let relative = b == 0 ? (n == 0 ? 0 : Double.infinity * (n > 0 ? 1 : -1)) : (n - b) / abs(b)
        guard abs(relative) >= 0.02 && abs(n - b) > 1e-9 else { return (.same, "≈") }
        let improved = (row.better == .lower) == (n < b)
        let text = relative.isFinite ? Format.signedPercent(relative) : (n > b ? "from 0" : "to 0")
        return (improved ? .better : .worse, text)
    }

    func changes(_ w: inout HTMLWriter) {
        let judged = rows.map { (row: $0, change: Comparison.change($0)) }
        let changed = judged.filter { $0.change.0 == .worse || $0.change.0 == .better }
            .enumerated().sorted { ($0.element.change.0.rawValue, $0.offset) < ($1.element.change.0.rawValue, $1.offset) }.map(\.element)
        let unchanged = judged.filter { $0.change.0 == .same || $0.change.0 == .incomparable }
        let worse = changed.filter { $0.change.0 == .worse }.count
        Blocks.stats(&w, [("worse in NEW", Format.count(worse)), ("better in NEW", Format.count(changed.count - worse)),
                          ("unchanged (within 2%)", Format.count(unchanged.count))])
        func table(_ w: inout HTMLWriter, _ rows: [(row: Row, change: (Change, String))], _ id: String) {
            var table = TableBuilder([("Figure", false), ("Base", true), ("New", true), ("Change", true)])
            for item in rows {
                let row = item.row
                let baseCell: TableBuilder.Cell = row.base.map { .number($0, row.format($0)) } ?? .text("—")
                let newCell: TableBuilder.Cell = row.new.map { .number($0, row.format($0)) } ?? .text("—")
                let changeCell: TableBuilder.Cell
                switch item.change.0 {
                case .worse: changeCell = .badge("bad", item.change.1)
                case .better: changeCell = .badge("good", item.change.1)
                case .same, .incomparable: changeCell = .text(item.change.1)
                }
                table.add([.name(row.figure), baseCell, newCell, changeCell], highlight: item.change.0 == .worse)
            }
            table.write(&w, fragment: Fragment("t-", id), filterable: true)
        }
        if changed.isEmpty {
            Blocks.note(&w, "No figure changed by 2% or more.")
        } else {
            Blocks.note(&w, "Worse first (red), then better (green).")
            table(&w, changed, "changed")
        }
        if !unchanged.isEmpty {
            w.element("details", [Attribute("class", "more")]) { w in
                w.element("summary", text: "\(unchanged.count) figures unchanged or present in one run only")
                table(&w, unchanged, "unchanged")
            }
        }
    }
}
