import Foundation
import HitchReader
import HitchTestSupport
import HitchTrace
import Testing
@testable import HitchAnalysis

/// Hitch causes from thread-state readings (docs/METRICS.md "Hitch causes"), on hand-built traces
/// whose answers are known: each frame's time is planted as running, runnable, asleep or stolen.
@Suite struct ThreadStateTests {
    static let ms: Int64 = 1_000_000
    static let period: Int64 = 8_333_333

    /// How a thread spends a window: the parts are laid end to end.
    struct Window {
        var running: Int64 = 0
        var runnable: Int64 = 0
        var asleep: Int64 = 0
        var stolen: Int64 = 0
        var total: Int64 { running + runnable + asleep + stolen }
        static func work(_ ns: Int64) -> Window { Window(running: ns) }
    }

    /// One thread's cumulative counters, advanced window by window as the kernel would.
    struct Counters {
        var cpu: Int64 = 0, wait: Int64 = 0, voluntary: Int64 = 0, involuntary: Int64 = 0
        /// What the recorder would read; `runnableWait: false` drops the schedstat field.
        func reading(_ id: UInt64, _ phase: FramePhase, runnableWait: Bool = true) -> TraceEvent.Payload {
            .threadState(ThreadStateReading(frameID: id, phase: phase, cpuNs: cpu, runnableWaitNs: runnableWait ? wait : nil,
                                            voluntarySwitches: voluntary, involuntarySwitches: involuntary))
        }
        mutating func spend(_ w: Window) {
            cpu += w.running
            wait += w.runnable
            if w.asleep > 0 { voluntary += 1 }
            if w.runnable > 0 { involuntary += 1 }
            // Stolen time shows in no counter of the thread: its CPU clock excludes steal.
        }
    }

    /// A trace builder that writes each frame with the main and render threads' readings.
    struct StateTrace {
        var b = TraceBuilder()
        var main = Counters(), render = Counters()
        var vsync: Int64 = 10 * ThreadStateTests.ms
        var frameID: UInt64 = 0
        var withReadings = true
        var periodNs = ThreadStateTests.period
        /// The perf source: readings without the run delay, and each window's switches (a preempting
        /// switch-out before its runnable part, a sleeping one before its asleep part, each followed
        /// by the switch-in) as the recorder's context-switch records.
        var perfSwitches = false

        mutating func switches(_ thread: ThreadID, from start: Int64, _ w: Window) {
            guard perfSwitches else { return }
            var t = start + w.running
            if w.runnable > 0 {
                b.list.append(t, thread, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: true)))
                t += w.runnable
                b.list.append(t, thread, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false)))
            }
            if w.asleep > 0 {
                b.list.append(t, thread, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: false)))
                t += w.asleep
                b.list.append(t, thread, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false)))
            }
        }

        /// A frame whose main thread spends `mainWindow` from its vsync to commit and whose render
        /// thread spends `renderWindow` from the vsync after commit; presented at the first vsync after.
        mutating func frame(main mainWindow: Window = .work(2 * ThreadStateTests.ms),
                            render renderWindow: Window = .work(1 * ThreadStateTests.ms)) {
            let id = frameID
            let mainThread = b.main, renderThread = b.render
            let commit = vsync + mainWindow.total
            let renderStart = vsyncAtOrAfter(commit, anchor: vsync, period: periodNs)
            let renderEnd = renderStart + renderWindow.total
            if withReadings { b.list.append(vsync, mainThread, main.reading(id, .frameBegan, runnableWait: !perfSwitches)) }
            switches(mainThread, from: vsync, mainWindow)
            switches(renderThread, from: renderStart, renderWindow)
            b.frame(id, vsyncNs: vsync, periodNs: periodNs, workNs: mainWindow.total, renderNs: renderWindow.total,
                    presentNs: vsyncAtOrAfter(renderEnd, anchor: vsync, period: periodNs))
            main.spend(mainWindow)
            if withReadings {
                b.list.append(commit, mainThread, main.reading(id, .committed, runnableWait: !perfSwitches))
                b.list.append(renderStart, renderThread, render.reading(id, .renderBegan, runnableWait: !perfSwitches))
            }
            render.spend(renderWindow)
            if withReadings { b.list.append(renderEnd, renderThread, render.reading(id, .renderEnded, runnableWait: !perfSwitches)) }
            frameID += 1
            // The next frame begins at the first vsync after both threads are free.
            vsync = vsyncAtOrAfter(max(commit, renderEnd - periodNs) + 1, anchor: vsync, period: periodNs)
        }

        /// Seven ordinary frames, then three late ones between ordinary ones: waiting for a CPU,
        /// asleep in its main thread (less than a period with its work) and its render waiting for a
        /// CPU longer, and the app's own work.
        mutating func mixedHitches() {
            for _ in 0..<7 { frame() }
            frame(main: Window(running: 6 * ThreadStateTests.ms, runnable: 5 * ThreadStateTests.ms))
            frame()
            frame(main: Window(running: ThreadStateTests.ms, asleep: 6 * ThreadStateTests.ms),
                  render: Window(running: 2 * ThreadStateTests.ms, runnable: 9 * ThreadStateTests.ms))
            frame()
            frame(main: .work(13 * ThreadStateTests.ms))
        }

        /// `normal` ordinary frames, then the planted one, three times, then `normal` more.
        mutating func planted(main: Window = .work(2 * ThreadStateTests.ms), render: Window = .work(1 * ThreadStateTests.ms),
                              times: Int = 3, normal: Int = 10) {
            for _ in 0..<times {
                for _ in 0..<normal { frame() }
                frame(main: main, render: render)
            }
            for _ in 0..<normal { frame() }
        }

        func analyze(rates: [Double] = [60, 120]) throws -> Analysis {
            try Analyzer.analyze([TraceOrders.timeOrdered(b.list)], options: AnalyzerOptions(refreshRatesHz: rates))
        }
    }

    /// Every hitch at `key` is under `cause`, and the causes sum to the total.
    /// Three hitching frames with `main` and `render` planted in them, among normal ones, analyzed at
    /// 60 and 120 Hz, every hitch at 120 Hz expected to be `cause`.
    static func analyzePlanted(main: Window = .work(2 * ThreadStateTests.ms), render: Window = .work(1 * ThreadStateTests.ms),
                               expecting cause: HitchCause, sourceLocation: SourceLocation = #_sourceLocation) throws -> Analysis {
        var t = StateTrace()
        t.planted(main: main, render: render)
        let a = try t.analyze()
        try expectAll(a, "120", cause, count: 3, sourceLocation: sourceLocation)
        return a
    }

    static func expectAll(_ a: Analysis, _ key: String, _ cause: HitchCause, count: Int? = nil,
                          sourceLocation: SourceLocation = #_sourceLocation) throws {
        let h = try #require(a.hitches[key], sourceLocation: sourceLocation)
        #expect(h.hitchCount > 0, sourceLocation: sourceLocation)
        if let count { #expect(h.hitchCount == count, sourceLocation: sourceLocation) }
        #expect(h.byCause[cause].hitchCount == h.hitchCount, "\(key) Hz: \(h.byCause)", sourceLocation: sourceLocation)
        let sum = HitchCause.allCases.map { h.byCause[$0].totalHitchMs }.reduce(0, +)
        #expect(abs(sum - h.totalHitchMs) < 1e-6, sourceLocation: sourceLocation)
        #expect(abs(h.byCause[cause].hitchTimeRatioMsPerS - h.hitchTimeRatioMsPerS) < 1e-9, sourceLocation: sourceLocation)
    }

    @Test func splitBetweenReadings() {
        func reading(_ at: Int64, cpu: Int64, wait: Int64?, vol: Int64?, invol: Int64?) -> PhaseReading {
            PhaseReading(atNs: at, ThreadStateReading(frameID: 0, phase: .frameBegan, cpuNs: cpu, runnableWaitNs: wait,
                                                      voluntarySwitches: vol, involuntarySwitches: invol))
        }
        // 10 ms: 4 running, 3 runnable, the rest asleep (a voluntary switch).
        let slept = StateSplit.between(reading(0, cpu: 0, wait: 0, vol: 0, invol: 0), reading(10 * Self.ms, cpu: 4 * Self.ms, wait: 3 * Self.ms, vol: 1, invol: 1))
        #expect(slept == StateSplit(runningNs: 4 * Self.ms, runnableNs: 3 * Self.ms, blockedNs: 3 * Self.ms))
        // No voluntary switch: the rest is the machine's (stolen while on the CPU).
        let stolen = StateSplit.between(reading(0, cpu: 0, wait: 0, vol: 0, invol: 0), reading(10 * Self.ms, cpu: 4 * Self.ms, wait: 3 * Self.ms, vol: 0, invol: 1))
        #expect(stolen == StateSplit(runningNs: 4 * Self.ms, runnableNs: 3 * Self.ms, machineNs: 3 * Self.ms))
        // Without the run delay: no switch at all is still the machine; a switch is unknown.
        let noWaitNoSwitch = StateSplit.between(reading(0, cpu: 0, wait: nil, vol: 0, invol: 0), reading(10 * Self.ms, cpu: 4 * Self.ms, wait: nil, vol: 0, invol: 0))
        #expect(noWaitNoSwitch == StateSplit(runningNs: 4 * Self.ms, machineNs: 6 * Self.ms))
        let noWaitSwitched = StateSplit.between(reading(0, cpu: 0, wait: nil, vol: 0, invol: 0), reading(10 * Self.ms, cpu: 4 * Self.ms, wait: nil, vol: 0, invol: 2))
        #expect(noWaitSwitched == StateSplit(runningNs: 4 * Self.ms, unknownNs: 6 * Self.ms))
        // Counters past the wall time (readings a few µs apart) are clamped to the window.
        let clamped = StateSplit.between(reading(0, cpu: 0, wait: 0, vol: 0, invol: 0), reading(Self.ms, cpu: 2 * Self.ms, wait: Self.ms, vol: 0, invol: 0))
        #expect(clamped == StateSplit(runningNs: Self.ms))
        #expect(StateSplit.between(PhaseReading(), reading(Self.ms, cpu: 0, wait: 0, vol: 0, invol: 0)) == nil)
    }

    @Test func appWorkWhenOnCPUWorkAloneMissesTheDeadline() throws {
        // 12 ms on a CPU, 1 ms runnable: the work alone misses 8.3 ms.
        let a = try Self.analyzePlanted(main: Window(running: 12 * Self.ms, runnable: Self.ms), expecting: .appWork)
        #expect(a.recorded.appHitchTimeRatioMsPerS == a.recorded.hitchTimeRatioMsPerS)
        #expect(a.hitches["120"]?.appHitchTimeRatioMsPerS == a.hitches["120"]?.hitchTimeRatioMsPerS)
        #expect(a.hitchAttributions.allSatisfy { $0.cause == .appWork })
        let split = try #require(a.hitchAttributions.first?.mainThreadStates)
        #expect(split.runningMs == 12 && split.runnableMs == 1)
        #expect(a.threadStates?.framesWithoutReadings == 0)
        #expect(!a.warnings.contains { $0.contains("cause") })
    }

    @Test func waitingForCPUWhenTheWorkFitButRunnableTimeMadeItLate() throws {
        let a = try Self.analyzePlanted(main: Window(running: 6 * Self.ms, runnable: 6 * Self.ms), expecting: .waitingForCPU)
        #expect(a.hitches["120"]?.appHitchTimeRatioMsPerS == 0)
        #expect(a.threadStates?.mainThreadInHitches.runnableMs == 18)
    }

    @Test func blockedWhenTheThreadSleptInsideTheFrame() throws {
        let a = try Self.analyzePlanted(main: Window(running: 4 * Self.ms, runnable: Self.ms / 2, asleep: 8 * Self.ms), expecting: .blocked)
        #expect(a.hitchAttributions.first?.mainThreadStates?.blockedMs == 8)
    }

    @Test func machineStallWhenTimeIsMissingFromEveryCounter() throws {
        let a = try Self.analyzePlanted(main: Window(running: 5 * Self.ms, stolen: 9 * Self.ms), expecting: .machineStall)
        #expect(a.hitchAttributions.first?.mainThreadStates?.machineMs == 9)
    }

    @Test func aRenderHitchIsJudgedOnTheRenderThreadsStates() throws {
        // The commit is on time; the render thread was runnable for most of its 12 ms.
        let a = try Self.analyzePlanted(render: Window(running: 4 * Self.ms, runnable: 8 * Self.ms), expecting: .waitingForCPU)
        #expect(a.recorded.renderHitchCount == 3)
        _ = try Self.analyzePlanted(render: Window(running: 12 * Self.ms), expecting: .appWork)
    }

    /// The replay at another rate removes the same waits: a 20 ms frame at 60 Hz is the app's when
    /// its work alone takes 20 ms, the scheduler's when 15 of them were spent runnable.
    @Test func replayedRatesUseTheSameCounterfactual() throws {
        var app = StateTrace()
        app.planted(main: .work(20 * Self.ms))
        let appAnalysis = try app.analyze(rates: [60, 120])
        #expect(appAnalysis.hitches["60"]?.source == .replay)
        try Self.expectAll(appAnalysis, "60", .appWork)
        try Self.expectAll(appAnalysis, "120", .appWork)
        var waiting = StateTrace()
        waiting.planted(main: Window(running: 5 * Self.ms, runnable: 15 * Self.ms))
        let waitingAnalysis = try waiting.analyze(rates: [60, 120])
        try Self.expectAll(waitingAnalysis, "60", .waitingForCPU)
        try Self.expectAll(waitingAnalysis, "120", .waitingForCPU)
        #expect(waitingAnalysis.hitches["60"]?.appHitchTimeRatioMsPerS == 0)
        // 7 ms running fits 60 Hz but not 120 Hz, where the 9 ms wait is what made it late.
        var mixed = StateTrace()
        mixed.planted(main: Window(running: 10 * Self.ms, runnable: 9 * Self.ms))
        let mixedAnalysis = try mixed.analyze(rates: [60, 120])
        try Self.expectAll(mixedAnalysis, "60", .waitingForCPU)
        try Self.expectAll(mixedAnalysis, "120", .appWork)
    }

    @Test func tracesWithoutReadingsSayUnknownOnce() throws {
        var t = StateTrace()
        t.withReadings = false
        t.planted(main: .work(20 * Self.ms))
        let a = try t.analyze()
        try Self.expectAll(a, "120", .unknown, count: 3)
        try Self.expectAll(a, "60", .unknown)
        #expect(a.hitches["120"]?.appHitchTimeRatioMsPerS == nil)
        #expect(a.threadStates == nil)
        #expect(a.warnings.filter { $0.contains("cause") }.count == 1)
        #expect(a.hitchAttributions.allSatisfy { $0.cause == .unknown && $0.mainThreadStates == nil })
        // A budget on the app's share cannot pass a trace that cannot tell.
        let budgets = try BudgetFile.parse(Data(#"{"budgets": [{"metric": "hitches.120.appHitchTimeRatioMsPerS", "max": 5}]}"#.utf8), path: "b.json")
        #expect(throws: BudgetError.self) { try BudgetFile.evaluate(budgets, against: a) }
    }

    @Test func budgetsAndDiffKnowTheCauseFigures() throws {
        let text = #"{"budgets": [{"metric": "hitches.120.appHitchTimeRatioMsPerS", "max": 5},"#
            + #"{"metric": "hitches.60.byCause.waitingForCPU.hitchTimeRatioMsPerS", "max": 1000},"#
            + #"{"metric": "recorded.byCause.machineStall.hitchCount", "max": 10}]}"#
        let budgets = try BudgetFile.parse(Data(text.utf8), path: "b.json")
        var t = StateTrace()
        t.planted(main: Window(running: 6 * Self.ms, runnable: 6 * Self.ms))
        let a = try t.analyze()
        let outcomes = try BudgetFile.evaluate(budgets, against: a)
        #expect(outcomes.allSatisfy { $0.status == .passed })
        #expect(outcomes[0].actual == 0)
        let metrics = a.comparedFigures().map(\.metric)
        #expect(metrics.contains("hitches.120.appHitchTimeRatioMsPerS"))
        #expect(metrics.contains("hitches.120.byCause.waitingForCPU.hitchTimeRatioMsPerS"))
        #expect(throws: BudgetError.self) { try BudgetFile.parse(Data(#"{"budgets": [{"metric": "hitches.120.byCause.appwork.hitchTimeRatioMsPerS", "max": 1}]}"#.utf8), path: "b.json") }
    }

    /// Machine readings over a hitch, and exact switches of the main thread, reach its attribution.
    @Test func machineReadingsAndSwitchesAreMeasuredOverTheHitch() throws {
        var t = StateTrace()
        let sampler = t.b.list.thread("hitch-sched")
        t.planted(main: Window(running: 5 * Self.ms, stolen: 9 * Self.ms), times: 1)
        let frames = t.b.list.events.compactMap { e -> (Int64, UInt64)? in
            if case .frameBegan(let f) = e.payload { return (e.timestampNs, f.frameID) } else { return nil }
        }
        let planted = try #require(frames.first { $0.1 == 10 }).0
        // Steal summed over 2 CPUs: 18 ms of it in a 20 ms window around the planted frame.
        for (i, at) in [planted - 3 * Self.ms, planted + 17 * Self.ms].enumerated() {
            t.b.list.append(at, sampler, .machineState(MachineStateReading(stealNs: Int64(i) * 18 * Self.ms, cpuPressureSomeUs: Int64(i) * 4_000,
                                                                           cgroupThrottledUs: nil, onlineCPUs: 2)))
        }
        // Preempted for 2 ms, asleep for 1 ms inside the planted frame's main window.
        let main = t.b.main
        for (dt, direction, preempted) in [(Int64(1), SwitchDirection.switchedOut, true), (3, .switchedIn, false),
                                           (4, .switchedOut, false), (5, .switchedIn, false)] {
            t.b.list.append(planted + dt * Self.ms, main, .schedSwitch(SchedSwitch(direction: direction, preempted: preempted)))
        }
        let a = try t.analyze()
        let hitch = try #require(a.hitchAttributions.first)
        #expect(hitch.cause == .machineStall)
        let machine = try #require(hitch.machine)
        // The frame's window (its begin to its render end, 17.7 ms) overlaps the readings' 20 ms
        // interval for 17 ms: 18 ms of steal over 2 CPUs, prorated, is 9 * 17 / 20 ms per CPU.
        #expect(abs(machine.stealMs - 9.0 * 17 / 20) < 0.001)
        #expect(abs(machine.cpuPressureSomeMs - 4.0 * 17 / 20) < 0.001)
        let switches = try #require(hitch.mainThreadSwitches)
        #expect(switches.runnableMs == 2 && switches.blockedMs == 1 && switches.runningMs == 11)
        #expect(a.threadStates?.contextSwitches == 4)
        #expect(a.threadStates?.source == .procfs)
    }

    /// A frame that began 12 ms after its vsync because its wake-up waited for a CPU: the late
    /// start's runnable time is the scheduler's, so 5 ms of work is not app work.
    @Test func aLateStartThatWaitedForTheCPUIsWaiting() throws {
        func session(gapRunnable: Int64, gapWork: Int64 = 0) throws -> Analysis {
            var b = TraceBuilder()
            let main = b.main
            var counters = Counters()
            for id in UInt64(0)..<12 {
                let vsync = Int64(id) * 3 * Self.period
                let late: Int64 = id == 6 ? 12 * Self.ms : 0
                // Before the frame: asleep until the vsync, then runnable for `gapRunnable` of the late start.
                counters.spend(Window(runnable: id == 6 ? gapRunnable : 0, asleep: Self.ms))
                if id == 6 && gapWork > 0 { counters.spend(.work(gapWork)) }
                b.list.append(vsync + late, main, counters.reading(id, .frameBegan))
                b.list.append(vsync + late, main, .frameBegan(FrameBegan(frameID: id, vsyncNs: vsync, targetNs: vsync + Self.period, periodNs: Self.period)))
                counters.spend(.work(5 * Self.ms))
                let commit = vsync + late + 5 * Self.ms
                b.list.append(commit, main, counters.reading(id, .committed))
                b.list.append(commit, main, .frameCommitted(frameID: id))
                let renderStart = vsyncAtOrAfter(commit, anchor: vsync, period: Self.period)
                b.list.append(renderStart + Self.ms, b.render, .frameRenderEnded(frameID: id))
                b.list.append(renderStart + Self.period, b.render, .framePresented(frameID: id))
            }
            return try b.analyze(rates: [120])
        }
        let waited = try session(gapRunnable: 12 * Self.ms)
        #expect(waited.recorded.hitchCount == 1 && waited.recorded.byCause.waitingForCPU.hitchCount == 1)
        // The same late start without runnable time (the thread slept past its vsync: its wake-up
        // timer fired late, as when the host stalls) is not on-CPU work either, nor a wait on the
        // app: a timed wait that woke late is the machine's.
        let slept = try session(gapRunnable: 0)
        #expect(slept.recorded.hitchCount == 1 && slept.recorded.byCause.machineStall.hitchCount == 1)
        // A late start spent working (the thread ran after it woke) stays in the frame: the app's.
        let worked = try session(gapRunnable: 0, gapWork: 12 * Self.ms)
        #expect(worked.recorded.hitchCount == 1 && worked.recorded.byCause.appWork.hitchCount == 1)
    }

    /// `FrameMarker` loops take one reading per mark: it ends one frame (its `committed` reading)
    /// and begins the next, so a frame's begin is the main thread's reading before its commit.
    @Test func markedFramesSplitFromTheReadingBeforeTheCommit() throws {
        var b = TraceBuilder()
        let main = b.main
        var counters = Counters()
        var mark: Int64 = 10 * Self.ms
        b.list.append(mark, main, counters.reading(0, .frameBegan))
        for id in UInt64(0)..<40 {
            let window: Window = id == 12 ? .work(20 * Self.ms) : id == 25 ? Window(running: 8 * Self.ms, runnable: 12 * Self.ms) : .work(5 * Self.ms)
            let commit = mark + window.total
            b.list.append(mark, main, .frameBegan(FrameBegan(frameID: id, vsyncNs: mark, targetNs: mark + Self.period, periodNs: Self.period)))
            b.list.append(commit, main, .frameCommitted(frameID: id))
            b.list.append(commit, main, .frameRenderEnded(frameID: id))
            b.list.append(commit, main, .framePresented(frameID: id))
            counters.spend(window)
            b.list.append(commit, main, counters.reading(id, .committed))
            mark = commit
        }
        let a = try b.analyze(rates: [120])
        #expect(a.recorded.hitchCount == 2)
        #expect(a.recorded.byCause.appWork.hitchCount == 1 && a.recorded.byCause.waitingForCPU.hitchCount == 1)
        #expect(a.threadStates?.framesWithoutReadings == 0)
    }

    /// A generated session with readings written to a file and read back: every cause the generator
    /// plants is found, and random interleavings of its threads give the same figures, bit for bit.
    @Test func generatedSessionWithReadingsInAnyOrder() throws {
        let session = try AttributionOrderTests.generated(frames: 700, seed: 11, threadStates: true)
        let expected = try Analyzer.analyze([session])
        let causes = expected.recorded.byCause
        #expect(causes.appWork.hitchCount > 0 && causes.waitingForCPU.hitchCount > 0 && causes.blocked.hitchCount > 0)
        #expect(causes.unknown.hitchCount == 0)
        #expect(expected.threadStates?.framesWithoutReadings == 0)
        #expect(expected.threadStates?.machine.stealMs ?? 0 > 0)
        for seed in UInt64(1)...4 {
            let order = seed % 2 == 0 ? AttributionOrderTests.interleaved(session, seed: seed, maxRun: 1 + Int(seed) * 7)
                                      : AttributionOrderTests.buffersShuffled(session, seed: seed)
            Self.expectSameFigures(try Analyzer.analyze([order]), expected)
        }
    }

    /// The same events in any interleaving of the threads' buffers give identical figures.
    @Test func orderIndependent() throws {
        var t = StateTrace()
        let sampler = t.b.list.thread("hitch-sched")
        for round in 0..<6 {
            // Ordinary frames between the planted ones: a hitch right after a hitch of one period
            // would be steady triple buffering (latency), not a hitch.
            t.mixedHitches()
            t.frame()
            t.frame(main: Window(running: 3 * Self.ms, stolen: 10 * Self.ms))
            t.b.list.append(t.vsync, sampler, .machineState(MachineStateReading(stealNs: Int64(round) * 7 * Self.ms, cpuPressureSomeUs: Int64(round) * 900,
                                                                                cgroupThrottledUs: Int64(round) * 50, onlineCPUs: 2)))
        }
        let list = TraceOrders.timeOrdered(t.b.list)
        let reference = try t.analyze()
        #expect(reference.recorded.byCause.appWork.hitchCount == 6)
        #expect(reference.recorded.byCause.waitingForCPU.hitchCount == 12)
        #expect(reference.recorded.byCause.blocked.hitchCount == 0)   // the render wait dominates its frame
        #expect(reference.recorded.byCause.machineStall.hitchCount == 6)
        let threads = [t.b.main, t.b.render, sampler]
        for capacity in [3, 17, 64] {
            for final in [threads, threads.reversed()] {
                let shuffled = CrossThreadOrderTests.buffered(list, capacity: { _ in capacity }, finalOrder: final)
                Self.expectSameFigures(try Analyzer.analyze([shuffled], options: AnalyzerOptions(refreshRatesHz: [60, 120])), reference)
            }
        }
    }

    /// The figures an order of the events must not change: hitches, frames, their causes and thread states.
    static func expectSameFigures(_ a: Analysis, _ reference: Analysis, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.hitches == reference.hitches, sourceLocation: sourceLocation)
        #expect(a.recorded == reference.recorded, sourceLocation: sourceLocation)
        #expect(a.frames == reference.frames, sourceLocation: sourceLocation)
        #expect(a.hitchAttributions == reference.hitchAttributions, sourceLocation: sourceLocation)
        #expect(a.threadStates == reference.threadStates, sourceLocation: sourceLocation)
    }

    /// The perf source: readings without the run delay, the split from the switches.
    static func perfTrace(_ build: (inout StateTrace) -> Void) -> StateTrace {
        var t = StateTrace()
        t.perfSwitches = true
        build(&t)
        return t
    }

    @Test func switchesSplitAWindowWhoseReadingsLackTheRunDelay() throws {
        let waiting = try Self.perfTrace { $0.planted(main: Window(running: 6 * Self.ms, runnable: 6 * Self.ms)) }.analyze()
        try Self.expectAll(waiting, "120", .waitingForCPU, count: 3)
        #expect(waiting.threadStates?.mainThreadInHitches.runnableMs == 18)
        let blocked = try Self.perfTrace { $0.planted(main: Window(running: 4 * Self.ms, runnable: Self.ms / 2, asleep: 8 * Self.ms)) }.analyze()
        try Self.expectAll(blocked, "120", .blocked, count: 3)
        #expect(blocked.hitchAttributions.first?.mainThreadStates?.blockedMs == 8)
        #expect(blocked.hitchAttributions.first?.mainThreadStates?.runnableMs == 0.5)
        // Stolen time: neither running nor switched out.
        let stolen = try Self.perfTrace { $0.planted(main: Window(running: 5 * Self.ms, runnable: Self.ms, stolen: 9 * Self.ms)) }.analyze()
        try Self.expectAll(stolen, "120", .machineStall, count: 3)
        #expect(stolen.hitchAttributions.first?.mainThreadStates?.machineMs == 9)
        let app = try Self.perfTrace { $0.planted(main: .work(20 * Self.ms)) }.analyze()
        try Self.expectAll(app, "120", .appWork, count: 3)
    }

    /// Windows whose switch records fall short of the readings' switch counts (the kernel dropped
    /// records: PERF_RECORD_LOST) are unknown, never read as running.
    @Test func aWindowMissingSwitchRecordsIsUnknown() throws {
        var t = Self.perfTrace { $0.planted(main: Window(running: 6 * Self.ms, runnable: 6 * Self.ms), times: 1) }
        let preempted = t.b.list.events.indices.filter {
            if case .schedSwitch(let s) = t.b.list.events[$0].payload { return s.preempted } else { return false }
        }
        t.b.list.events.remove(at: try #require(preempted.first))
        let a = try t.analyze()
        try Self.expectAll(a, "120", .unknown, count: 1)
        #expect(a.hitchAttributions.first?.mainThreadStates?.unknownMs == 6)
    }

    /// Switches reach the file after the frames they split (the writer drains them a flush interval
    /// late), in any interleaving: the analysis is the same.
    @Test func switchSplitIsOrderIndependent() throws {
        var t = Self.perfTrace { t in
            for _ in 0..<4 {
                t.mixedHitches()
            }
        }
        let list = TraceOrders.timeOrdered(t.b.list)
        let reference = try t.analyze()
        #expect(reference.recorded.byCause.appWork.hitchCount == 4)
        #expect(reference.recorded.byCause.waitingForCPU.hitchCount == 8)
        #expect(reference.recorded.byCause.unknown.hitchCount == 0)
        func isSwitch(_ e: TraceEvent) -> Bool { if case .schedSwitch = e.payload { return true } else { return false } }
        // Every switch after every other event (drained at the end), and in reverse file order of threads.
        var late = list
        late.events = list.events.filter { !isSwitch($0) } + list.events.filter(isSwitch)
        let threads = [t.b.main, t.b.render]
        for candidate in [late, CrossThreadOrderTests.buffered(list, capacity: { _ in 5 }, finalOrder: threads.reversed())] {
            Self.expectSameFigures(try Analyzer.analyze([candidate], options: AnalyzerOptions(refreshRatesHz: [60, 120])), reference)
        }
    }
}
