import Foundation

// The flame graph (icicle) of the chart primitives: folded stacks drawn as inline SVG.

extension Charts {
    struct FoldedStack { var frames: [String]; var count: Int }   // outermost frame first

    private final class FlameNode {
        var name: String
        /// The drawn label when it is not the name (a folded trunk).
        var label: String?
        var total = 0
        var children: [FlameNode] = []
        var childIndex: [String: Int] = [:]
        init(name: String) { self.name = name }
        func child(_ name: String) -> FlameNode {
            if let index = childIndex[name] { return children[index] }
            let node = FlameNode(name: name)
            childIndex[name] = children.count
            children.append(node)
            return node
        }
    }

    /// An icicle graph: the root on top, callees below, width = share of samples. Frames narrower than
    /// half a unit are not drawn (their samples stay in the parent's width).
    static func flameGraph(_ w: inout HTMLWriter, stacks: [FoldedStack], title: String) {
        let root = FlameNode(name: "all")
        for stack in stacks where stack.count > 0 {
            root.total += stack.count
            var node = root
            for frame in stack.frames {
                node = node.child(frame)
                node.total += stack.count
            }
        }
        guard root.total > 0 else { return }
        foldTrunk(root)
        let width = 1000.0, rowHeight = 17.0
        var rects: [(depth: Int, x: Double, width: Double, node: FlameNode)] = []
        var maxDepth = 0
        func place(_ node: FlameNode, depth: Int, x: Double) {
            let nodeWidth = Double(node.total) / Double(root.total) * width
            guard nodeWidth >= 0.5, depth < 200 else { return }
            rects.append((depth, x, nodeWidth, node))
            maxDepth = max(maxDepth, depth)
            var childX = x
            // Children sorted by name, as flame graphs do, so the layout is the same for the same input.
            for child in node.children.sorted(by: { $0.name < $1.name }) {
                place(child, depth: depth + 1, x: childX)
                childX += Double(child.total) / Double(root.total) * width
            }
        }
        place(root, depth: 0, x: 0)
        let height = Double(maxDepth + 1) * rowHeight + 2
        SVGCanvas.draw(&w, width: width, height: height, title: title, classes: "chart flame") { w in
            for placed in rects {
                let y = Double(placed.depth) * rowHeight
                let share = Double(placed.node.total) / Double(root.total)
                let tooltip = "\(placed.node.name): \(Format.count(placed.node.total)) samples (\(Format.percent(share)))"
                w.element("g", [Attribute("class", "fl")]) { w in
                    SVGCanvas.rect(&w, x: placed.x, y: y, width: max(0.5, placed.width - 0.5), height: rowHeight - 1,
                                   class: "flame h\(hashBucket(placed.node.name))", tooltip: tooltip)
                    // The function and its type, whole parts dropped from the left to fit; no label when not even the function fits.
                    if let label = ShortName.fitFromLeft(placed.node.label ?? ShortName.symbol(placed.node.name), characters: Int((placed.width - 6) / 6.2)) {
                        SVGCanvas.text(&w, x: placed.x + 3, y: y + 12, label, class: "lbl small flame-label")
                    }
                }
            }
        }
    }

    /// The share of samples a frame must hold to be part of the trunk every stack shares.
    static let trunkShare = 0.99

    /// Folds the entry frames every stack starts with (`_start`, the C library's and the runtime's
    /// entry, the run loop and the dispatch queue that call into the app) into one labelled row, so the
    /// graph starts where the samples branch: the chain from the root of frames that hold at least
    /// `trunkShare` of the samples, but the last of them, which stays drawn as the first app row.
    private static func foldTrunk(_ root: FlameNode) {
        var chain: [FlameNode] = []
        var node = root
        while let next = node.children.max(by: { $0.total < $1.total }),
              Double(next.total) >= trunkShare * Double(root.total), !next.children.isEmpty {
            chain.append(next)
            node = next
        }
        guard chain.count >= 3, let first = chain.first, let kept = chain.last else { return }
        let folded = chain.dropLast()
        let trunk = FlameNode(name: "entry frames: " + folded.map(\.name).joined(separator: " → "))
        trunk.label = "\(folded.count) entry frames (" + ShortName.symbol(folded[folded.startIndex].name) + " … "
            + ShortName.symbol(folded[folded.endIndex - 1].name) + ")"
        trunk.total = first.total
        trunk.children = [kept]
        trunk.childIndex = [kept.name: 0]
        guard let slot = root.childIndex[first.name] else { return }
        root.children[slot] = trunk
        root.childIndex[first.name] = nil
        root.childIndex[trunk.name] = slot
    }

    /// A stable color bucket per name (FNV-1a), so a function keeps its color across graphs and runs.
    static func hashBucket(_ name: String) -> Int {
        var hash: UInt32 = 2166136261
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16777619 }
        return Int(hash % 8)
    }
}
