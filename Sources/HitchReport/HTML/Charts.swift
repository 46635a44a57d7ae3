import Foundation

// Chart primitives, each drawing already-computed figures as inline SVG. They scale figures to
// pixels and lay shapes out; they never derive a metric (that is the analyzer's job).

/// A frame as the timeline draws it.
struct TimelineFrame {
    var startMs: Double          // from the start of the trace
    var durationMs: Double
    var isHitch: Bool
    var tooltip: String
    /// Where a click goes (the frame's details), when the report has them.
    var detail: Fragment?
}

enum Charts {
    static let palette = 10   // series colors s0…s9 in the stylesheet

    // MARK: Frame timeline

    /// Frames as bars against deadline lines, hitches red. Bars narrower than `minimumHitchWidth`
    /// are widened so a janky frame stays visible however many frames share the width; when there
    /// are more frames than columns, each column shows its longest frame.
    static func frameTimeline(_ w: inout HTMLWriter, frames allFrames: [TimelineFrame], deadlinesMs: [Double],
                              title: String, fragment: Fragment) {
        let frames = allFrames.filter { $0.startMs.isFinite && $0.durationMs.isFinite && abs($0.startMs) < 1e12 && abs($0.durationMs) < 1e12 }
        guard let startMs = frames.map(\.startMs).min(), let endMs = frames.map({ $0.startMs + $0.durationMs }).max() else { return }
        let width = 1000.0, height = 240.0, left = 44.0, bottom = 22.0, top = 8.0
        let plotWidth = width - left - 8, plotHeight = height - bottom - top
        let spanMs = max(1, endMs - startMs)
        let longest = frames.map(\.durationMs).max() ?? 0
        // The scale shows the deadlines and the longest frame, but is capped so one frozen frame does not
        // flatten the rest; taller bars are clipped and marked.
        let deadline = deadlinesMs.max() ?? max(longest, 1)
        let capMs = min(max(longest * 1.1, deadline * 1.25), deadline * 8)
        let yScale = plotHeight / capMs
        let columns = Int(plotWidth * 2)
        let minimumHitchWidth = 2.0

        SVGCanvas.draw(&w, width: width, height: height, title: title, classes: "chart timeline",
                       extra: [Attribute.id(fragment), Attribute("data-zoom", "1")]) { w in
            for tick in SVGCanvas.ticks(upTo: capMs, count: 4) {
                let y = top + plotHeight - tick * yScale
                SVGCanvas.line(&w, x1: left, y1: y, x2: width - 8, y2: y, class: "grid")
                SVGCanvas.text(&w, x: left - 4, y: y + 3, Format.number(tick, decimals: 3), class: "axis", anchor: .end)
            }
            SVGCanvas.text(&w, x: 10, y: top + plotHeight / 2, "ms", class: "axis", anchor: .middle, rotate: true)

            // Decimate to columns: keep the longest frame of each column, and any hitch.
            var kept: [Int: TimelineFrame] = [:]
            var order: [Int] = []
            for frame in frames {
                let column = Int(min(max((frame.startMs - startMs) / spanMs, 0), 1) * Double(columns))
                if let existing = kept[column] {
                    if (frame.isHitch && !existing.isHitch) || (frame.isHitch == existing.isHitch && frame.durationMs > existing.durationMs) {
                        kept[column] = frame
                    }
                } else {
                    kept[column] = frame
                    order.append(column)
                }
            }
            w.element("g", [Attribute("class", "bars")]) { w in
                for column in order {
                    guard let frame = kept[column] else { continue }
                    let x = left + (frame.startMs - startMs) / spanMs * plotWidth
                    var barWidth = frame.durationMs / spanMs * plotWidth
                    if frame.isHitch { barWidth = max(barWidth, minimumHitchWidth) } else { barWidth = max(barWidth, 0.5) }
                    let clipped = frame.durationMs > capMs
                    // Every frame that took any time shows at least a sliver, so idle stretches read as idle.
                    let barHeight = frame.durationMs > 0 ? max(min(frame.durationMs, capMs) * yScale, 1) : 0
                    let cls = frame.isHitch ? (clipped ? "bar hitch clipped" : "bar hitch") : "bar ok"
                    if let detail = frame.detail {
                        w.element("a", [Attribute.link(to: detail)]) { w in
                            SVGCanvas.rect(&w, x: x, y: top + plotHeight - barHeight, width: barWidth, height: barHeight,
                                           class: cls, tooltip: frame.tooltip)
                        }
                    } else {
                        SVGCanvas.rect(&w, x: x, y: top + plotHeight - barHeight, width: barWidth, height: barHeight,
                                       class: cls, tooltip: frame.tooltip)
                    }
                }
            }
            for deadline in deadlinesMs where deadline <= capMs {
                let y = top + plotHeight - deadline * yScale
                SVGCanvas.line(&w, x1: left, y1: y, x2: width - 8, y2: y, class: "deadline")
                SVGCanvas.text(&w, x: width - 10, y: y - 3, Format.fixed(deadline, 2) + " ms", class: "axis deadline-label", anchor: .end)
            }
            for tick in SVGCanvas.ticks(upTo: spanMs / 1000, count: 8) {
                let x = left + tick * 1000 / spanMs * plotWidth
                SVGCanvas.line(&w, x1: x, y1: top + plotHeight, x2: x, y2: top + plotHeight + 4, class: "axisline")
                SVGCanvas.text(&w, x: x, y: height - 6, Format.number(tick, decimals: 3) + " s", class: "axis", anchor: .middle)
            }
            SVGCanvas.line(&w, x1: left, y1: top + plotHeight, x2: width - 8, y2: top + plotHeight, class: "axisline")
        }
    }

    // MARK: Thread-state lane

    /// A frame's main-thread window split by state (ms per state, in `stateLane`'s series order).
    struct LaneFrame { var startMs: Double; var parts: [Double] }

    /// A lane under the frame timeline, on its time axis (`startMs`...`endMs`, the same plot width):
    /// each pixel column shows the share of the main thread's frame time in each state for the
    /// frames that start in it (running, runnable, blocked, machine, unknown).
    static func stateLane(_ w: inout HTMLWriter, frames: [LaneFrame], startMs: Double, endMs: Double, series: [String], title: String) {
        let width = 1000.0, height = 46.0, left = 44.0, top = 4.0, plotHeight = 34.0
        let plotWidth = width - left - 8
        let spanMs = max(1, endMs - startMs)
        let columns = Int(plotWidth)
        var sums: [Int: [Double]] = [:]
        for frame in frames where frame.startMs.isFinite && abs(frame.startMs) < 1e12 {
            let column = min(Int(min(max((frame.startMs - startMs) / spanMs, 0), 1) * Double(columns)), columns - 1)
            var sum = sums[column] ?? [Double](repeating: 0, count: series.count)
            for (i, part) in frame.parts.prefix(series.count).enumerated() where part.isFinite && part > 0 { sum[i] += part }
            sums[column] = sum
        }
        legend(&w, series)
        SVGCanvas.draw(&w, width: width, height: height, title: title, classes: "chart lane") { w in
            SVGCanvas.text(&w, x: left - 4, y: top + plotHeight / 2 + 3, "main", class: "axis", anchor: .end)
            let slot = plotWidth / Double(columns)
            for column in sums.keys.sorted() {
                guard let parts = sums[column] else { continue }
                let total = parts.reduce(0, +)
                guard total > 0 else { continue }
                var y = top
                let tooltip = zip(series, parts).filter { $0.1 > 0 }.map { "\($0.0) \(Format.milliseconds($0.1))" }.joined(separator: ", ")
                for (index, part) in parts.enumerated() where part > 0 {
                    let segment = part / total * plotHeight
                    SVGCanvas.rect(&w, x: left + Double(column) * slot, y: y, width: max(slot, 1), height: segment,
                                   class: "seg s\(index % palette)", tooltip: tooltip)
                    y += segment
                }
            }
            SVGCanvas.line(&w, x1: left, y1: top + plotHeight, x2: width - 8, y2: top + plotHeight, class: "axisline")
        }
    }

    // MARK: Hang lane

    /// A stretch the main thread spent away from its loop, as the hang lane draws it.
    struct LaneSpan { var startMs: Double; var durationMs: Double; var isHang: Bool; var tooltip: String; var detail: Fragment? }

    /// A lane under the frame timeline, on its time axis (`startMs`...`endMs`): each hang (dark) and
    /// each brief unresponsiveness (light) as a band from its start to its end, at least a pixel wide,
    /// linked to its details.
    static func hangLane(_ w: inout HTMLWriter, spans: [LaneSpan], startMs: Double, endMs: Double, title: String) {
        let width = 1000.0, height = 30.0, left = 44.0, top = 4.0, plotHeight = 20.0
        let plotWidth = width - left - 8
        let spanMs = max(1, endMs - startMs)
        func x(_ ms: Double) -> Double { left + min(max((ms - startMs) / spanMs, 0), 1) * plotWidth }
        SVGCanvas.draw(&w, width: width, height: height, title: title, classes: "chart lane") { w in
            SVGCanvas.text(&w, x: left - 4, y: top + plotHeight / 2 + 3, "hangs", class: "axis", anchor: .end)
            for span in spans where span.startMs.isFinite && span.durationMs.isFinite && abs(span.startMs) < 1e12 && abs(span.durationMs) < 1e12 {
                let x0 = x(span.startMs), x1 = x(span.startMs + span.durationMs)
                let cls = span.isHang ? "bar hang" : "bar brief"
                if let detail = span.detail {
                    w.element("a", [Attribute.link(to: detail)]) { w in
                        SVGCanvas.rect(&w, x: x0, y: top, width: max(x1 - x0, 1), height: plotHeight, class: cls, tooltip: span.tooltip)
                    }
                } else {
                    SVGCanvas.rect(&w, x: x0, y: top, width: max(x1 - x0, 1), height: plotHeight, class: cls, tooltip: span.tooltip)
                }
            }
            SVGCanvas.line(&w, x1: left, y1: top + plotHeight, x2: width - 8, y2: top + plotHeight, class: "axisline")
        }
    }

    // MARK: Histogram

    struct Bin { var lowerMs: Double; var upperMs: Double; var count: Int }
    struct Marker { var label: String; var valueMs: Double }

    /// Bars of counts per bin, with vertical marker lines (percentiles) and deadline lines.
    static func histogram(_ w: inout HTMLWriter, bins: [Bin], markers: [Marker], deadlinesMs: [Double], title: String) {
        guard let last = bins.last, let first = bins.first else { return }
        let width = 1000.0, height = 250.0, left = 44.0, bottom = 34.0, top = 14.0
        let plotWidth = width - left - 10, plotHeight = height - top - bottom
        let lowMs = first.lowerMs, highMs = max(last.upperMs, lowMs + 1e-9)
        let maxCount = max(1, bins.map(\.count).max() ?? 1)
        func x(_ ms: Double) -> Double { left + (min(max(ms, lowMs), highMs) - lowMs) / (highMs - lowMs) * plotWidth }
        SVGCanvas.draw(&w, width: width, height: height, title: title) { w in
            for tick in SVGCanvas.ticks(upTo: Double(maxCount), count: 4) {
                let y = top + plotHeight - tick / Double(maxCount) * plotHeight
                SVGCanvas.line(&w, x1: left, y1: y, x2: width - 10, y2: y, class: "grid")
                SVGCanvas.text(&w, x: left - 4, y: y + 3, Format.count(tick), class: "axis", anchor: .end)
            }
            for bin in bins where bin.count > 0 {
                let barHeight = Double(bin.count) / Double(maxCount) * plotHeight
                let x0 = x(bin.lowerMs), x1 = x(bin.upperMs)
                SVGCanvas.rect(&w, x: x0 + 0.5, y: top + plotHeight - barHeight, width: max(1, x1 - x0 - 1), height: barHeight,
                               class: "bar s0",
                               tooltip: "\(Format.significant(bin.lowerMs))–\(Format.significant(bin.upperMs)) ms: \(Format.count(bin.count)) frames")
            }
            for deadline in deadlinesMs where deadline > lowMs && deadline < highMs {
                SVGCanvas.line(&w, x1: x(deadline), y1: top, x2: x(deadline), y2: top + plotHeight, class: "deadline")
            }
            for (index, marker) in markers.enumerated() {
                let mx = x(marker.valueMs)
                SVGCanvas.line(&w, x1: mx, y1: top, x2: mx, y2: top + plotHeight, class: "marker")
                SVGCanvas.text(&w, x: mx + 2, y: top + 10 + Double(index % 2) * 11, marker.label, class: "axis marker-label")
            }
            SVGCanvas.line(&w, x1: left, y1: top + plotHeight, x2: width - 10, y2: top + plotHeight, class: "axisline")
            for tick in SVGCanvas.ticks(upTo: highMs, count: 6) where tick >= lowMs {
                SVGCanvas.text(&w, x: x(tick), y: top + plotHeight + 14, Format.number(tick, decimals: 3), class: "axis", anchor: .middle)
            }
            SVGCanvas.text(&w, x: left + plotWidth / 2, y: height - 4, "frame time (ms)", class: "axis", anchor: .middle)
        }
    }

    // MARK: Stacked bars

    struct StackedColumn { var label: String; var values: [Double]; var detail: Fragment? }

    /// One column per item (frame, keystroke), segments per series, with a legend.
    static func stackedBars(_ w: inout HTMLWriter, columns: [StackedColumn], series: [String], unit: String,
                            title: String, referenceLines: [Double] = []) {
        guard !columns.isEmpty, !series.isEmpty else { return }
        let width = 1000.0, height = 240.0, left = 44.0, bottom = 22.0, top = 10.0
        let plotWidth = width - left - 8, plotHeight = height - top - bottom
        let maxTotal = max(columns.map { $0.values.reduce(0, +) }.max() ?? 1, referenceLines.max() ?? 0, 1e-9)
        let slot = plotWidth / Double(columns.count)
        let barWidth = max(1, slot * 0.8)
        legend(&w, series)
        SVGCanvas.draw(&w, width: width, height: height, title: title) { w in
            for tick in SVGCanvas.ticks(upTo: maxTotal, count: 4) {
                let y = top + plotHeight - tick / maxTotal * plotHeight
                SVGCanvas.line(&w, x1: left, y1: y, x2: width - 8, y2: y, class: "grid")
                SVGCanvas.text(&w, x: left - 4, y: y + 3, Format.number(tick, decimals: 3), class: "axis", anchor: .end)
            }
            SVGCanvas.text(&w, x: 10, y: top + plotHeight / 2, unit, class: "axis", anchor: .middle, rotate: true)
            for (index, column) in columns.enumerated() {
                var y = top + plotHeight
                let x = left + Double(index) * slot + (slot - barWidth) / 2
                for (seriesIndex, value) in column.values.enumerated() where value > 0 {
                    let segment = value / maxTotal * plotHeight
                    y -= segment
                    SVGCanvas.rect(&w, x: x, y: y, width: barWidth, height: segment, class: "seg s\(seriesIndex % palette)",
                                   tooltip: "\(column.label) · \(series[seriesIndex % series.count]): \(Format.significant(value)) \(unit)")
                }
            }
            for reference in referenceLines {
                let y = top + plotHeight - reference / maxTotal * plotHeight
                SVGCanvas.line(&w, x1: left, y1: y, x2: width - 8, y2: y, class: "deadline")
            }
            SVGCanvas.line(&w, x1: left, y1: top + plotHeight, x2: width - 8, y2: top + plotHeight, class: "axisline")
            let labelEvery = max(1, Int((Double(columns.count) * 90 / plotWidth).rounded(.up)))
            for (index, column) in columns.enumerated() where index % labelEvery == 0 {
                guard let label = ShortName.fitFromLeft(column.label, characters: 14) else { continue }
                SVGCanvas.text(&w, x: left + (Double(index) + 0.5) * slot, y: height - 6, label, class: "axis", anchor: .middle)
            }
        }
    }

    static func legend(_ w: inout HTMLWriter, _ series: [String]) {
        w.element("ul", [Attribute("class", "legend")]) { w in
            for (index, name) in series.enumerated() {
                w.element("li") { w in
                    w.element("span", [Attribute("class", "swatch s\(index % palette)")])
                    w.name(name)
                }
            }
        }
    }

    // MARK: Horizontal bars

    struct BarRow {
        var label: String
        var value: Double
        var valueText: String
        var highlight: Bool = false
        var series: Int = 0
        /// The full name when the label is shortened (shown as the tooltip).
        var fullName: String? = nil
    }

    /// Labelled horizontal bars, longest first as given. HTML (not SVG) so long names wrap between their
    /// parts and stay readable on a phone (the label takes a row of its own there); the bar is a styled
    /// span whose width is a number.
    static func horizontalBars(_ w: inout HTMLWriter, rows: [BarRow], title: String, maximum: Double? = nil) {
        guard !rows.isEmpty else { return }
        let top = max(maximum ?? 0, rows.map(\.value).max() ?? 0, 1e-12)
        w.element("div", [Attribute("class", "hbars"), Attribute("role", "list"), Attribute("aria-label", title)]) { w in
            for row in rows {
                w.element("div", [Attribute("class", row.highlight ? "hbar hl" : "hbar"), Attribute("role", "listitem")]) { w in
                    w.element("span", [Attribute("class", "hbar-label")] + (row.fullName.map { [Attribute("title", $0)] } ?? [])) { $0.dottedName(row.label) }
                    w.element("span", [Attribute("class", "hbar-track")]) { w in
                        w.element("span", [Attribute("class", "hbar-fill s\(row.series % palette)"),
                                           Attribute.style([("width", max(0, row.value) / top * 100, "%")])])
                    }
                    w.element("span", [Attribute("class", "hbar-value")], text: row.valueText)
                }
            }
        }
    }

    // MARK: Roofline

    struct RooflinePoint { var label: String; var flopsPerByte: Double; var achievedGflops: Double; var boundBy: String }

    /// Log-log roofline: attainable GFLOP/s = min(peak compute, intensity × peak bandwidth), each op a point.
    static func roofline(_ w: inout HTMLWriter, peakBandwidthGBps: Double, peakGflops: Double,
                         points: [RooflinePoint], title: String) {
        guard peakBandwidthGBps > 0, peakGflops > 0, peakBandwidthGBps.isFinite, peakGflops.isFinite else { return }
        let width = 640.0, height = 360.0, left = 56.0, bottom = 40.0, top = 14.0, right = 14.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let ridge = peakGflops / peakBandwidthGBps
        let points = points.filter { $0.flopsPerByte.isFinite && $0.achievedGflops.isFinite }
        let intensities = points.map(\.flopsPerByte).filter { $0 > 0 } + [ridge]
        let performances = points.map(\.achievedGflops).filter { $0 > 0 } + [peakGflops]
        let xLow = floorPow10(min(intensities.min() ?? 0.1, ridge / 10)), xHigh = ceilPow10(max(intensities.max() ?? 10, ridge * 10) * 1.01)
        // Points above the roof (a peak measured too low) stay on the chart, visibly over it.
        let yLow = floorPow10(min(performances.min() ?? 1, peakGflops / 100)), yHigh = ceilPow10(max(performances.max() ?? 0, peakGflops) * 2)
        func px(_ v: Double) -> Double { left + (log10(max(v, xLow)) - log10(xLow)) / (log10(xHigh) - log10(xLow)) * plotWidth }
        func py(_ v: Double) -> Double { top + plotHeight - (log10(max(v, yLow)) - log10(yLow)) / (log10(yHigh) - log10(yLow)) * plotHeight }
        SVGCanvas.draw(&w, width: width, height: height, title: title, classes: "chart narrow") { w in
            var decade = xLow
            while decade <= xHigh * 1.001 {
                SVGCanvas.line(&w, x1: px(decade), y1: top, x2: px(decade), y2: top + plotHeight, class: "grid")
                SVGCanvas.text(&w, x: px(decade), y: top + plotHeight + 14, Format.number(decade, decimals: 4), class: "axis", anchor: .middle)
                decade *= 10
            }
            decade = yLow
            while decade <= yHigh * 1.001 {
                SVGCanvas.line(&w, x1: left, y1: py(decade), x2: left + plotWidth, y2: py(decade), class: "grid")
                SVGCanvas.text(&w, x: left - 4, y: py(decade) + 3, Format.number(decade, decimals: 4), class: "axis", anchor: .end)
                decade *= 10
            }
            // The roof: bandwidth slope up to the ridge point, then flat at peak compute.
            let slopeStart = max(xLow, yLow / peakBandwidthGBps)
            SVGCanvas.path(&w, "M\(SVGCanvas.n(px(slopeStart))) \(SVGCanvas.n(py(slopeStart * peakBandwidthGBps))) L\(SVGCanvas.n(px(ridge))) \(SVGCanvas.n(py(peakGflops))) L\(SVGCanvas.n(px(xHigh))) \(SVGCanvas.n(py(peakGflops)))",
                           class: "roof", strokeWidth: 2)
            SVGCanvas.text(&w, x: px(ridge) + 6, y: py(peakGflops) - 5, "peak \(Format.significant(peakGflops)) GFLOP/s", class: "axis")
            SVGCanvas.text(&w, x: px(slopeStart) + 4, y: py(slopeStart * peakBandwidthGBps) - 6,
                           "\(Format.significant(peakBandwidthGBps)) GB/s", class: "axis")
            for (index, point) in points.enumerated() where point.flopsPerByte > 0 && point.achievedGflops > 0 {
                let cx = px(point.flopsPerByte), cy = py(point.achievedGflops)
                SVGCanvas.circle(&w, cx: cx, cy: cy, r: 4.5, class: "pt s\(index % palette)",
                                 tooltip: "\(point.label): \(Format.significant(point.flopsPerByte)) FLOP/B, \(Format.significant(point.achievedGflops)) GFLOP/s, \(point.boundBy)")
                // Alternate label sides so neighbouring ops do not print over each other.
                let onLeft = index % 2 == 1
                if let label = ShortName.fitFromLeft(point.label, characters: 16) {
                    SVGCanvas.text(&w, x: onLeft ? cx - 6 : cx + 6, y: cy + 3, label, class: "lbl small", anchor: onLeft ? .end : .start)
                }
            }
            SVGCanvas.line(&w, x1: left, y1: top + plotHeight, x2: left + plotWidth, y2: top + plotHeight, class: "axisline")
            SVGCanvas.line(&w, x1: left, y1: top, x2: left, y2: top + plotHeight, class: "axisline")
            SVGCanvas.text(&w, x: left + plotWidth / 2, y: height - 6, "arithmetic intensity (FLOP/byte, log)", class: "axis", anchor: .middle)
            SVGCanvas.text(&w, x: 12, y: top + plotHeight / 2, "GFLOP/s (log)", class: "axis", anchor: .middle, rotate: true)
        }
    }

    private static func log10(_ v: Double) -> Double { Foundation.log10(v) }
    private static func floorPow10(_ v: Double) -> Double {
        guard v > 0, v.isFinite else { return 0.01 }
        var p = 1.0
        while p > v { p /= 10 }
        while p * 10 <= v { p *= 10 }
        return p
    }
    private static func ceilPow10(_ v: Double) -> Double {
        guard v > 0, v.isFinite else { return 1 }
        var p = floorPow10(v)
        if p < v { p *= 10 }
        return p
    }

    // MARK: Cause -> effect graph

    struct Edge { var source: String; var target: String; var count: Int }

    /// A two-column node-link graph: written properties (causes) on the left, invalidated views (effects)
    /// on the right, links as curves whose thickness follows the count.
    static func causeEffectGraph(_ w: inout HTMLWriter, edges: [Edge], title: String) {
        guard !edges.isEmpty else { return }
        var sources: [String] = [], targets: [String] = []
        var sourceTotals: [String: Int] = [:], targetTotals: [String: Int] = [:]
        for edge in edges {
            if sourceTotals[edge.source] == nil { sources.append(edge.source) }
            if targetTotals[edge.target] == nil { targets.append(edge.target) }
            sourceTotals[edge.source, default: 0] += edge.count
            targetTotals[edge.target, default: 0] += edge.count
        }
        // Drawn at its natural size (max-width in the stylesheet) with 14 px labels; on a phone it keeps
        // a readable width and scrolls sideways instead of shrinking its text.
        let rowHeight = 30.0, top = 26.0
        let height = top + Double(max(sources.count, targets.count)) * rowHeight + 8
        let width = 900.0, nodeWidth = 320.0, leftX = 4.0, rightX = width - nodeWidth - 4
        let labelCharacters = 36
        let maxCount = Double(max(1, edges.map(\.count).max() ?? 1))
        func sy(_ i: Int, _ total: Int) -> Double { top + (Double(i) + 0.5) * rowHeight * Double(max(sources.count, targets.count)) / Double(total) }
        SVGCanvas.draw(&w, width: width, height: height, title: title, classes: "chart graph") { w in
            SVGCanvas.text(&w, x: leftX, y: 15, "cause (written property)", class: "axis")
            SVGCanvas.text(&w, x: rightX + nodeWidth, y: 15, "effect (invalidated view)", class: "axis", anchor: .end)
            let sourceIndex = Dictionary(uniqueKeysWithValues: sources.enumerated().map { ($1, $0) })
            let targetIndex = Dictionary(uniqueKeysWithValues: targets.enumerated().map { ($1, $0) })
            for edge in edges {
                guard let s = sourceIndex[edge.source], let t = targetIndex[edge.target] else { continue }
                let y1 = sy(s, sources.count), y2 = sy(t, targets.count)
                let x1 = leftX + nodeWidth, x2 = rightX
                let mid = (x1 + x2) / 2
                let d = "M\(SVGCanvas.n(x1)) \(SVGCanvas.n(y1)) C\(SVGCanvas.n(mid)) \(SVGCanvas.n(y1)) \(SVGCanvas.n(mid)) \(SVGCanvas.n(y2)) \(SVGCanvas.n(x2)) \(SVGCanvas.n(y2))"
                SVGCanvas.path(&w, d, class: "link", strokeWidth: 1 + 7 * Double(edge.count) / maxCount,
                               tooltip: "\(edge.source) → \(edge.target): \(Format.count(edge.count))")
            }
            func node(_ name: String, x: Double, y: Double, total: Int, class cls: String) {
                SVGCanvas.rect(&w, x: x, y: y - 12, width: nodeWidth, height: 24, class: cls,
                               tooltip: "\(name): \(Format.count(total)) invalidations")
                let count = " ×" + Format.count(total)
                let label = ShortName.fitFromLeft(name, characters: labelCharacters - count.count) ?? ""
                SVGCanvas.text(&w, x: x + 7, y: y + 5, label + count, class: "lbl graph-label")
            }
            for (i, source) in sources.enumerated() {
                node(source, x: leftX, y: sy(i, sources.count), total: sourceTotals[source] ?? 0, class: "node cause")
            }
            for (i, target) in targets.enumerated() {
                node(target, x: rightX, y: sy(i, targets.count), total: targetTotals[target] ?? 0, class: "node effect")
            }
        }
    }
}
