// Commit turns the laid-out tree into a display list (what the render thread draws), and the
// renderer rasterizes it into a pixel buffer, redrawing only the damaged region.

public enum DisplayItem: Sendable, Equatable {
    case fill(Rect, Color)
    case text(Rect, lines: [String], fontSize: Double, color: Color)
    case image(Rect, ImagePixels?)

    public static func == (a: DisplayItem, b: DisplayItem) -> Bool {
        switch (a, b) {
        case let (.fill(r1, c1), .fill(r2, c2)): r1 == r2 && c1 == c2
        case let (.text(r1, l1, f1, c1), .text(r2, l2, f2, c2)): r1 == r2 && l1 == l2 && f1 == f2 && c1 == c2
        case let (.image(r1, p1), .image(r2, p2)): r1 == r2 && p1 === p2
        default: false
        }
    }

    var bounds: Rect {
        switch self {
        case .fill(let rect, _), .text(let rect, _, _, _), .image(let rect, _): rect
        }
    }
}

public struct DisplayList: Sendable {
    public var items: [DisplayItem] = []
    public var viewport: Size
}

extension ViewGraph {
    /// The commit: the visible items in tree order. Reserves what the last list held, so a frame
    /// like the last allocates the list once.
    func buildDisplayList(viewport: Size) -> DisplayList {
        var list = DisplayList(viewport: viewport)
        list.items.reserveCapacity(lastDisplayItemCount)
        appendItems(of: root, clip: Rect(origin: .zero, size: viewport), to: &list.items)
        lastDisplayItemCount = list.items.count
        return list
    }

    private func appendItems(of node: ViewNode, clip: Rect, to items: inout [DisplayItem]) {
        let visible = node.frame.intersection(clip)
        var clip = clip
        switch node.kind {
        case .text(let text):
            guard !visible.isEmpty else { return }
            items.append(.text(node.frame, lines: textLines(of: node, text), fontSize: text.fontSize, color: text.color))
        case .image(let image):
            if !visible.isEmpty { items.append(.image(node.frame, image.pixels)) }
        case .color(let color, _), .background(let color):
            if !visible.isEmpty { items.append(.fill(visible, color)) }
        case .lazyList:
            clip = visible
        default:
            break
        }
        for child in node.children { appendItems(of: child, clip: clip, to: &items) }
    }

    /// A Text's lines at its placed width, wrapped once and kept until the node updates or moves
    /// to another width.
    private func textLines(of node: ViewNode, _ text: Text) -> [String] {
        let width = node.frame.size.width
        if let cached = node.textLines, cached.width == width { return cached.lines }
        let utf8 = Array(text.string.utf8)
        let lines = TextMetrics.lines(text.string, fontSize: text.fontSize, width: width + 0.5, lineLimit: text.lineLimit)
            .map { String(decoding: utf8[$0.utf8Range], as: UTF8.self) }
        node.textLines = (width, lines)
        return lines
    }
}

/// Rasterizes display lists into an RGBA buffer the size of the viewport. Text is drawn as
/// glyph boxes at each character's advance; images are scaled (nearest) into their rect.
public final class Rasterizer {
    public let width: Int
    public let height: Int
    public private(set) var pixels: [UInt8]
    private var previous: [DisplayItem] = []

    public init(viewport: Size) {
        width = max(1, Int(viewport.width))
        height = max(1, Int(viewport.height))
        pixels = [UInt8](repeating: 255, count: width * height * 4)
    }

    /// Draws `list`, repainting only the union of what changed since the last list. Returns the damage.
    @discardableResult
    public func render(_ list: DisplayList) -> Rect {
        var damage = Rect(x: 0, y: 0, width: 0, height: 0)
        let count = max(list.items.count, previous.count)
        for index in 0..<count {
            let new = index < list.items.count ? list.items[index] : nil
            let old = index < previous.count ? previous[index] : nil
            if new != old {
                if let new { damage = damage.union(new.bounds) }
                if let old { damage = damage.union(old.bounds) }
            }
        }
        damage = damage.intersection(Rect(x: 0, y: 0, width: Double(width), height: Double(height)))
        if !damage.isEmpty {
            fill(damage, .white, clip: damage)
            for item in list.items where !item.bounds.intersection(damage).isEmpty {
                draw(item, clip: damage)
            }
        }
        previous = list.items
        return damage
    }

    private func draw(_ item: DisplayItem, clip: Rect) {
        switch item {
        case .fill(let rect, let color):
            fill(rect, color, clip: clip)
        case .text(let rect, let lines, let fontSize, let color):
            let lineHeight = TextMetrics.lineHeight(fontSize: fontSize)
            for (number, line) in lines.enumerated() {
                var x = rect.minX
                let y = rect.minY + Double(number) * lineHeight + fontSize * 0.25
                for scalar in line.unicodeScalars {
                    let advance = TextMetrics.advance(of: scalar, fontSize: fontSize)
                    if scalar != " " {
                        fill(Rect(x: x + advance * 0.1, y: y, width: advance * 0.8, height: fontSize * 0.75), color, clip: clip)
                    }
                    x += advance
                }
            }
        case .image(let rect, let image):
            guard let image else {
                fill(rect, Color(red: 220, green: 220, blue: 220), clip: clip)
                return
            }
            blit(image, into: rect, clip: clip)
        }
    }

    private func pixelBounds(_ rect: Rect, _ clip: Rect) -> (x0: Int, y0: Int, x1: Int, y1: Int) {
        let area = rect.intersection(clip)
        let x0 = max(0, Int(area.minX)), y0 = max(0, Int(area.minY))
        let x1 = min(width, Int(area.maxX.rounded(.up))), y1 = min(height, Int(area.maxY.rounded(.up)))
        return (x0, y0, x1, y1)
    }

    private func fill(_ rect: Rect, _ color: Color, clip: Rect) {
        let (x0, y0, x1, y1) = pixelBounds(rect, clip)
        guard x0 < x1, y0 < y1 else { return }
        let width = self.width
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in y0..<y1 {
                var index = (y * width + x0) * 4
                for _ in x0..<x1 {
                    buffer[index] = color.red; buffer[index + 1] = color.green
                    buffer[index + 2] = color.blue; buffer[index + 3] = 255
                    index += 4
                }
            }
        }
    }

    private func blit(_ image: ImagePixels, into rect: Rect, clip: Rect) {
        let (x0, y0, x1, y1) = pixelBounds(rect, clip)
        guard x0 < x1, y0 < y1, rect.size.width > 0, rect.size.height > 0 else { return }
        let width = self.width
        let scaleX = Double(image.width) / rect.size.width, scaleY = Double(image.height) / rect.size.height
        image.rgba.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { buffer in
                for y in y0..<y1 {
                    let sy = min(image.height - 1, Int((Double(y) - rect.minY) * scaleY))
                    var index = (y * width + x0) * 4
                    for x in x0..<x1 {
                        let sx = min(image.width - 1, Int((Double(x) - rect.minX) * scaleX))
                        let from = (sy * image.width + sx) * 4
                        buffer[index] = source[from]; buffer[index + 1] = source[from + 1]
                        buffer[index + 2] = source[from + 2]; buffer[index + 3] = 255
                        index += 4
                    }
                }
            }
        }
    }
}
