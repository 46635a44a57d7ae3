import HitchTrace

/// What a pass holds for events that may still come (docs/METRICS.md "File order"), oldest first:
/// the one shape of the analyzer's holders (frame assembly, frames waiting for their context
/// switches, stage cost's finished intervals, attribution's open hitch windows, the frame threads'
/// reading histories). It owns:
/// - the limit (`EventOrder.holdLimit` unless the holder says otherwise): past it the owner lets
///   the oldest go (`letGoFirst`, counted in `letGoCount`), or `appendKeepingLimit` does;
/// - the release by the watermark (`releaseFirst`): the oldest item goes when it is ready, or its
///   emission is before the trace's watermark (`EventOrder.orderedThroughNs`), or the holder is
///   past its limit;
/// - the count of what it let go that an event read later would have joined
///   (`lateForLetGoCount`, counted by the owner, which alone can tell), reported once per run to
///   the run's `EventOrder` (`report`).
///
/// A ring: adding and removing at either end never moves what it holds. Storage grows with the
/// most it has held at once (at most the limit and one more, in owners that let go at the limit).
struct BoundedHolder<Item: Sendable>: Sendable {
    /// The most items held before the oldest is let go.
    let limit: Int
    private var storage: [Item] = []
    /// The oldest item's slot; `count` items are held from it on (wrapping).
    private var head = 0
    private(set) var count = 0
    /// Items let go at the limit since the run began.
    private(set) var letGoCount = 0
    /// Events read after what they would have joined was let go at the limit (not yet reported).
    private(set) var lateForLetGoCount = 0

    init(limit: Int = EventOrder.holdLimit) { self.limit = limit }

    var isEmpty: Bool { count == 0 }
    /// Past the limit: the owner lets the oldest go.
    var isOverLimit: Bool { count > limit }
    var first: Item? { count > 0 ? storage[head] : nil }
    var last: Item? { count > 0 ? storage[slot(count - 1)] : nil }

    /// The storage slot of the item at `position` (0 = oldest): no division on the per-event path.
    @inline(__always) private func slot(_ position: Int) -> Int {
        let index = head + position
        return index >= storage.count ? index - storage.count : index
    }

    /// The item at `position`, oldest first.
    subscript(position: Int) -> Item { storage[slot(position)] }

    @inline(__always)
    mutating func append(_ item: Item) {
        if count < storage.count {
            storage[slot(count)] = item
        } else {
            grow(with: item)
        }
        count += 1
    }

    /// Storage full: the item appended in place, the held ones put in order first if they wrap.
    @inline(never)
    private mutating func grow(with item: Item) {
        if head != 0 {
            storage = Array(storage[head...] + storage[..<head])
            head = 0
        }
        storage.append(item)
    }

    /// Appends, then lets the oldest go while past the limit: the latest `limit` items are kept.
    mutating func appendKeepingLimit(_ item: Item) {
        append(item)
        while isOverLimit { _ = letGoFirst() }
    }

    /// The oldest item, released: what it waited for is in (or the run ended).
    @discardableResult
    mutating func removeFirst() -> Item {
        precondition(count > 0, "removeFirst on an empty holder")
        let item = storage[head]
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        return item
    }

    /// The oldest item, let go at the limit before what it waited for came: counted.
    @discardableResult
    mutating func letGoFirst() -> Item {
        letGoCount += 1
        return removeFirst()
    }

    /// The newest item (a holder used as a stack).
    @discardableResult
    mutating func removeLast() -> Item {
        precondition(count > 0, "removeLast on an empty holder")
        count -= 1
        return storage[slot(count)]
    }

    /// The oldest item, if it is to go now: released when it is `ready`, or was emitted before the
    /// watermark (`emittedNs < watermarkNs`: every event it waits for is in, but those beyond the
    /// bound); let go (counted) when it is neither and the holder is past its limit; else nil.
    mutating func releaseFirst(ready: Bool, emittedNs: Int64, watermarkNs: Int64) -> Item? {
        guard count > 0 else { return nil }
        if ready || emittedNs < watermarkNs { return removeFirst() }
        return isOverLimit ? letGoFirst() : nil
    }

    /// Items newest first, while `body` returns true.
    func forEachNewestFirst(_ body: (Item) -> Bool) {
        var position = count - 1
        while position >= 0 {
            if !body(storage[slot(position)]) { return }
            position -= 1
        }
    }

    /// Items newest first, changed in place, while `body` returns true.
    mutating func updateNewestFirst(_ body: (inout Item) -> Bool) {
        var position = count - 1
        while position >= 0 {
            if !body(&storage[slot(position)]) { return }
            position -= 1
        }
    }

    /// Counts an event that came for an item already let go at the limit.
    mutating func countLateForLetGo(_ events: Int = 1) { lateForLetGoCount += events }

    /// Hands the events that came for let-go items to the run's ordering contract, under `kind`
    /// (its warning), and starts counting afresh.
    mutating func report(_ kind: EventOrder.LetGo, to order: inout EventOrder) {
        order.countLetGo(lateForLetGoCount, kind)
        lateForLetGoCount = 0
    }

    /// Empties the holder and its counts; `keepingCapacity` keeps the storage for the next run.
    mutating func removeAll(keepingCapacity: Bool = true) {
        storage.removeAll(keepingCapacity: keepingCapacity)
        head = 0
        count = 0
        letGoCount = 0
        lateForLetGoCount = 0
    }
}
