// Layout is SwiftUI's negotiation: the parent proposes a size, the child chooses its own, the
// parent places it. Sizes are cached per node and proposal until the node's subtree updates.

/// Sizes a node chose for the proposals it was given. Kept across passes until the node or a
/// descendant updates (then it and its ancestors drop theirs), so unchanged rows are not measured
/// again every frame.
struct LayoutCache {
    var entries: [(ProposedSize, Size)] = []
    mutating func invalidate() { entries.removeAll(keepingCapacity: true) }
}

/// Text metrics from the string itself: per-character advances (a proportional font's rough
/// classes), greedy word wrap, 1.2 x font size lines.
public enum TextMetrics {
    public static func advance(of scalar: Unicode.Scalar, fontSize: Double) -> Double {
        let em: Double
        switch scalar {
        case "i", "l", "j", "t", "f", "r", ".", ",", ":", ";", "'", "!", "|", "I": em = 0.28
        case " ": em = 0.27
        case "m", "w", "M", "W", "@": em = 0.86
        case "A"..."Z", "0"..."9": em = 0.64
        default: em = scalar.isASCII ? 0.53 : 0.9
        }
        return em * fontSize
    }

    public static func lineHeight(fontSize: Double) -> Double { (fontSize * 1.2).rounded(.up) }

    /// Lines (as UTF-8 offset ranges) and their widths for a width limit (nil: one line).
    public static func lines(_ string: String, fontSize: Double, width limit: Double?, lineLimit: Int?) -> [TextLine] {
        var lines: [TextLine] = []
        var lineStart = 0, lineWidth = 0.0
        var wordStart = 0, wordWidth = 0.0
        var offset = 0
        let maxLines = lineLimit ?? Int.max
        let spaceWidth = advance(of: " ", fontSize: fontSize)
        func breakLine(at end: Int, width: Double) {
            lines.append(TextLine(utf8Range: lineStart..<end, width: width))
        }
        for scalar in string.unicodeScalars {
            let length = UTF8.width(scalar)
            if scalar == " " || scalar == "\n" {
                if let limit = limit, lineWidth + wordWidth > limit, lineWidth > 0 {
                    breakLine(at: wordStart - 1, width: lineWidth - spaceWidth)
                    if lines.count == maxLines { return lines }
                    lineStart = wordStart
                    lineWidth = 0
                }
                lineWidth += wordWidth
                if scalar == "\n" {
                    breakLine(at: offset, width: lineWidth)
                    if lines.count == maxLines { return lines }
                    lineStart = offset + 1
                    lineWidth = 0
                } else {
                    lineWidth += spaceWidth
                }
                wordStart = offset + length
                wordWidth = 0
            } else {
                wordWidth += advance(of: scalar, fontSize: fontSize)
            }
            offset += length
        }
        if let limit = limit, lineWidth + wordWidth > limit, lineWidth > 0 {
            breakLine(at: wordStart - 1, width: lineWidth - spaceWidth)
            if lines.count == maxLines { return lines }
            lineStart = wordStart
            lineWidth = 0
        }
        if offset > lineStart || lines.isEmpty { breakLine(at: offset, width: lineWidth + wordWidth) }
        return lines
    }

    public static func size(_ text: Text, proposedWidth: Double?) -> Size {
        let lines = lines(text.string, fontSize: text.fontSize, width: proposedWidth, lineLimit: text.lineLimit)
        var width = lines.reduce(0) { max($0, $1.width) }
        if let proposedWidth { width = min(width, proposedWidth) }
        return Size(width: width.rounded(.up), height: Double(lines.count) * lineHeight(fontSize: text.fontSize))
    }
}

public struct TextLine: Equatable, Sendable {
    public var utf8Range: Range<Int>
    public var width: Double
}

extension ViewGraph {
    /// One layout pass from the root with the viewport as the proposal.
    func layout(viewport: Size) {
        let size = sizeThatFits(root, ProposedSize(width: viewport.width, height: viewport.height))
        place(root, in: Rect(origin: .zero, size: Size(width: min(size.width, viewport.width), height: min(size.height, viewport.height))))
        statistics.layoutPasses += 1
    }

    func sizeThatFits(_ node: ViewNode, _ proposal: ProposedSize) -> Size {
        if let hit = node.layoutCache.entries.first(where: { $0.0 == proposal }) { return hit.1 }
        let size = computeSize(node, proposal)
        if node.layoutCache.entries.count >= 8 { node.layoutCache.entries.removeFirst() }
        node.layoutCache.entries.append((proposal, size))
        return size
    }

    private func computeSize(_ node: ViewNode, _ proposal: ProposedSize) -> Size {
        guard let primitive = node.primitive else {
            return node.children.first.map { sizeThatFits($0, proposal) } ?? .zero
        }
        switch primitive {
        case .empty:
            return .zero
        case .text(let text):
            return TextMetrics.size(text, proposedWidth: proposal.width)
        case .image(let image):
            return image.size
        case .color(_, let size):
            return size ?? Size(width: proposal.width ?? 0, height: proposal.height ?? 0)
        case .spacer(let minLength):
            if parentAxis(of: node) == .horizontal {
                return Size(width: max(minLength, proposal.width ?? minLength), height: 0)
            }
            return Size(width: 0, height: max(minLength, proposal.height ?? minLength))
        case .group:
            return stackSizes(node, StackLayout(axis: .vertical, spacing: 0), proposal).size
        case .stack(let layout, _):
            return stackSizes(node, layout, proposal).size
        case .padding(let insets, _):
            guard let child = node.children.first else { return .zero }
            let inner = ProposedSize(width: proposal.width.map { max(0, $0 - insets.leading - insets.trailing) },
                                     height: proposal.height.map { max(0, $0 - insets.top - insets.bottom) })
            let size = sizeThatFits(child, inner)
            return Size(width: size.width + insets.leading + insets.trailing, height: size.height + insets.top + insets.bottom)
        case .frame(let width, let height, _):
            guard let child = node.children.first else { return Size(width: width ?? 0, height: height ?? 0) }
            let size = sizeThatFits(child, ProposedSize(width: width ?? proposal.width, height: height ?? proposal.height))
            return Size(width: width ?? size.width, height: height ?? size.height)
        case .background:
            return node.children.first.map { sizeThatFits($0, proposal) } ?? .zero
        case .lazyList:
            return Size(width: proposal.width ?? 320, height: proposal.height ?? 480)
        }
    }

    private func parentAxis(of node: ViewNode) -> Axis? {
        guard let parent = node.parent, case .stack(let layout, _)? = parent.primitive else { return nil }
        return layout.axis
    }

    /// A stack's child sizes and its own. Vertical: each child gets the full width and its ideal
    /// height; spacers share what is left. Horizontal: SwiftUI's rule: the least flexible child is
    /// offered its share of the remaining width first, then the next.
    private func stackSizes(_ node: ViewNode, _ layout: StackLayout, _ proposal: ProposedSize) -> (size: Size, children: [Size]) {
        let children = node.children
        guard !children.isEmpty else { return (.zero, []) }
        let totalSpacing = layout.spacing * Double(children.count - 1)
        var sizes = [Size](repeating: .zero, count: children.count)
        let isSpacer = children.map { if case .spacer? = $0.primitive { true } else { false } }
        switch layout.axis {
        case .vertical:
            var used = totalSpacing
            for (index, child) in children.enumerated() where !isSpacer[index] {
                sizes[index] = sizeThatFits(child, ProposedSize(width: proposal.width, height: nil))
                used += sizes[index].height
            }
            let spacerCount = isSpacer.filter { $0 }.count
            if spacerCount > 0 {
                let share = proposal.height.map { max(0, $0 - used) / Double(spacerCount) }
                for (index, child) in children.enumerated() where isSpacer[index] {
                    sizes[index] = sizeThatFits(child, ProposedSize(width: 0, height: share))
                }
            }
            let width = sizes.reduce(0) { max($0, $1.width) }
            let height = sizes.reduce(totalSpacing) { $0 + $1.height }
            return (Size(width: width, height: height), sizes)
        case .horizontal:
            guard let available = proposal.width else {
                for (index, child) in children.enumerated() {
                    sizes[index] = sizeThatFits(child, ProposedSize(width: nil, height: proposal.height))
                }
                let width = sizes.reduce(totalSpacing) { $0 + $1.width }
                return (Size(width: width, height: sizes.reduce(0) { max($0, $1.height) }), sizes)
            }
            let flexibility = children.map { child -> Double in
                let smallest = sizeThatFits(child, ProposedSize(width: 0, height: proposal.height)).width
                let largest = sizeThatFits(child, ProposedSize(width: .greatestFiniteMagnitude, height: proposal.height)).width
                return largest - smallest
            }
            var remaining = max(0, available - totalSpacing)
            var left = children.count
            for index in children.indices.sorted(by: { flexibility[$0] < flexibility[$1] }) {
                let share = remaining / Double(left)
                sizes[index] = sizeThatFits(children[index], ProposedSize(width: share, height: proposal.height))
                remaining = max(0, remaining - sizes[index].width)
                left -= 1
            }
            let width = sizes.reduce(totalSpacing) { $0 + $1.width }
            return (Size(width: width, height: sizes.reduce(0) { max($0, $1.height) }), sizes)
        }
    }

    /// Places a node at an absolute rect and its children inside it.
    func place(_ node: ViewNode, in rect: Rect) {
        node.frame = rect
        guard let primitive = node.primitive else {
            if let child = node.children.first { place(child, in: rect) }
            return
        }
        switch primitive {
        case .empty, .text, .image, .color, .spacer:
            return
        case .group:
            placeStack(node, StackLayout(axis: .vertical, spacing: 0), rect)
        case .stack(let layout, _):
            placeStack(node, layout, rect)
        case .padding(let insets, _):
            guard let child = node.children.first else { return }
            place(child, in: Rect(x: rect.minX + insets.leading, y: rect.minY + insets.top,
                                  width: max(0, rect.size.width - insets.leading - insets.trailing),
                                  height: max(0, rect.size.height - insets.top - insets.bottom)))
        case .frame:
            guard let child = node.children.first else { return }
            let size = sizeThatFits(child, ProposedSize(width: rect.size.width, height: rect.size.height))
            place(child, in: Rect(x: rect.minX + (rect.size.width - size.width) / 2,
                                  y: rect.minY + (rect.size.height - size.height) / 2,
                                  width: size.width, height: size.height))
        case .background:
            if let child = node.children.first { place(child, in: rect) }
        case .lazyList:
            placeLazyList(node, in: rect)
        }
    }

    private func placeStack(_ node: ViewNode, _ layout: StackLayout, _ rect: Rect) {
        let (_, sizes) = stackSizes(node, layout, ProposedSize(width: rect.size.width, height: rect.size.height))
        var cursor = layout.axis == .vertical ? rect.minY : rect.minX
        for (child, size) in zip(node.children, sizes) {
            switch layout.axis {
            case .vertical:
                place(child, in: Rect(x: rect.minX, y: cursor, width: size.width, height: size.height))
                cursor += size.height + layout.spacing
            case .horizontal:
                place(child, in: Rect(x: cursor, y: rect.minY + (rect.size.height - size.height) / 2,
                                      width: size.width, height: size.height))
                cursor += size.width + layout.spacing
            }
        }
    }
}
