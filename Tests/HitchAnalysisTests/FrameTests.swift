import Testing
import HitchTrace
@testable import HitchAnalysis

private let ms = TraceBuilder.ms
private let period120: Int64 = 8_333_333
private let period60: Int64 = 16_666_667

@Suite struct FrameTests {
    /// 120 Hz frames doing 1 ms of main-thread work, one of which stalls 8 ms more.
    func stallTrace(stallFrame: UInt64 = 6) -> TraceBuilder {
        var b = TraceBuilder()
        for id in UInt64(0)..<24 {
            let work = id == stallFrame ? 9 * ms : 1 * ms
            b.frame(id, vsyncNs: Int64(id) * period120, periodNs: period120, workNs: work)
        }
        return b
    }

    @Test func eightMillisecondStallHitchesAt120HzNotAt60Hz() throws {
        for stallFrame: UInt64 in [6, 7] {
            let a = try stallTrace(stallFrame: stallFrame).analyze()
            let at120 = try #require(a.hitches["120"])
            let at60 = try #require(a.hitches["60"])
            #expect(at120.source == .recorded)
            #expect(at120.frameCount == 24)
            #expect(at120.hitchCount == 1)
            #expect(abs(at120.longestHitchMs - 8.333333) < 0.001)
            #expect(at120.commitHitchCount == 1)
            #expect(at60.source == .replay)
            #expect(at60.hitchCount == 0)
            #expect(at60.frameCount == 13)   // frame 0 alone, then two 120 Hz frames per 60 Hz frame, frame 23 alone
        }
    }

    @Test func replayAtTheRecordedRateMatchesTheRecordedJudgement() {
        var replay = ReplayModel(rateHz: 120)
        var hitches: [Int64] = []
        for id in 0..<24 {
            let work = id == 6 ? 9 * ms : 1 * ms
            if replay.add(frameID: UInt64(id), releaseNs: Int64(id) * period120, isInput: false, mainWorkNs: work, renderNs: ms) {
                hitches.append(replay.completed.hitchNs)
            }
        }
        if replay.finish() { hitches.append(replay.completed.hitchNs) }
        #expect(hitches.filter { $0 > 0 } == [period120])
    }

    /// Events of frames whose begin never comes are dropped once twice the window waits, though no
    /// frame is handed out in between; a frame begun later is still assembled.
    @Test func framesWithoutABeginAreDroppedPastTwiceTheWindow() {
        var assembler = FrameAssembler()
        var mostKept = 0, handedOut = 0
        for id in 0..<(3 * EventOrder.holdLimit) {
            assembler.update(UInt64(id)) { $0.commitNs = Int64(id) }
            if assembler.nextReady(all: false) != nil { handedOut += 1 }
            mostKept = max(mostKept, assembler.keptRecords)
        }
        #expect(handedOut == 0)
        #expect(mostKept == 2 * EventOrder.holdLimit)
        assembler.update(1 << 40, began: true) { $0.beganNs = 0 }
        assembler.update(1 << 40) { $0.commitNs = 1 }
        #expect(assembler.nextReady(all: true)?.frameID == 1 << 40)
    }

    @Test func hitchTimeRatioUsesInteractionTimeAndGradesOnBothScales() throws {
        var b = stallTrace()
        let kind = b.list.intern("scroll")
        b.list.append(0, b.main, .interactionBegin(kind: kind))
        b.list.append(500 * ms, b.main, .interactionEnd(kind: kind))
        let a = try b.analyze()
        let at120 = try #require(a.hitches["120"])
        #expect(abs(at120.animatingSeconds - 0.5) < 1e-9)
        #expect(abs(at120.hitchTimeRatioMsPerS - 8.333333 / 0.5) < 0.001)   // 16.7 ms/s
        #expect(at120.verdict == .critical)
        #expect(at120.appleTestScale.grade == .critical)
        #expect(at120.organizerScale.grade == .fair)
        #expect(at120.appleTestScale.scale.contains("Apple"))
        #expect(at120.animatingTimeSource == .interactions)
    }

    @Test func animatingTimeWithoutInteractionsIsFirstFrameToLastPresent() throws {
        let a = try stallTrace().analyze()
        let at120 = try #require(a.hitches["120"])
        // First vsync 0; last frame 23 presents at its vsync + 2 periods (25 periods).
        #expect(abs(at120.animatingSeconds - Double(25 * period120) / 1e9) < 1e-6)
        #expect(at120.animatingTimeSource == .frames)
    }

    @Test func steadyTripleBufferingIsLatencyNotHitches() throws {
        var b = TraceBuilder()
        for id in UInt64(0)..<20 {
            let vsync = Int64(id) * period60
            let expected = vsync + 2 * period60
            let late = (5..<15).contains(id) ? period60 : 0
            b.frame(id, vsyncNs: vsync, periodNs: period60, workNs: 2 * ms, presentNs: expected + late)
        }
        let a = try b.analyze()
        let at60 = try #require(a.hitches["60"])
        #expect(at60.source == .recorded)
        #expect(at60.hitchCount == 1)                 // the change into triple buffering
        #expect(at60.tripleBufferedFrames == 9)       // frames 6...14 are latency
        #expect(abs(at60.addedLatencyMs - 9 * 16.666667) < 0.01)
        #expect(a.frames.filter { $0.kind == .latency }.count == 9)
    }

    @Test func renderHitchIsToldApartFromCommitHitch() throws {
        var b = TraceBuilder()
        for id in UInt64(0)..<10 {
            b.frame(id, vsyncNs: Int64(id) * period60, periodNs: period60, workNs: 2 * ms,
                    renderNs: id == 4 ? 20 * ms : 2 * ms)
        }
        let a = try b.analyze(rates: [60])
        let at60 = try #require(a.hitches["60"])
        #expect(at60.hitchCount == 1)
        #expect(at60.renderHitchCount == 1)
        #expect(at60.commitHitchCount == 0)
        #expect(at60.slowFrames == 1)                 // 2 + 20 ms > 16.7 ms
    }

    @Test func refreshRateChangeIsFlaggedAndEachFrameJudgedOnItsOwnPeriod() throws {
        var b = TraceBuilder()
        var vsync: Int64 = 0
        for id in UInt64(0)..<10 {        // 60 Hz; frame 3 does 10 ms: fine at 60 Hz
            b.frame(id, vsyncNs: vsync, periodNs: period60, workNs: id == 3 ? 10 * ms : ms)
            vsync += period60
        }
        for id in UInt64(10)..<20 {       // 120 Hz; frame 13 does 10 ms: a hitch at 120 Hz
            b.frame(id, vsyncNs: vsync, periodNs: period120, workNs: id == 13 ? 10 * ms : ms)
            vsync += period120
        }
        let a = try b.analyze()
        #expect(a.refreshRateChanges.count == 1)
        #expect(a.refreshRateChanges.first?.fromHz == 60)
        #expect(a.refreshRateChanges.first?.toHz == 120)
        #expect(a.recordedRates.count == 2)
        #expect(a.recorded.frameCount == 20)
        #expect(a.recorded.hitchCount == 1)
        #expect(abs(a.recorded.longestHitchMs - 8.333333) < 0.001)
        #expect(a.hitches["60"]?.source == .replay)
        #expect(a.hitches["120"]?.source == .replay)
    }

    @Test func percentilesAndWorstWindow() throws {
        var b = TraceBuilder()
        // 100 frames at 60 Hz; work 1..100 % of 10 ms; three 20 ms frames in the first second.
        for id in UInt64(0)..<100 {
            let work = [10, 20, 30].contains(id) ? 20 * ms : Int64(id + 1) * 100_000
            b.frame(id, vsyncNs: Int64(id) * period60, periodNs: period60, workNs: work, renderNs: 0)
        }
        let a = try b.analyze(rates: [60])
        let at60 = try #require(a.hitches["60"])
        #expect(at60.hitchCount == 3)
        #expect(at60.worstWindow.hitchCount == 3)
        #expect(abs(at60.worstWindow.hitchMs - 3 * 16.666667) < 0.01)
        #expect(at60.frameTimeMs.max == 20)
        #expect(at60.frameTimeMs.relativeError == 0)
        #expect(at60.slowFrames == 3)
        #expect(at60.frozenFrames == 0)
        // Overrun: on-time frames present exactly at expected (0), hitches one period late.
        #expect(at60.overrunMs.p50 == 0)
        #expect(abs(at60.overrunMs.max - 16.666667) < 0.001)
    }

    @Test func framesAcrossRunsNeverJoinButFiguresAdd() throws {
        let one = stallTrace().list
        let a = try Analyzer.analyze([one, one])
        #expect(a.runs.count == 2)
        #expect(a.hitches["120"]?.hitchCount == 2)
        #expect(a.hitches["120"]?.frameCount == 48)
        #expect(a.hitches["60"]?.hitchCount == 0)
    }

    @Test func inputArrivalReleasesReplayedWorkEarly() throws {
        // At 30 Hz recorded, an input at 2 ms whose frame (vsync 33.3 ms) does 12 ms of work.
        // Replayed at 120 Hz the work starts at the first vsync after the input (8.3 ms) and hitches.
        var b = TraceBuilder()
        let period30: Int64 = 33_333_333
        let input = b.list.intern("input"), key = b.list.intern("keystroke")
        for id in UInt64(0)..<4 {
            if id == 1 { b.list.append(2 * ms, b.main, .instant(category: input, name: key)) }
            b.frame(id, vsyncNs: Int64(id) * period30, periodNs: period30, workNs: id == 1 ? 12 * ms : ms)
        }
        let a = try b.analyze(rates: [120])
        let at120 = try #require(a.hitches["120"])
        #expect(at120.hitchCount == 1)
        #expect(a.recorded.hitchCount == 0)
    }
}

@Suite struct SketchTests {
    @Test func histogramQuantilesStayWithinTheDocumentedError() {
        var sketch = QuantileSketch()
        var values: [Int64] = []
        var state: UInt64 = 42
        for _ in 0..<50_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let v = Int64(state >> 40) + 1000
            values.append(v)
            sketch.add(v)
        }
        values.sort()
        for q in [0.5, 0.9, 0.95, 0.99] {
            let exact = Double(values[Int((q * Double(values.count)).rounded(.up)) - 1])
            let estimate = sketch.quantile(q)
            #expect(abs(estimate - exact) / exact <= QuantileSketch.histogramRelativeError + 1e-9)
        }
        #expect(sketch.relativeError > 0)
    }

    @Test func negativeValuesSortBelowZero() {
        var sketch = QuantileSketch()
        for v in -5000..<5000 { sketch.add(Int64(v) * 1000) }
        #expect(sketch.quantile(0.25) < 0)
        #expect(sketch.quantile(0.75) > 0)
    }
}
