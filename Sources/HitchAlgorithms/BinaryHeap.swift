/// A binary heap: `pop` gives the element that comes first by `precedes` (a strict order: for a
/// min-heap, `<`). Push and pop are O(log n); `first` is O(1).
package struct BinaryHeap<Element> {
    @usableFromInline var elements: [Element] = []
    @usableFromInline let precedes: (Element, Element) -> Bool

    @inlinable
    package init(precedes: @escaping (Element, Element) -> Bool) { self.precedes = precedes }

    @inlinable package var count: Int { elements.count }
    @inlinable package var isEmpty: Bool { elements.isEmpty }
    /// The element `pop` would give, without removing it.
    @inlinable package var first: Element? { elements.first }

    @inlinable
    package mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(elements[child], elements[parent]) else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @inlinable
    package mutating func pop() -> Element? {
        guard let first = elements.first else { return nil }
        let last = elements.removeLast()
        if !elements.isEmpty {
            elements[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var best = parent
                if left < elements.count, precedes(elements[left], elements[best]) { best = left }
                if right < elements.count, precedes(elements[right], elements[best]) { best = right }
                if best == parent { break }
                elements.swapAt(parent, best)
                parent = best
            }
        }
        return first
    }
}
