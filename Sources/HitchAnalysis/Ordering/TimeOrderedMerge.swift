/// Merges several sources' streams (a trace's threads) into time order, each source's own order
/// kept, holding an element until no element of another source can still come before it within
/// the bound: the shape of Perfetto's `TraceSorter`, for files that are in time order per source
/// only (docs/METRICS.md "File order").
///
/// An element's key is its source's clock: the latest time that source has pushed, so keys never
/// go back within a source and the merge never reorders a source's own elements (a thread's
/// children-first complete events stay children first). An element is released once the newest
/// key pushed is `boundNs` past its key, or when the stream ends (`drain`). What falls outside
/// that rule is counted, never dropped:
/// - **late**: pushed with a key behind an element already released (its source lagged the
///   others by more than the bound). It is released next, out of time order: the reader of the
///   merge must take it as a late arrival.
/// - **released early** (the memory fallback): more than `capacity` elements held. The oldest is
///   released before the bound passed it, so memory stays bounded whatever the bound or the input.
struct TimeOrderedMerge<Element: Sendable>: Sendable {
    private struct Source: Sendable {
        var held: [(key: Int64, element: Element)] = []
        var head = 0
        var clockNs: Int64 = .min
    }
    private var sources: [Source] = []
    /// The sources holding elements, a min-heap on their oldest held element's key.
    private var heap: [(key: Int64, source: Int)] = []
    let capacity: Int
    /// How far behind the newest key an element is held.
    var boundNs: Int64
    private(set) var heldCount = 0
    private(set) var newestKeyNs: Int64 = .min
    /// The key of the latest element released in order.
    private(set) var releasedThroughNs: Int64 = .min
    private(set) var lateCount = 0
    private(set) var releasedEarlyCount = 0
    /// The most elements held at once.
    private(set) var peakHeld = 0

    init(boundNs: Int64, capacity: Int) {
        self.boundNs = max(0, boundNs)
        self.capacity = max(1, capacity)
    }

    /// Empties the merge (elements held are dropped) and zeroes its counts.
    mutating func reset(boundNs: Int64) {
        for i in sources.indices { sources[i].held.removeAll(keepingCapacity: true); sources[i].head = 0; sources[i].clockNs = .min }
        heap.removeAll(keepingCapacity: true)
        self.boundNs = max(0, boundNs)
        heldCount = 0; newestKeyNs = .min; releasedThroughNs = .min
        lateCount = 0; releasedEarlyCount = 0; peakHeld = 0
    }

    /// Holds `element` of `source` (a small dense index) stamped `timeNs`.
    @inline(__always)
    mutating func push(_ element: Element, source: Int, timeNs: Int64) {
        if source >= sources.count { addSources(through: source) }
        let key = max(sources[source].clockNs, timeNs)
        sources[source].clockNs = key
        // A source with elements held has keys at or above every released one (`popReady`), so a
        // late element's source holds nothing: releasing it next keeps the source's order.
        if key < releasedThroughNs { lateCount += 1 }
        if sources[source].head == sources[source].held.count { heapPush((key, source)) }
        sources[source].held.append((key, element))
        heldCount += 1
        if heldCount > peakHeld { peakHeld = heldCount }
        if key > newestKeyNs { newestKeyNs = key }
    }

    @inline(never)
    private mutating func addSources(through index: Int) {
        sources.append(contentsOf: repeatElement(Source(), count: index + 1 - sources.count))
    }

    /// The next element in time order if the bound has passed it (or more than `capacity` are
    /// held, or `draining`: the stream ended).
    @inline(__always)
    mutating func popReady(draining: Bool = false) -> Element? {
        guard let top = heap.first else { return nil }
        if !draining && top.key > newestKeyNs.subtractingSaturated(boundNs) {
            guard heldCount > capacity else { return nil }
            releasedEarlyCount += 1
        }
        return pop(top)
    }

    private mutating func pop(_ top: (key: Int64, source: Int)) -> Element {
        let s = top.source
        let element = sources[s].held[sources[s].head].element
        sources[s].head += 1
        heldCount -= 1
        if top.key > releasedThroughNs { releasedThroughNs = top.key }
        if sources[s].head == sources[s].held.count {
            sources[s].held.removeAll(keepingCapacity: true)
            sources[s].head = 0
            heapRemoveTop()
        } else {
            if sources[s].head >= 4096 && sources[s].head * 2 >= sources[s].held.count {
                sources[s].held.removeFirst(sources[s].head)
                sources[s].head = 0
            }
            heap[0].key = sources[s].held[sources[s].head].key
            siftDown(0)
        }
        return element
    }

    // A binary min-heap on (key, source): ties go to the lower source, so a merge is deterministic.

    @inline(__always)
    private static func before(_ a: (key: Int64, source: Int), _ b: (key: Int64, source: Int)) -> Bool {
        a.key != b.key ? a.key < b.key : a.source < b.source
    }

    private mutating func heapPush(_ entry: (key: Int64, source: Int)) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func heapRemoveTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var child = left
            if left + 1 < heap.count, Self.before(heap[left + 1], heap[left]) { child = left + 1 }
            guard Self.before(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            parent = child
        }
    }
}
