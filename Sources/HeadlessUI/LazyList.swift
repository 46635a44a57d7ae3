// The lazy list's state: the rows materialized for the current viewport, and heights measured
// for the current content by row index (unmeasured rows use the mean measured height).
import HitchTrace

/// Where a lazy list is scrolled to, and what its last layout found. Owned by the app (a scroll
/// controller writes `offset`); layout clamps it to the content and reports the geometry back.
@MainActor
public final class ScrollPosition {
    public var offset: Double
    public private(set) var contentHeight: Double = 0
    public private(set) var viewportHeight: Double = 0
    /// Indices of the rows materialized by the last layout.
    public private(set) var materializedRows: Range<Int> = 0..<0

    public init(offset: Double = 0) { self.offset = offset }

    public var maxOffset: Double { max(0, contentHeight - viewportHeight) }

    func update(contentHeight: Double, viewportHeight: Double, materialized: Range<Int>) {
        self.contentHeight = contentHeight
        self.viewportHeight = viewportHeight
        self.materializedRows = materialized
        offset = min(max(0, offset), maxOffset)
    }
}

/// A lazy list's rows: heights measured for the current content (by row index), sums kept as rows
/// are measured so the content height is O(1), and the rows materialized by the last layout.
/// After new content, only the materialized rows are matched against it (by id, in the data's own
/// id type), and only rows that become visible are measured.
@MainActor
final class LazyListState {
    private(set) var content: LazyListContent?
    /// The content the materialized rows (the node's children, in order) were made from, while it
    /// differs from `content` (new content arrived and layout has not matched the rows yet).
    private(set) var materializedContent: LazyListContent?
    /// Indices, in `materializedContent ?? content`, of the node's children.
    var materialized: Range<Int> = 0..<0

    /// Heights by row index for the current content; negative means not measured yet.
    private(set) var heights: [Double] = []
    /// The measured heights in `heights`.
    private var measured = MeasuredHeights()
    /// Every height measured so far, over all contents: the estimate for unmeasured rows.
    private var everMeasured = MeasuredHeights()

    /// Where the first-row search starts: a row index and the measured heights above it, so a
    /// frame that scrolls a few rows walks a few rows.
    private var anchor = 0
    private var measuredAboveAnchor = MeasuredHeights()

    var hasUnmatchedContent: Bool { materializedContent != nil }

    func setContent(_ newContent: LazyListContent) {
        if materializedContent == nil, let content { materializedContent = content }
        content = newContent
        // Heights follow the rows that stay on screen (layout records them again from their
        // nodes' size caches); the rest start from the estimate. Reuses the buffer.
        heights.removeAll(keepingCapacity: true)
        heights.append(contentsOf: repeatElement(-1, count: newContent.count))
        measured = MeasuredHeights()
        anchor = 0
        measuredAboveAnchor = MeasuredHeights()
    }

    /// The rows now match `content`.
    func didMatchContent() { materializedContent = nil }

    var estimatedRowHeight: Double { everMeasured.count > 0 ? everMeasured.sum / Double(everMeasured.count) : 44 }

    func height(at index: Int, estimate: Double) -> Double {
        let height = heights[index]
        return height < 0 ? estimate : height
    }

    /// The content height with unmeasured rows at the current estimate.
    func contentHeight(spacing: Double) -> Double {
        let count = heights.count
        guard count > 0 else { return 0 }
        return measured.sum + Double(count - measured.count) * estimatedRowHeight + spacing * Double(count - 1)
    }

    func recordHeight(_ height: Double, at index: Int) {
        let old = heights[index]
        if old < 0 {
            measured.add(height)
            everMeasured.add(height)
            if index < anchor { measuredAboveAnchor.add(height) }
        } else {
            measured.remeasure(old, as: height)
            everMeasured.remeasure(old, as: height)
            if index < anchor { measuredAboveAnchor.remeasure(old, as: height) }
        }
        heights[index] = height
    }

    /// The top of row `anchor` with unmeasured rows at `estimate`.
    private func anchorTop(estimate: Double, spacing: Double) -> Double {
        Double(anchor) * (estimate + spacing) + measuredAboveAnchor.sum - estimate * Double(measuredAboveAnchor.count)
    }

    /// The first row whose extent reaches `low`, and its top (rows at their measured or estimated
    /// heights). Walks from where the last search ended.
    func firstRow(reaching low: Double, estimate: Double, spacing: Double) -> (index: Int, top: Double) {
        // Back while the row above still reaches `low` (its bottom is this row's top less spacing).
        while anchor > 0, anchorTop(estimate: estimate, spacing: spacing) - spacing >= low {
            anchor -= 1
            let height = heights[anchor]
            if height >= 0 { measuredAboveAnchor.remove(height) }
        }
        // Forward while this row ends above `low`.
        while anchor < heights.count,
              anchorTop(estimate: estimate, spacing: spacing) + self.height(at: anchor, estimate: estimate) < low {
            let height = heights[anchor]
            if height >= 0 { measuredAboveAnchor.add(height) }
            anchor += 1
        }
        return (anchor, anchorTop(estimate: estimate, spacing: spacing))
    }
}

/// Measured row heights: their sum and how many, kept as rows are measured, remeasured and walked past.
private struct MeasuredHeights {
    private(set) var sum = 0.0
    private(set) var count = 0

    mutating func add(_ height: Double) {
        sum += height
        count += 1
    }

    mutating func remove(_ height: Double) {
        sum -= height
        count -= 1
    }

    /// A row measured before is measured again.
    mutating func remeasure(_ old: Double, as height: Double) { sum += height - old }
}

extension ViewGraph {
    func placeLazyList(_ node: ViewNode, in rect: Rect) {
        guard let state = node.lazy, let content = state.content else { return }
        let position = content.position
        if let override = content.offsetOverride { position.offset = override }
        let spacing = content.spacing
        let estimate = state.estimatedRowHeight
        let total = state.contentHeight(spacing: spacing)
        let viewport = rect.size.height
        let offset = min(max(0, position.offset), max(0, total - viewport))
        let low = offset - content.overscan, high = offset + viewport + content.overscan

        // Rows whose extent meets [low, high], by their (estimated) tops.
        let (first, top) = state.firstRow(reaching: low, estimate: estimate, spacing: spacing)
        var last = first, bottom = top
        while last < state.heights.count, bottom <= high {
            bottom += state.height(at: last, estimate: estimate) + spacing
            last += 1
        }
        let range = first..<last
        if state.hasUnmatchedContent || range != state.materialized {
            measuringDiff { materializeRows(node, state: state, content: content, range: range) }
        }

        var y = top
        for (index, child) in zip(range, node.children) {
            // Rows already materialized answer from their size cache: only new rows are measured.
            let size = sizeThatFits(child, ProposedSize(width: rect.size.width, height: nil))
            if state.heights[index] != size.height { state.recordHeight(size.height, at: index) }
            place(child, in: Rect(x: rect.minX, y: rect.minY + y - offset, width: rect.size.width, height: size.height))
            y += size.height + spacing
        }
        // Rows measured just now refine the estimate for the rest.
        position.update(contentHeight: state.contentHeight(spacing: spacing), viewportHeight: viewport, materialized: range)
    }

    /// Makes the node's children the rows of `range`: rows kept from the last layout stay (matched
    /// by id when the content changed), rows that came into range are built, the rest torn down.
    private func materializeRows(_ node: ViewNode, state: LazyListState, content: LazyListContent, range: Range<Int>) {
        var rows = rowScratch
        rowScratch = []
        rows.removeAll(keepingCapacity: true)
        let old = state.materialized
        // Rows built with the list itself, or scrolled (or brought) into view: new identities.
        let reason: ViewLifetimeReason = node.isNewlyBuilt ? .parentBuilt : .newIdentity
        node.isNewlyBuilt = false
        func build(_ index: Int) -> ViewNode {
            buildNode(key: content.rows.key(at: index), view: content.rows.view(at: index), parent: node,
                      position: index, reason: reason)
        }
        if let previous = state.materializedContent {
            // New content: match the materialized rows by id; a kept row gets its new view value.
            let matches = content.rows.matchRows(range, previous: previous.rows, previousRange: old)
            var kept = [Bool](repeating: false, count: node.children.count)
            for (index, match) in zip(range, matches) {
                if let match {
                    kept[match] = true
                    let existing = node.children[match]
                    reuse(existing, with: content.rows.view(at: index), position: index)
                    rows.append(existing)
                } else {
                    rows.append(build(index))
                }
            }
            for (child, isKept) in zip(node.children, kept) where !isKept { tearDown(child, reason: .identityRemoved) }
            state.didMatchContent()
        } else {
            // Same content, scrolled: rows in both ranges are the same rows with the same values.
            for index in range {
                if old.contains(index) {
                    rows.append(node.children[index - old.lowerBound])
                } else {
                    rows.append(build(index))
                }
            }
            for (index, child) in zip(old, node.children) where !range.contains(index) { tearDown(child, reason: .identityRemoved) }
        }
        state.materialized = range
        swap(&node.children, &rows)
        rows.removeAll(keepingCapacity: true)
        rowScratch = rows
    }
}
