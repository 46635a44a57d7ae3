import Foundation
import HitchAlgorithms
import HitchReader
import HitchTestSupport
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
    static func stating(flushIntervalMs: Int, _ list: TraceEventList) -> TraceEventList { TraceOrders.stating(flushIntervalMs: flushIntervalMs, list) }

    /// Each thread's events in its own order, delivered as a recorder flushing at random would: an
    /// event is read at a delivery time up to `jitterNs` after its emission (never before its
    /// thread's previous event), the threads merged by delivery time. Nothing is later than the
    /// jitter plus the lateness the list already had.
    static func delivered(_ list: TraceEventList, jitterNs: Int64, seed: UInt64) -> TraceEventList {
        var random = SeededGenerator(seed: seed)
        var keyed: [(key: Int64, thread: UInt32, index: Int, event: TraceEvent)] = []
        var lastKey: [UInt32: Int64] = [:]
        for (index, event) in list.events.enumerated() {
            let jitter = Int64(random.below(Int(jitterNs)))
            let key = max(lastKey[event.thread.rawValue] ?? .min, emissionNs(event) + jitter)
            lastKey[event.thread.rawValue] = key
            keyed.append((key, event.thread.rawValue, index, event))
        }
        keyed.sort { ($0.key, $0.index) < ($1.key, $1.index) }
        var out = list
        out.events = keyed.map(\.event)
        return out
    }

    static func beyondBoundWarning(_ a: Analysis) -> String? { a.warnings.first { $0.contains("later than the recorder's flush interval allows") } }

    /// A recorded trace (context switches drained after the fact, frames waiting for them) read in
    /// other orders within the bound it states gives the same analysis, and nothing is beyond the
    /// bound: delivered as a recorder flushing at random would, and interleaved at random as far as
    /// the bound allows. As recorded, and as a machine without schedstat files records it (its
    /// frame threads' windows split by their switches, which the writer drains after the fact).
    /// Recordings made inside the test: `RecordedOrderTests` (HitchCLITests).
    @Test(arguments: ["feed-naive-120hz.fxt", "generated"])
    func eventsShuffledWithinTheBoundGiveTheSameAnalysis(_ file: String) throws {
        let recorded: TraceEventList
        if file == "generated" {
            recorded = try AttributionOrderTests.generated(frames: 900, seed: 7, threadStates: true)
        } else {
            let path = AttributionOrderTests.tracesDirectory.appendingPathComponent(file).path
            try #require(FileManager.default.fileExists(atPath: path), "the recorded traces are in Traces/")
            recorded = try AttributionOrderTests.load(path)
        }
        // The recorder's interval, or the bound a recording made on an overloaded machine kept.
        let stated = TraceOrders.statingTheBoundItKeeps(Self.stating(flushIntervalMs: 100, recorded))
        let boundNs = try #require(TraceOrders.boundNs(stated))
        for (variant, list) in [("as recorded", stated), ("without the run delay", TraceOrders.withoutRunDelay(stated))] {
            let expected = try Analyzer.analyze([list])
            #expect(Self.beyondBoundWarning(expected) == nil)
            #expect(expected.recorded.frameCount > 100)
            var orders = (UInt64(1)...3).map { ("delivered \($0)", Self.delivered(list, jitterNs: 60 * Self.ms, seed: $0)) }
            for (seed, maxRun, favouring) in [(UInt64(4), 1, false), (5, 64, false), (6, 1, true)] {
                orders.append(("within the bound \(seed)", TraceOrders.withinBound(list, boundNs: boundNs, seed: seed, maxRun: maxRun, favouring: favouring)))
            }
            for (label, order) in orders {
                #expect(order.events.count == list.events.count)
                let got = try Analyzer.analyze([order])
                #expect(Self.beyondBoundWarning(got) == nil, "\(file) \(variant) \(label)")
                let difference = AttributionOrderTests.difference(got, expected)
                #expect(difference.isEmpty, "\(file) \(variant) \(label): \(difference)")
            }
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

    /// Frames 0..<`count` on the main thread, each begun at its vsync and committed 1 ms later.
    static func beginAndCommit(_ count: Int, periodNs: Int64, in b: inout TraceBuilder) {
        let main = b.main
        for id in 0..<count {
            let vsync = Int64(id) * periodNs
            b.list.append(vsync, main, .frameBegan(FrameBegan(frameID: UInt64(id), vsyncNs: vsync, targetNs: vsync + periodNs, periodNs: periodNs)))
            b.list.append(vsync + Self.ms, main, .frameCommitted(frameID: UInt64(id)))
        }
    }

    /// A render thread's events of more than twice the hold limit of frames ahead of their begins
    /// (far beyond the bound): the oldest are let go while they wait, and each begin that comes
    /// after its frame's events were let go is counted. Each begin that comes then opens a record
    /// of its own, which lets the oldest waiting frame's events go in turn: every frame is counted.
    /// Within twice the limit nothing is let go.
    @Test(arguments: [2 * EventOrder.holdLimit - 24, 2 * EventOrder.holdLimit + 76])
    func aBeginAfterItsFrameEventsWereLetGoIsCounted(_ frames: Int) throws {
        var b = TraceBuilder()
        let render = b.render
        let period = 16_666_667 as Int64
        for id in 0..<frames {
            let vsync = Int64(id) * period
            b.list.append(vsync + 2 * Self.ms, render, .frameRenderEnded(frameID: UInt64(id)))
            b.list.append(vsync + period, render, .framePresented(frameID: UInt64(id)))
        }
        Self.beginAndCommit(frames, periodNs: period, in: &b)
        let a = try b.analyze(rates: [60])
        #expect(a.recorded.frameCount == frames)
        if frames <= 2 * EventOrder.holdLimit {
            #expect(Self.letGoWarning(a) == nil)
            #expect(a.recorded.hitchCount == 0)
        } else {
            #expect(Self.letGoWarning(a)?.contains("\(frames) frames began after their other events were let go") == true,
                    "\(a.warnings)")
        }
    }

    /// Frames that are never presented wait for the hold limit of later frames; an event of one
    /// that comes after that is counted.
    @Test(arguments: [EventOrder.holdLimit - 24, EventOrder.holdLimit + 76])
    func aFrameEventAfterItsFrameWasLetGoIsCounted(_ frames: Int) throws {
        var b = TraceBuilder()
        let render = b.render
        Self.beginAndCommit(frames, periodNs: 16_666_667, in: &b)
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
