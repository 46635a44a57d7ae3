/// What a `BinaryHeap` holds: `precedes` is a strict order (for a min-heap, `<`).
public protocol HeapElement {
    func precedes(_ other: Self) -> Bool
}

/// A binary heap: `pop` gives the element that comes first by `Element.precedes`. Push and pop are
/// O(log n); `first` is O(1).
///
/// Public, not `package`: a client specializes a public generic's `@inlinable` bodies, not a package
/// one's (a package heap ran every step through the element's witnesses). HitchAlgorithms is no
/// product, so this reaches no app.
public struct BinaryHeap<Element: HeapElement> {
    @usableFromInline var elements: [Element] = []

    @inlinable
    public init() {}

    @inlinable public var count: Int { elements.count }
    @inlinable public var isEmpty: Bool { elements.isEmpty }
    /// The element `pop` would give, without removing it.
    @inlinable public var first: Element? { elements.first }

    @inlinable
    public mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child].precedes(elements[parent]) else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @inlinable
    public mutating func pop() -> Element? {
        guard let first = elements.first else { return nil }
        let last = elements.removeLast()
        if !elements.isEmpty {
            elements[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var best = parent
                if left < elements.count, elements[left].precedes(elements[best]) { best = left }
                if right < elements.count, elements[right].precedes(elements[best]) { best = right }
                if best == parent { break }
                elements.swapAt(parent, best)
                parent = best
            }
        }
        return first
    }
}
