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
        switch node.kind {
        case .composite:
            return node.children.first.map { sizeThatFits($0, proposal) } ?? .zero
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
            return stackSize(node, StackLayout(axis: .vertical, spacing: 0), proposal)
        case .stack(let layout):
            return stackSize(node, layout, proposal)
        case .padding(let insets):
            guard let child = node.children.first else { return .zero }
            let inner = ProposedSize(width: proposal.width.map { max(0, $0 - insets.leading - insets.trailing) },
                                     height: proposal.height.map { max(0, $0 - insets.top - insets.bottom) })
            let size = sizeThatFits(child, inner)
            return Size(width: size.width + insets.leading + insets.trailing, height: size.height + insets.top + insets.bottom)
        case .frame(let width, let height):
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
        guard let parent = node.parent, case .stack(let layout) = parent.kind else { return nil }
        return layout.axis
    }

    private func stackSize(_ node: ViewNode, _ layout: StackLayout, _ proposal: ProposedSize) -> Size {
        withStackSizes(node, layout, proposal) { size, _ in size }
    }

    /// A stack's child sizes and its own. Vertical: each child gets the full width and its ideal
    /// height; spacers share what is left. Horizontal: SwiftUI's rule: the least flexible child is
    /// offered its share of the remaining width first, then the next. The child sizes live in
    /// `sizeScratch[base...]` for the duration of `body` (a stack nested in a child pushes its own
    /// above them), so no stack allocates per pass; `body` reads them by index.
    private func withStackSizes<T>(_ node: ViewNode, _ layout: StackLayout, _ proposal: ProposedSize,
                                   _ body: (_ size: Size, _ base: Int) -> T) -> T {
        let children = node.children
        guard !children.isEmpty else { return body(.zero, sizeScratch.count) }
        let count = children.count
        let base = sizeScratch.count
        sizeScratch.append(contentsOf: repeatElement(.zero, count: count))
        defer { sizeScratch.removeLast(count) }
        let totalSpacing = layout.spacing * Double(count - 1)
        let own: Size
        switch layout.axis {
        case .vertical:
            var used = totalSpacing
            var spacerCount = 0
            for (index, child) in children.enumerated() {
                if child.kind.isSpacer { spacerCount += 1; continue }
                let size = sizeThatFits(child, ProposedSize(width: proposal.width, height: nil))
                sizeScratch[base + index] = size
                used += size.height
            }
            if spacerCount > 0 {
                let share = proposal.height.map { max(0, $0 - used) / Double(spacerCount) }
                for (index, child) in children.enumerated() where child.kind.isSpacer {
                    sizeScratch[base + index] = sizeThatFits(child, ProposedSize(width: 0, height: share))
                }
            }
            var width = 0.0, height = totalSpacing
            for size in sizeScratch[base...] { width = max(width, size.width); height += size.height }
            own = Size(width: width, height: height)
        case .horizontal:
            if let available = proposal.width {
                let flexibilityBase = flexibilityScratch.count
                for child in children {
                    let smallest = sizeThatFits(child, ProposedSize(width: 0, height: proposal.height)).width
                    let largest = sizeThatFits(child, ProposedSize(width: .greatestFiniteMagnitude, height: proposal.height)).width
                    flexibilityScratch.append(largest - smallest)
                }
                defer { flexibilityScratch.removeLast(count) }
                var remaining = max(0, available - totalSpacing)
                var left = count
                // Least flexible first (ties in child order); a stack has few children, so picking
                // the next one by a scan costs less than sorting into a new array.
                var done = 0
                while done < count {
                    var next = -1
                    for index in 0..<count where !flexibilityScratch[flexibilityBase + index].isNaN {
                        if next < 0 || flexibilityScratch[flexibilityBase + index] < flexibilityScratch[flexibilityBase + next] { next = index }
                    }
                    if next < 0 { break }
                    flexibilityScratch[flexibilityBase + next] = .nan   // placed
                    let share = remaining / Double(left)
                    let size = sizeThatFits(children[next], ProposedSize(width: share, height: proposal.height))
                    sizeScratch[base + next] = size
                    remaining = max(0, remaining - size.width)
                    left -= 1
                    done += 1
                }
            } else {
                for (index, child) in children.enumerated() {
                    sizeScratch[base + index] = sizeThatFits(child, ProposedSize(width: nil, height: proposal.height))
                }
            }
            var width = totalSpacing, height = 0.0
            for size in sizeScratch[base...] { width += size.width; height = max(height, size.height) }
            own = Size(width: width, height: height)
        }
        return body(own, base)
    }

    /// Places a node at an absolute rect and its children inside it. A node whose subtree is
    /// unchanged since it was placed at this size is only moved (lazy lists in it re-place rows).
    func place(_ node: ViewNode, in rect: Rect) {
        if node.placementIsCurrent, node.frame.size == rect.size {
            move(node, by: rect.minX - node.frame.minX, rect.minY - node.frame.minY)
            return
        }
        node.frame = rect
        switch node.kind {
        case .composite:
            if let child = node.children.first { place(child, in: rect) }
        case .empty, .text, .image, .color, .spacer:
            break
        case .group:
            placeStack(node, StackLayout(axis: .vertical, spacing: 0), rect)
        case .stack(let layout):
            placeStack(node, layout, rect)
        case .padding(let insets):
            if let child = node.children.first {
                place(child, in: Rect(x: rect.minX + insets.leading, y: rect.minY + insets.top,
                                      width: max(0, rect.size.width - insets.leading - insets.trailing),
                                      height: max(0, rect.size.height - insets.top - insets.bottom)))
            }
        case .frame:
            if let child = node.children.first {
                let size = sizeThatFits(child, ProposedSize(width: rect.size.width, height: rect.size.height))
                place(child, in: Rect(x: rect.minX + (rect.size.width - size.width) / 2,
                                      y: rect.minY + (rect.size.height - size.height) / 2,
                                      width: size.width, height: size.height))
            }
        case .background:
            if let child = node.children.first { place(child, in: rect) }
        case .lazyList:
            // Its rows follow the scroll position, which no invalidation reports: placed every pass.
            placeLazyList(node, in: rect)
            return
        }
        node.placementIsCurrent = true
    }

    /// Moves a placed subtree; lazy lists in it place their rows for their new frame.
    private func move(_ node: ViewNode, by dx: Double, _ dy: Double) {
        node.frame.origin.x += dx
        node.frame.origin.y += dy
        if case .lazyList = node.kind {
            placeLazyList(node, in: node.frame)
            return
        }
        for child in node.children { move(child, by: dx, dy) }
    }

    private func placeStack(_ node: ViewNode, _ layout: StackLayout, _ rect: Rect) {
        withStackSizes(node, layout, ProposedSize(width: rect.size.width, height: rect.size.height)) { _, base in
            var cursor = layout.axis == .vertical ? rect.minY : rect.minX
            for (index, child) in node.children.enumerated() {
                let size = sizeScratch[base + index]
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
}
