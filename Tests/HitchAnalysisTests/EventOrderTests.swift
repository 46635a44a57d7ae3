import Foundation
import HitchReader
import HitchTrace
import Testing
@testable import HitchAnalysis

/// The ordering stage: the watermark, the count of events beyond the bound, hostile timestamps.
@Suite struct EventOrderTests {
    static let ms: Int64 = 1_000_000

    /// Emission times as the analyzer hands them over: clamped (`clampedTime`).
    static func admit(_ times: [Int64], to order: inout EventOrder) {
        for t in times { order.admit(emittedAtNs: clampedTime(t)) }
    }

    @Test func aTraceWithoutAFlushIntervalHasNoBound() {
        var order = EventOrder()
        Self.admit([5 * Self.ms, 0, -Self.ms, .min, 9 * Self.ms, .max, 1, .min], to: &order)
        #expect(order.boundNs == .max)
        #expect(order.latestNs == analyzerTimeLimitNs)
        #expect(order.orderedThroughNs == .min)
        #expect(order.beyondBoundEvents == 0)
        #expect(order.warnings.isEmpty)
    }

    @Test func theWatermarkTrailsTheLatestEmissionByTwiceTheFlushInterval() {
        var order = EventOrder()
        order.takeFlushInterval(milliseconds: "100")
        #expect(order.boundNs == 200 * Self.ms)
        Self.admit([1000 * Self.ms], to: &order)
        #expect(order.orderedThroughNs == 800 * Self.ms)
        Self.admit([850 * Self.ms, 800 * Self.ms], to: &order)   // late, within the bound; exactly at the watermark
        #expect(order.beyondBoundEvents == 0)
        Self.admit([800 * Self.ms - 1], to: &order)
        #expect(order.beyondBoundEvents == 1)
        #expect(order.latestNs == 1000 * Self.ms)   // a late event never moves the watermark back
        Self.admit([2000 * Self.ms], to: &order)
        #expect(order.orderedThroughNs == 1800 * Self.ms)
        Self.admit([1000 * Self.ms], to: &order)
        #expect(order.beyondBoundEvents == 2)
        #expect(order.warnings.count == 1 && order.warnings[0].hasPrefix("2 events reached the file later"))
    }

    @Test func aFlushIntervalStatedAfterEventsAppliesFromThere() {
        var order = EventOrder()
        Self.admit([500 * Self.ms, 0], to: &order)
        #expect(order.beyondBoundEvents == 0)
        order.takeFlushInterval(milliseconds: "10")
        #expect(order.orderedThroughNs == 480 * Self.ms)
        Self.admit([0], to: &order)
        #expect(order.beyondBoundEvents == 1)
    }

    @Test(arguments: ["0", "-5", "abc", "", "1.5", "3600001", "99999999999999999999"])
    func aFlushIntervalThatIsNotSaneLeavesTheTraceUnbounded(_ text: String) {
        var order = EventOrder()
        order.takeFlushInterval(milliseconds: text)
        Self.admit([.max, 0, .min], to: &order)
        #expect(order.boundNs == .max)
        #expect(order.orderedThroughNs == .min)
        #expect(order.beyondBoundEvents == 0)
    }

    /// 0, Int64.max and Int64.min, and time going backwards by most of the range: the watermark
    /// never overflows and never moves back.
    @Test func hostileTimestampsNeitherOverflowNorMoveTheWatermarkBack() {
        var order = EventOrder()
        order.takeFlushInterval(milliseconds: "3600000")
        Self.admit([.min, .min, 0], to: &order)
        #expect(order.beyondBoundEvents == 0)
        #expect(order.orderedThroughNs == -order.boundNs)
        Self.admit([.max], to: &order)
        #expect(order.latestNs == analyzerTimeLimitNs)
        #expect(order.orderedThroughNs == analyzerTimeLimitNs - order.boundNs)
        Self.admit([0, .min, .max - 1, analyzerTimeLimitNs - order.boundNs], to: &order)   // two beyond, two within
        #expect(order.beyondBoundEvents == 2)
        #expect(order.latestNs == analyzerTimeLimitNs)
        #expect(order.orderedThroughNs == analyzerTimeLimitNs - order.boundNs)
    }

    // MARK: Through the analyzer

    static func emissionNs(_ event: TraceEvent) -> Int64 { event.payload.endNs ?? event.timestampNs }

    /// `list` with the recorder's flush interval stated first.
    static func stating(flushIntervalMs: Int, _ list: TraceEventList) -> TraceEventList {
        var out = list
        let key = out.intern(MetadataKey.flushIntervalMs.name), value = out.intern(String(flushIntervalMs))
        out.events.insert(TraceEvent(timestampNs: 0, thread: ThreadID(rawValue: 0), payload: .metadata(key: key, value: value)), at: 0)
        return out
    }

    /// Each thread's events in its own order, delivered as a recorder flushing at random would: an
    /// event is read at a delivery time up to `jitterNs` after its emission (never before its
    /// thread's previous event), the threads merged by delivery time. Nothing is later than the
    /// jitter plus the lateness the list already had.
    static func delivered(_ list: TraceEventList, jitterNs: Int64, seed: UInt64) -> TraceEventList {
        var random = AttributionOrderTests.Random(state: seed)
        var keyed: [(key: Int64, thread: UInt32, index: Int, event: TraceEvent)] = []
        var lastKey: [UInt32: Int64] = [:]
        for (index, event) in list.events.enumerated() {
            let jitter = Int64(random.below(Int(jitterNs)))
            var key = max(lastKey[event.thread.rawValue] ?? .min, emissionNs(event) + jitter)
            if case .metadata = event.payload { key = .min }   // metadata comes first, as recorded
            lastKey[event.thread.rawValue] = key
            keyed.append((key, event.thread.rawValue, index, event))
        }
        keyed.sort { ($0.key, $0.index) < ($1.key, $1.index) }
        var out = list
        out.events = keyed.map(\.event)
        return out
    }

    static func beyondBoundWarning(_ a: Analysis) -> String? { a.warnings.first { $0.contains("later than the recorder's flush interval allows") } }

    /// A recorded trace (context switches drained after the fact, frames waiting for them) shuffled
    /// within the bound it states gives the same analysis, and nothing is beyond the bound.
    @Test(arguments: ["feed-naive-120hz.fxt", "generated"])
    func eventsShuffledWithinTheBoundGiveTheSameAnalysis(_ file: String) throws {
        let recorded: TraceEventList
        if file == "generated" {
            recorded = try AttributionOrderTests.generated(frames: 900, seed: 7, threadStates: true)
        } else {
            let path = AttributionOrderTests.tracesDirectory.appendingPathComponent(file).path
            try #require(FileManager.default.fileExists(atPath: path), "the recorded traces are committed in Traces/")
            recorded = try AttributionOrderTests.load(path)
        }
        let list = Self.stating(flushIntervalMs: 100, recorded)
        let expected = try Analyzer.analyze([list])
        #expect(Self.beyondBoundWarning(expected) == nil)
        #expect(expected.recorded.frameCount > 100)
        for seed in UInt64(1)...3 {
            let shuffled = Self.delivered(list, jitterNs: 60 * Self.ms, seed: seed)
            #expect(shuffled.events.count == list.events.count)
            let got = try Analyzer.analyze([shuffled])
            #expect(Self.beyondBoundWarning(got) == nil, "\(file) seed \(seed)")
            let difference = AttributionOrderTests.difference(got, expected)
            #expect(difference.isEmpty, "\(file) seed \(seed): \(difference)")
        }
    }

    /// Events later than the bound are still analyzed, and counted in a warning.
    @Test func eventsBeyondTheBoundAreDeliveredAndCounted() throws {
        let session = CrossThreadOrderTests.session()
        let late = CrossThreadOrderTests.buffered(session, capacity: { _ in 1_000_000 }, finalOrder: (1...4).map { ThreadID(rawValue: UInt32($0)) } + [ThreadID(rawValue: 0)])
        let unbounded = try Analyzer.analyze([late])
        #expect(Self.beyondBoundWarning(unbounded) == nil)
        let bounded = try Analyzer.analyze([Self.stating(flushIntervalMs: 1, late)])
        let warning = try #require(Self.beyondBoundWarning(bounded))
        #expect(warning.contains("(2 ms after later ones)"))
        #expect(bounded.eventCount == unbounded.eventCount + 1)   // the metadata record
        #expect(bounded.recorded.frameCount == unbounded.recorded.frameCount)
    }

    // MARK: The one fallback: what the bound cannot release

    static func letGoWarning(_ a: Analysis) -> String? { a.warnings.first { $0.contains("items the analyzer holds for late events") } }

    @Test func whatHoldersLetGoIsCountedByWhatItWasInOneWarning() {
        var order = EventOrder()
        order.countLetGo(0, .frameEventsAfterJudging)
        #expect(order.warnings.isEmpty)
        order.countLetGo(2, .frameEventsAfterJudging)
        order.countLetGo(1, .instancesAfterWindowClosed)
        order.countLetGo(3, .frameEventsAfterJudging)
        #expect(order.warnings == ["past the \(EventOrder.holdLimit) items the analyzer holds for late events: 5 frame events came after "
            + "their frame was judged, 1 instances arrived after the hitch windows they overlap had closed; figures that join them miss what came later"])
    }

    /// Children written before their parent (each interval is written at its end): up to the hold
    /// limit of them, the parent's self time is exact; past it, the older half is let go, the
    /// parent's self time counts their time, and the analysis says so.
    @Test(arguments: [EventOrder.holdLimit - 24, EventOrder.holdLimit + 476])
    func aParentWrittenAfterItsChildrenIsExactUpToTheHoldLimit(_ children: Int) throws {
        var b = TraceBuilder()
        let worker = b.list.thread("worker")
        for i in 0..<Int64(children) { b.stage("child", on: worker, from: 2 * i * Self.ms, to: (2 * i + 1) * Self.ms) }
        b.stage("parent", on: worker, from: 0, to: 2 * Int64(children) * Self.ms)
        let a = try b.analyze()
        let parent = try #require(a.stages.first { $0.name == "parent" })
        if children <= EventOrder.holdLimit {
            #expect(Self.letGoWarning(a) == nil)
            #expect(parent.selfMs == Double(children))
        } else {
            #expect(Self.letGoWarning(a)?.contains("1 intervals enclosed intervals let go before them") == true)
            #expect(parent.selfMs == Double(children + EventOrder.holdLimit / 2))
        }
    }

    /// A stage written after more than the hold limit of hitching frames overlaps the first, whose
    /// window has closed: counted, not silently lost. Within the limit nothing is let go.
    @Test(arguments: [EventOrder.holdLimit - 24, EventOrder.holdLimit + 76])
    func anInstanceLaterThanTheOpenHitchWindowsIsCounted(_ hitching: Int) throws {
        var b = TraceBuilder()
        let period = 16_666_667 as Int64
        for id in 0..<(4 * hitching) {
            b.frame(UInt64(id), vsyncNs: Int64(id) * period, periodNs: period, workNs: id % 4 == 1 ? 20 * Self.ms : Self.ms)
        }
        let worker = b.list.thread("worker")
        b.stage("long", on: worker, from: 0, to: Int64(4 * hitching) * period)
        let a = try b.analyze(rates: [60])
        #expect(a.hitches["60"]?.hitchCount == hitching)
        if hitching <= EventOrder.holdLimit {
            #expect(Self.letGoWarning(a) == nil)
        } else {
            #expect(Self.letGoWarning(a)?.contains("1 instances arrived after the hitch windows they overlap had closed") == true)
        }
    }

    /// Frames that are never presented wait for the hold limit of later frames; an event of one
    /// that comes after that is counted.
    @Test(arguments: [EventOrder.holdLimit - 24, EventOrder.holdLimit + 76])
    func aFrameEventAfterItsFrameWasLetGoIsCounted(_ frames: Int) throws {
        var b = TraceBuilder()
        let main = b.main, render = b.render
        let period = 16_666_667 as Int64
        for id in 0..<frames {
            let vsync = Int64(id) * period
            b.list.append(vsync, main, .frameBegan(FrameBegan(frameID: UInt64(id), vsyncNs: vsync, targetNs: vsync + period, periodNs: period)))
            b.list.append(vsync + Self.ms, main, .frameCommitted(frameID: UInt64(id)))
        }
        b.list.append(2 * Self.ms, render, .frameRenderEnded(frameID: 0))
        let a = try b.analyze(rates: [60])
        #expect(a.recorded.frameCount == frames)
        if frames <= EventOrder.holdLimit {
            #expect(Self.letGoWarning(a) == nil)
        } else {
            #expect(Self.letGoWarning(a)?.contains("1 frame events came after their frame was judged") == true)
        }
    }
}
