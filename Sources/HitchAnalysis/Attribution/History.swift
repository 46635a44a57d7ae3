import HitchTrace

/// An instance kept in a history: when it ended (a sample: when it was taken).
protocol HistoryInstance: Sendable {
    var historyEndNs: Int64 { get }
}

extension StageInstance: HistoryInstance { var historyEndNs: Int64 { endNs } }

extension BodyInstance: HistoryInstance { var historyEndNs: Int64 { endNs } }

extension SampleInstance: HistoryInstance { var historyEndNs: Int64 { atNs } }

/// One thread's history of one kind of instance, in the thread's own order: a ring whose storage
/// grows (doubling, up to `capacity`) only when the instances still held and a new run do not fit.
/// A run is copied in at most two block copies, and the oldest instances are dropped by moving
/// `head`, so nothing is ever moved once stored (the element-at-a-time ring and an array
/// compacted from the front both cost more than the attribution they fed).
struct History<Element: HistoryInstance>: Sendable {
    private var storage: [Element] = []
    /// The oldest held instance's slot; `count` are held from it on (wrapping).
    private var head = 0
    private(set) var count = 0

    /// Appends `run`, holding what a ring of `capacity` would after taking it one instance at a
    /// time, each time overwriting the oldest when full and dropping the oldest that ended before
    /// `horizonNs` (no window still to come reaches them, `PassContext.frameWindowsFromNs`):
    /// both drop from the front only, so dropping before and after the run holds the same ones.
    @inline(__always)
    mutating func append(_ run: UnsafeBufferPointer<Element>, capacity: Int, droppingBefore horizonNs: Int64) {
        var run = run
        if count + run.count > storage.count { run = makeRoom(for: run, capacity: capacity, droppingBefore: horizonNs) }
        let (head, count) = (self.head, self.count)
        (self.head, self.count) = storage.withUnsafeMutableBufferPointer { slots -> (Int, Int) in
            var tail = head + count
            if tail >= slots.count { tail -= slots.count }
            let first = min(run.count, slots.count - tail)
            Self.copy(UnsafeBufferPointer(rebasing: run[..<first]), to: slots, at: tail)
            Self.copy(UnsafeBufferPointer(rebasing: run[first...]), to: slots, at: 0)
            return Self.droppingStale(UnsafeBufferPointer(slots), head: head, count: count + run.count, before: horizonNs)
        }
    }

    /// A short run (a thread's few instances between another's) is copied in a loop: a block copy
    /// costs a call.
    @inline(__always)
    private static func copy(_ run: UnsafeBufferPointer<Element>, to slots: UnsafeMutableBufferPointer<Element>, at index: Int) {
        guard let source = run.baseAddress, let base = slots.baseAddress else { return }
        if run.count <= 8 {
            for offset in 0..<run.count { base[index + offset] = source[offset] }
        } else {
            (base + index).update(from: source, count: run.count)
        }
    }

    /// `head` and `count` after dropping the oldest instances that ended before `horizonNs`.
    @inline(__always)
    private static func droppingStale(_ slots: UnsafeBufferPointer<Element>, head: Int, count: Int, before horizonNs: Int64) -> (Int, Int) {
        var head = head, count = count
        while count > 0 {
            let limit = min(head + count, slots.count)   // to the newest, or to the wrap
            var index = head
            while index < limit && slots[index].historyEndNs < horizonNs { index += 1 }
            count -= index - head
            head = index == slots.count ? 0 : index
            if index < limit { break }
        }
        return (head, count)
    }

    /// Too full for `run`: drops the stale oldest first, then grows the storage if it is still too
    /// full and below `capacity` (the ring unwrapped into the new storage), else (at capacity) lets
    /// the oldest give way. Returns the part of `run` to write: past capacity only its newest.
    @inline(never)
    private mutating func makeRoom(for run: UnsafeBufferPointer<Element>, capacity: Int,
                                   droppingBefore horizonNs: Int64) -> UnsafeBufferPointer<Element> {
        (head, count) = storage.withUnsafeBufferPointer { Self.droppingStale($0, head: head, count: count, before: horizonNs) }
        guard count + run.count > storage.count, let filler = run.first else { return run }
        if storage.count < capacity {
            let size = min(capacity, max(64, 2 * storage.count, count + run.count))
            var grown: [Element] = []
            grown.reserveCapacity(size)
            let firstPart = min(count, storage.count - head)
            grown.append(contentsOf: storage[head..<(head + firstPart)])
            grown.append(contentsOf: storage[0..<(count - firstPart)])
            grown.append(contentsOf: repeatElement(filler, count: size - grown.count))   // free slots
            storage = grown
            head = 0
        }
        let written = min(run.count, storage.count)
        let overwritten = max(0, count + written - storage.count)
        head += overwritten
        if head >= storage.count { head -= storage.count }
        count -= overwritten
        return UnsafeBufferPointer(rebasing: run[(run.count - written)...])
    }

    mutating func removeAll() { head = 0; count = 0 }

    /// Walks the instances newest first, handing over every one until `scanSlack` consecutive
    /// ones ended before `startNs`. True when the history ran out first while full (`capacity`
    /// held): older instances that might have been in the window were already dropped.
    func scan(from startNs: Int64, capacity: Int, scanSlack: Int, _ add: (Element) -> Void) -> Bool {
        var before = 0
        let ranOut: Bool = storage.withUnsafeBufferPointer { slots in
            var index = head + count
            if index > slots.count { index -= slots.count }
            for _ in 0..<count {
                if index == 0 { index = slots.count }
                index -= 1
                let element = slots[index]
                if element.historyEndNs < startNs {
                    before += 1
                    if before == scanSlack { return false }
                } else {
                    before = 0
                    add(element)
                }
            }
            return true
        }
        return ranOut && count == capacity
    }
}

/// An instance kept in per-thread histories: the thread it ran on, and when it began.
protocol ThreadInstance: HistoryInstance {
    var thread: UInt32 { get }
    var startNs: Int64 { get }
}

extension StageInstance: ThreadInstance {}

extension BodyInstance: ThreadInstance {}

/// Per-thread histories of one kind of instance, each in its thread's own order.
struct ThreadHistories<Element: ThreadInstance>: Sendable {
    /// Threads beyond this dense id share one history (a hostile trace's thread count stays bounded).
    static var denseThreads: Int { 4096 }
    let capacity: Int
    private(set) var histories: [History<Element>] = []

    init(capacity: Int) { self.capacity = capacity }

    mutating func removeAll() { histories.removeAll() }

    /// The thread whose instances history `index` holds.
    static func thread(ofHistory index: Int) -> UInt32 { UInt32(index) }

    /// Appends a batch, each instance to its thread's history, in order: a run of one thread's
    /// instances (a thread's buffer reaches the file as a unit) at a time. Returns the earliest
    /// start in the batch (for the caller's check for late arrivals).
    mutating func append(_ batch: UnsafeBufferPointer<Element>, droppingBefore horizonNs: Int64) -> Int64 {
        var next = batch.startIndex, earliest = Int64.max
        while next < batch.endIndex {
            next = histories.withUnsafeMutableBufferPointer { held in
                Self.appendRuns(of: batch, from: next, to: held, capacity: capacity, droppingBefore: horizonNs, earliest: &earliest)
            }
            if next < batch.endIndex { addHistories(through: min(Int(batch[next].thread), Self.denseThreads)) }
        }
        return earliest
    }

    /// Appends the runs of `batch` from `next` on while their thread has a history (one access to
    /// the list of histories for the whole batch); returns where it stopped.
    private static func appendRuns(of batch: UnsafeBufferPointer<Element>, from next: Int, to held: UnsafeMutableBufferPointer<History<Element>>,
                                   capacity: Int, droppingBefore horizonNs: Int64, earliest: inout Int64) -> Int {
        var start = next
        while start < batch.endIndex {
            let thread = batch[start].thread
            let index = min(Int(thread), denseThreads)
            guard index < held.count else { return start }
            var end = start + 1
            earliest = min(earliest, batch[start].startNs)
            while end < batch.endIndex && batch[end].thread == thread {
                earliest = min(earliest, batch[end].startNs)
                end += 1
            }
            held[index].append(UnsafeBufferPointer(rebasing: batch[start..<end]), capacity: capacity, droppingBefore: horizonNs)
            start = end
        }
        return start
    }

    /// Out of the per-instance path: a new thread is rare.
    @inline(never)
    private mutating func addHistories(through index: Int) {
        histories.append(contentsOf: repeatElement(History(), count: index + 1 - histories.count))
    }
}
