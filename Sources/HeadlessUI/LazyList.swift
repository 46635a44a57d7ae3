// The lazy list's state: row ids for the current data, measured heights by id (unmeasured rows
// use the mean measured height), and the rows materialized for the current viewport.

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

struct LazyListState {
    var content: LazyListContent?
    var ids: [AnyHashable] = []
    /// Heights by row index for the current data; negative means not measured yet.
    var heights: [Double] = []
    var measuredHeightByID: [AnyHashable: Double] = [:]
    var measuredTotal = 0.0
    var measuredCount = 0

    @MainActor
    mutating func setContent(_ content: LazyListContent) {
        self.content = content
        // The id index is rebuilt for the new data; heights follow their rows by id.
        ids = (0..<content.count).map(content.id)
        heights = ids.map { measuredHeightByID[$0] ?? -1 }
    }

    var estimatedRowHeight: Double { measuredCount > 0 ? measuredTotal / Double(measuredCount) : 44 }

    mutating func recordHeight(_ height: Double, at index: Int) {
        let id = ids[index]
        if let old = measuredHeightByID.updateValue(height, forKey: id) {
            measuredTotal += height - old
        } else {
            measuredTotal += height
            measuredCount += 1
        }
        heights[index] = height
    }
}

extension ViewGraph {
    func placeLazyList(_ node: ViewNode, in rect: Rect) {
        guard var state = node.lazy, let content = state.content else { return }
        let position = content.position
        if let override = content.offsetOverride { position.offset = override }
        let spacing = content.spacing
        let estimate = state.estimatedRowHeight
        var total = 0.0
        for height in state.heights { total += (height < 0 ? estimate : height) + spacing }
        total = max(0, total - spacing)
        let viewport = rect.size.height
        let offset = min(max(0, position.offset), max(0, total - viewport))
        let low = offset - content.overscan, high = offset + viewport + content.overscan

        // Rows whose extent meets [low, high], by their (estimated) tops.
        var first = 0, top = 0.0
        while first < state.heights.count {
            let height = state.heights[first] < 0 ? estimate : state.heights[first]
            if top + height >= low { break }
            top += height + spacing
            first += 1
        }
        var last = first, bottom = top
        while last < state.heights.count, bottom <= high {
            bottom += (state.heights[last] < 0 ? estimate : state.heights[last]) + spacing
            last += 1
        }
        let range = first..<last
        let rows = range.map { index in (key: ChildKey.explicit(group: 0, id: state.ids[index]), view: content.view(index)) }
        Instrument.stage("diff") { reconcile(node, with: rows, firstPosition: range.lowerBound) }

        var y = top
        for (index, child) in zip(range, node.children) {
            let size = sizeThatFits(child, ProposedSize(width: rect.size.width, height: nil))
            if state.heights[index] != size.height { state.recordHeight(size.height, at: index) }
            place(child, in: Rect(x: rect.minX, y: rect.minY + y - offset, width: rect.size.width, height: size.height))
            y += size.height + spacing
        }
        // Rows measured just now refine the estimate for the rest.
        let refined = state.estimatedRowHeight
        var contentHeight = 0.0
        for height in state.heights { contentHeight += (height < 0 ? refined : height) + spacing }
        position.update(contentHeight: max(0, contentHeight - spacing), viewportHeight: viewport, materialized: range)
        node.lazy = state
    }
}
