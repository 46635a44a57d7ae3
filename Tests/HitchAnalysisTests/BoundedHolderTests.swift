import HitchTrace
import Testing
@testable import HitchAnalysis

/// The one holder of items for late events: its limit, its release by the watermark, and the
/// count of what it lets go (docs/METRICS.md "File order").
@Suite struct BoundedHolderTests {
    /// An item waiting for events, emitted at `emittedNs`.
    struct Waiting: Equatable {
        var id: Int
        var emittedNs: Int64
    }

    static func contents<Item>(_ holder: BoundedHolder<Item>) -> [Item] {
        (0..<holder.count).map { holder[$0] }
    }

    @Test func itHoldsInOrderAndReleasesFromEitherEnd() {
        var holder = BoundedHolder<Int>(limit: 4)
        #expect(holder.isEmpty && holder.first == nil && holder.last == nil)
        for i in 1...3 { holder.append(i) }
        #expect(Self.contents(holder) == [1, 2, 3])
        #expect(holder.first == 1 && holder.last == 3)
        #expect(holder.removeFirst() == 1)
        #expect(holder.removeLast() == 3)
        #expect(Self.contents(holder) == [2])
        // Wrapping around the ring keeps the order.
        for i in 4...7 { holder.append(i); _ = holder.removeFirst() }
        for i in 8...10 { holder.append(i) }
        #expect(Self.contents(holder) == [7, 8, 9, 10])
        var newestFirst: [Int] = []
        holder.forEachNewestFirst { newestFirst.append($0); return $0 > 8 }
        #expect(newestFirst == [10, 9, 8])
        #expect(holder.letGoCount == 0)
    }

    @Test func pastItsLimitItKeepsTheLatestAndCountsWhatItLetGo() {
        var holder = BoundedHolder<Int>(limit: 3)
        for i in 1...3 { holder.appendKeepingLimit(i) }
        #expect(!holder.isOverLimit && holder.letGoCount == 0)
        for i in 4...8 { holder.appendKeepingLimit(i) }
        #expect(Self.contents(holder) == [6, 7, 8])
        #expect(holder.letGoCount == 5)
        // An owner that lets go itself: past the limit, then the oldest is let go.
        var owned = BoundedHolder<Int>(limit: 2)
        for i in 1...3 { owned.append(i) }
        #expect(owned.isOverLimit)
        #expect(owned.letGoFirst() == 1)
        #expect(!owned.isOverLimit && owned.letGoCount == 1)
    }

    /// Released in order: a ready item, or one emitted before the watermark; an item that is
    /// neither waits, and everything behind it, until the holder is past its limit, when it is let go.
    @Test func theWatermarkReleasesInOrderAndTheLimitLetsGo() {
        var holder = BoundedHolder<Waiting>(limit: 3)
        for (id, at) in [(1, 10), (2, 30), (3, 20)] { holder.append(Waiting(id: id, emittedNs: Int64(at))) }
        func release(watermarkNs: Int64, ready: Set<Int> = []) -> [Int] {
            var out: [Int] = []
            while let oldest = holder.first,
                  let item = holder.releaseFirst(ready: ready.contains(oldest.id), emittedNs: oldest.emittedNs, watermarkNs: watermarkNs) {
                out.append(item.id)
            }
            return out
        }
        #expect(release(watermarkNs: .min).isEmpty)   // a trace without a bound: nothing by the watermark
        #expect(release(watermarkNs: 25) == [1])       // 2 (at 30) waits, and 3 behind it though emitted at 20
        #expect(release(watermarkNs: 25, ready: [2]) == [2, 3])
        #expect(holder.letGoCount == 0)
        for id in 4...7 { holder.append(Waiting(id: id, emittedNs: 100)) }
        #expect(release(watermarkNs: 50) == [4])       // past the limit of 3: the oldest is let go
        #expect(holder.letGoCount == 1 && holder.count == 3)
    }

    /// What came for let-go items is reported once, under the holder's kind, to the run's order.
    @Test func latecomersForLetGoItemsAreReportedOnce() {
        var holder = BoundedHolder<Int>()
        #expect(holder.limit == EventOrder.holdLimit)
        var order = EventOrder()
        holder.report(.instancesAfterWindowClosed, to: &order)
        #expect(order.warnings.isEmpty)
        holder.countLateForLetGo()
        holder.countLateForLetGo(2)
        holder.report(.instancesAfterWindowClosed, to: &order)
        holder.report(.instancesAfterWindowClosed, to: &order)   // counted afresh: nothing more
        #expect(order.warnings == ["past the \(EventOrder.holdLimit) items the analyzer holds for late events: 3 instances arrived "
            + "after the hitch windows they overlap had closed; figures that join them miss what came later"])
        holder.append(1); holder.countLateForLetGo()
        holder.removeAll()
        #expect(holder.isEmpty && holder.lateForLetGoCount == 0 && holder.letGoCount == 0)
    }

    /// Items changed in place, newest first, down to the first the caller stops at.
    @Test func itemsAreChangedInPlaceNewestFirst() {
        var holder = BoundedHolder<Waiting>(limit: 8)
        for id in 1...5 { holder.append(Waiting(id: id, emittedNs: Int64(id) * 10)) }
        holder.updateNewestFirst { item in
            guard item.emittedNs >= 30 else { return false }
            item.emittedNs += 1
            return true
        }
        #expect(Self.contents(holder).map(\.emittedNs) == [10, 20, 31, 41, 51])
    }
}
