import HitchTrace
import Testing
@testable import HitchAnalysis

/// The ordering stage: sources merged into time order within the bound, each source's order kept,
/// and what lies beyond the bound (late elements, the memory fallback) counted, never dropped.
@Suite struct TimeOrderedMergeTests {
    struct Item: Sendable, Equatable {
        var source: Int
        var index: Int
        var timeNs: Int64
    }

    typealias Random = AttributionOrderTests.Random

    /// Pushes every item, taking what is due after each push, then drains.
    static func run(_ items: [Item], boundNs: Int64, capacity: Int) -> (out: [Item], merge: TimeOrderedMerge<Item>, maxHeld: Int) {
        var merge = TimeOrderedMerge<Item>(boundNs: boundNs, capacity: capacity)
        var out: [Item] = []
        var maxHeld = 0
        for item in items {
            merge.push(item, source: item.source, timeNs: item.timeNs)
            while let next = merge.popReady() { out.append(next) }
            maxHeld = max(maxHeld, merge.heldCount)
        }
        while let next = merge.popReady(draining: true) { out.append(next) }
        return (out, merge, maxHeld)
    }

    /// Threads writing their buffers as units: each source's items in time order, written in
    /// chunks that reach the file at most `lagNs` after their items' times.
    static func chunked(seed: UInt64, sources: Int, lagNs: Int64) -> [Item] {
        var random = Random(state: seed)
        var pending: [[Item]] = Array(repeating: [], count: sources)
        var clocks = Array(repeating: Int64(0), count: sources)
        var counts = Array(repeating: 0, count: sources)
        var file: [Item] = []
        for nowNs in stride(from: Int64(0), to: 2_000_000_000, by: 1_000_000) {
            for s in 0..<sources where random.below(3) == 0 {
                clocks[s] = max(clocks[s], nowNs - Int64(random.below(1000)))
                pending[s].append(Item(source: s, index: counts[s], timeNs: clocks[s]))
                counts[s] += 1
            }
            // A source's chunk is written when its oldest item is about to exceed the lag.
            for s in 0..<sources where !pending[s].isEmpty && (pending[s][0].timeNs + lagNs <= nowNs + 1_000_000 || random.below(20) == 0) {
                file += pending[s]
                pending[s].removeAll()
            }
        }
        for s in 0..<sources { file += pending[s] }
        return file
    }

    static func sourceOrderKept(_ out: [Item]) -> Bool {
        var last: [Int: Int] = [:]
        for item in out {
            if let previous = last[item.source], previous + 1 != item.index { return false }
            if last[item.source] == nil && item.index != 0 { return false }
            last[item.source] = item.index
        }
        return true
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func withinTheBoundTheMergeIsInTimeOrder(seed: UInt64) {
        let lag: Int64 = 100_000_000
        let items = Self.chunked(seed: seed, sources: 6, lagNs: lag)
        let (out, merge, maxHeld) = Self.run(items, boundNs: lag + 1_000_000, capacity: 1 << 20)
        #expect(out.count == items.count)
        #expect(Self.sourceOrderKept(out))
        #expect(zip(out, out.dropFirst()).allSatisfy { $0.timeNs <= $1.timeNs })
        #expect(merge.lateCount == 0)
        #expect(merge.releasedEarlyCount == 0)
        // Held: about the bound's worth of items, far fewer than the file.
        #expect(maxHeld < items.count / 4)
    }

    @Test func aSourceBeyondTheBoundIsLateCountedAndReleasedNext() {
        var items = (0..<1000).map { Item(source: 0, index: $0, timeNs: Int64($0) * 1_000_000) }
        // Source 1 reaches the file a whole second after its time: beyond a 100 ms bound.
        items += (0..<5).map { Item(source: 1, index: $0, timeNs: Int64($0) * 1_000_000) }
        var merge = TimeOrderedMerge<Item>(boundNs: 100_000_000, capacity: 1 << 20)
        var out: [Item] = []
        for item in items {
            merge.push(item, source: item.source, timeNs: item.timeNs)
            if item.source == 1 {
                // Released at once, out of time order: the reader takes it as a late arrival.
                #expect(merge.popReady() == item)
            }
            while let next = merge.popReady() { out.append(next) }
        }
        while let next = merge.popReady(draining: true) { out.append(next) }
        #expect(merge.lateCount == 5)
        #expect(merge.releasedEarlyCount == 0)
        #expect(out.count == 1000)
        #expect(Self.sourceOrderKept(out))
    }

    @Test func pastCapacityTheOldestIsReleasedEarly() {
        var random = Random(state: 9)
        let items = (0..<500).map { Item(source: random.below(4), index: 0, timeNs: Int64($0) * 1000) }
        var indexed: [Item] = []
        var counts: [Int: Int] = [:]
        for item in items { var i = item; i.index = counts[i.source, default: 0]; counts[i.source, default: 0] += 1; indexed.append(i) }
        // A bound no input reaches: only the memory fallback releases before the end.
        let (out, merge, maxHeld) = Self.run(indexed, boundNs: .max, capacity: 16)
        #expect(maxHeld <= 16)
        #expect(merge.releasedEarlyCount == 500 - 16)
        #expect(out.count == 500)
        #expect(Self.sourceOrderKept(out))
        #expect(zip(out, out.dropFirst()).allSatisfy { $0.timeNs <= $1.timeNs })
    }

    @Test func aSourcesOwnOrderIsKeptWhenItsTimesGoBack() {
        // Complete events written at their end, children first: times go back within the source.
        let items = [Item(source: 0, index: 0, timeNs: 50), Item(source: 0, index: 1, timeNs: 30), Item(source: 0, index: 2, timeNs: 10),
                     Item(source: 1, index: 0, timeNs: 20), Item(source: 1, index: 1, timeNs: 60)]
        let (out, merge, _) = Self.run(items, boundNs: 100, capacity: 64)
        #expect(Self.sourceOrderKept(out))
        #expect(out.map(\.source) == [1, 0, 0, 0, 1])
        #expect(merge.lateCount == 0)
    }
}

/// The ordering stage in the analyzer: a trace written in time order stays inside the bound, and a
/// file order far outside it is counted and changes no figure.
@Suite struct EventOrderingTests {
    @Test func aTraceWrittenInTimeOrderIsWithinTheBound() throws {
        let session = try AttributionOrderTests.generated(frames: 600, seed: 7, threadStates: true)
        var analyzer = Analyzer()
        var input = session
        try analyzer.add(&input, path: "generated")
        let counts = analyzer.orderingCounts
        #expect(counts.lateEvents == 0)
        #expect(counts.releasedEarly == 0)
        // About a flush interval plus the longest stage of events held, not the whole run.
        #expect(counts.peakHeld > 0)
        #expect(counts.peakHeld < session.events.count / 10)
    }

    @Test func threadsOneAfterAnotherAreLateAndGiveTheSameAnalysis() throws {
        let session = try AttributionOrderTests.generated(frames: 600, seed: 7, threadStates: true)
        let expected = try Analyzer.analyze([session])
        // Every thread's events after the previous thread's: seconds beyond the bound.
        var byThread = session
        byThread.events = session.events.enumerated()
            .sorted { ($0.element.thread.rawValue, $0.offset) < ($1.element.thread.rawValue, $1.offset) }.map(\.element)
        var analyzer = Analyzer()
        var input = byThread
        try analyzer.add(&input, path: "by thread")
        #expect(analyzer.orderingCounts.lateEvents > 0)
        #expect(analyzer.orderingCounts.releasedEarly == 0)
        let difference = AttributionOrderTests.difference(analyzer.finish(), expected)
        #expect(difference.isEmpty, "\(difference)")
    }
}
