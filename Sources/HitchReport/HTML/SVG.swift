// SVG drawing on top of HTMLWriter: shapes take numbers (formatted deterministically), labels are
// escaped text, colors are CSS classes (so dark and light themes restyle every chart).

struct SVGCanvas {
    let width: Double
    let height: Double

    /// Opens an inline <svg> scaled to its container's width, with an accessible title.
    static func draw(_ writer: inout HTMLWriter, width: Double, height: Double, title: String,
                     classes: String = "chart", extra: [Attribute] = [], _ body: (inout HTMLWriter) -> Void) {
        // Wide charts keep a readable minimum width on phones and scroll sideways instead of shrinking.
        let wide = width >= 900
        if wide { writer.trusted("<div class=\"scroll wide\">") }
        defer { if wide { writer.trusted("</div>") } }
        var attributes: [Attribute] = [
            Attribute("viewBox", "0 0 \(n(width)) \(n(height))"),
            Attribute("class", classes),
            Attribute("role", "img"),
            Attribute("preserveAspectRatio", "xMinYMin meet"),
        ]
        attributes += extra
        attributes.append(Attribute("aria-label", title))
        writer.element("svg", attributes, body)
    }

    /// Coordinates in SVG user units, two decimals at most.
    static func n(_ value: Double) -> String { Format.number(value, decimals: 2) }

    static func rect(_ w: inout HTMLWriter, x: Double, y: Double, width: Double, height: Double,
                     class cls: String, tooltip: String? = nil, extra: [Attribute] = []) {
        var attributes = [Attribute("x", n(x)), Attribute("y", n(y)), Attribute("width", n(max(0, width))),
                          Attribute("height", n(max(0, height))), Attribute("class", cls)]
        attributes += extra
        if let tooltip {
            w.element("rect", attributes) { $0.element("title", text: tooltip) }
        } else {
            w.void("rect", attributes, selfClosing: true)
        }
    }

    static func line(_ w: inout HTMLWriter, x1: Double, y1: Double, x2: Double, y2: Double, class cls: String,
                     strokeWidth: Double? = nil) {
        var attributes = [Attribute("x1", n(x1)), Attribute("y1", n(y1)), Attribute("x2", n(x2)),
                          Attribute("y2", n(y2)), Attribute("class", cls)]
        if let strokeWidth { attributes.append(Attribute("stroke-width", n(strokeWidth))) }
        w.void("line", attributes, selfClosing: true)
    }

    enum Anchor: String { case start, middle, end }

    static func text(_ w: inout HTMLWriter, x: Double, y: Double, _ value: String, class cls: String = "lbl",
                     anchor: Anchor = .start, rotate: Bool = false) {
        var attributes = [Attribute("x", n(x)), Attribute("y", n(y)), Attribute("class", cls)]
        if anchor != .start { attributes.append(Attribute("text-anchor", anchor.rawValue)) }
        if rotate { attributes.append(Attribute("transform", "rotate(-90 \(n(x)) \(n(y)))")) }
        w.element("text", attributes, text: value)
    }

    static func circle(_ w: inout HTMLWriter, cx: Double, cy: Double, r: Double, class cls: String, tooltip: String?) {
        let attributes = [Attribute("cx", n(cx)), Attribute("cy", n(cy)), Attribute("r", n(r)), Attribute("class", cls)]
        if let tooltip {
            w.element("circle", attributes) { $0.element("title", text: tooltip) }
        } else {
            w.void("circle", attributes, selfClosing: true)
        }
    }

    static func path(_ w: inout HTMLWriter, _ d: String, class cls: String, strokeWidth: Double? = nil, tooltip: String? = nil) {
        var attributes = [Attribute("d", d), Attribute("class", cls)]
        if let strokeWidth { attributes.append(Attribute("stroke-width", n(strokeWidth))) }
        if let tooltip {
            w.element("path", attributes) { $0.element("title", text: tooltip) }
        } else {
            w.void("path", attributes, selfClosing: true)
        }
    }

    /// "Nice" axis ticks (1, 2, 5 × 10^k) covering 0…maximum.
    static func ticks(upTo maximum: Double, count: Int = 5) -> [Double] {
        guard maximum > 0, maximum.isFinite else { return [0] }
        let raw = maximum / Double(count)
        var step = 1.0
        while step * 10 <= raw { step *= 10 }
        while step > raw { step /= 10 }
        if step * 5 <= raw { step *= 5 } else if step * 2 <= raw { step *= 2 }
        var ticks: [Double] = []
        var value = 0.0
        while value <= maximum * 1.0001 && ticks.count < 50 { ticks.append(value); value += step }
        return ticks
    }
}
