import HitchReader
import HitchTestSupport
import HitchTrace
import Testing
@testable import HitchAnalysis

/// The worked examples of docs/METRICS.md "Worked example: three pipelines at 60 Hz": a swap chain
/// of one, a swap chain of two and a render thread sharing the main thread's CPU, simulated with
/// exact thread states and context switches. In each, every frame waits for an earlier one, so a
/// wait alone must not queue a frame behind another: only an earlier frame's lateness does.
@Suite struct CauseChainPipelineTests {
    static let ms: Int64 = 1_000_000
    static let p: Int64 = 16_666_667

    enum Shape { case swapChainOfOne, swapChainOfTwo, sharedCPU }
    enum Plant: Equatable {
        case lock, longRender, appThreadHog
        /// A render of this much work, instead of the long render's 45 ms.
        case renderWork(Int64)
        /// The main thread's work in the frame, instead of 2 ms.
        case mainWork(Int64)
        /// The render thread's wait for the present vsync wakes this late (outside every window).
        case latePresent(Int64)
        /// The app's hog takes the main thread's CPU for 60 ms from 3 ms before the vsync: the main
        /// thread, woken at the vsync, waits for the CPU before it can begin (its late start).
        case appThreadHogBeforeVsync
        /// After its work, the main thread reads from a disk: per read, asleep on the device for
        /// `asleepNs[i]`, then woken and waiting `wokenWaitNs[i]` for its CPU (no record marks that
        /// wait: it is run delay without a preempting switch-out).
        case diskReads(asleepNs: [Int64], wokenWaitNs: [Int64])
    }

    /// A 60 Hz display-link app: the display link fires at the first vsync after the main thread is
    /// free; the main thread takes a slot (one or two frames in flight, given back at render end),
    /// works 2 ms and commits; the render thread renders at the first vsync at or after the commit
    /// once it has shown the frame before, works 2 ms and shows the frame at the first vsync after
    /// the render ends, a period after it began at the least. On a shared CPU, the render and the
    /// next frame's main thread wake at the same vsync and take turns: the render's first 2 ms, the
    /// main thread's 2 ms, the rest of the render (after the app's hog, when one is planted).
    struct Pipeline {
        var b = TraceBuilder()
        let shape: Shape
        /// How late every wake-up comes (a timed wait for a vsync, a wait for a slot): 0 in the
        /// worked examples, tens of µs on a real machine.
        let wakeNs: Int64
        /// How long after each vsync the display link calls the main thread, by design.
        let displayLinkPhaseNs: Int64
        var main = ThreadStateTests.Counters(), render = ThreadStateTests.Counters()
        let mainThread: ThreadID, renderThread: ThreadID, hogThread: ThreadID
        /// When each slot is given back (.max: taken, its render not done).
        var slots: [Int64]
        var mainFree: Int64 = 10 * CauseChainPipelineTests.p
        var lastPresent: Int64 = .min
        /// When the render thread went to sleep after its last render (.min: before the first).
        var renderIdleFrom: Int64 = .min
        /// The previous frame's render, written once the next frame's main thread is known.
        var pending: (id: UInt64, start: Int64, workNs: Int64, slot: Int, presentLateNs: Int64)? = nil
        static let work: Int64 = 2 * CauseChainPipelineTests.ms
        /// A signal interrupts every sleep of the main thread longer than 100 ms at 100 ms and every 50 ms
        /// after (the hang watchdog's captures): the thread runs 20 µs and sleeps again on the same wait.
        var watchdogSignals = false
        /// Per frame: how long its render thread is preempted right after recording its render's end,
        /// before it gives back the slot (a busier thread took its CPU between the two).
        var releasePreemptedNs: [UInt64: Int64] = [:]

        init(_ shape: Shape, wakeNs: Int64 = 0, displayLinkPhaseNs: Int64 = 0) {
            self.shape = shape
            self.wakeNs = wakeNs
            self.displayLinkPhaseNs = displayLinkPhaseNs
            mainThread = b.main
            renderThread = b.render
            hogThread = b.list.thread("planted.hog")
            slots = Array(repeating: .min, count: shape == .swapChainOfOne ? 1 : 2)
            b.metadata(MetadataKey.schedSource.name, "perf-context-switch")
            b.metadata(MetadataKey.schedSwitchThreads.name, MetadataKey.everyRecordingThread)
        }

        func grid(atOrAfter t: Int64) -> Int64 { vsyncAtOrAfter(t, anchor: 0, period: CauseChainPipelineTests.p) }

        mutating func switched(_ thread: ThreadID, out: Int64, in back: Int64, preempted: Bool) {
            guard back > out else { return }
            let ms = CauseChainPipelineTests.ms
            if watchdogSignals, thread == mainThread, !preempted, back - out > 100 * ms {
                var from = out, signal = out + 100 * ms
                while signal + 20_000 < back {
                    b.list.append(from, thread, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: false, cpu: 0)))
                    b.list.append(signal, thread, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: 0)))
                    from = signal + 20_000
                    signal += 50 * ms
                }
                b.list.append(from, thread, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: false, cpu: 0)))
                b.list.append(back, thread, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: 0)))
                return
            }
            b.list.append(out, thread, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: preempted, cpu: 0)))
            b.list.append(back, thread, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: 0)))
        }

        mutating func frame(_ id: UInt64, _ plant: Plant? = nil) {
            let p = CauseChainPipelineTests.p, ms = CauseChainPipelineTests.ms
            let vsync = grid(atOrAfter: mainFree + 1)
            // On a shared CPU, the previous frame's render wakes at this vsync too; otherwise it is
            // written now (its slot may be the one this frame waits for).
            let contended = shape == .sharedCPU && pending?.start == vsync
            if !contended, let r = pending { finishRender(r, runsAt: r.start + wakeNs, preemptedAt: nil); pending = nil }
            let hog = plant == .appThreadHog ? 60 * ms : 0
            let renderFirst = contended ? min(Self.work, pending!.workNs) : 0
            // Woken at the vsync: the main thread begins at once with the hog (which it starts), else
            // after the render's first turn.
            let woken = vsync + displayLinkPhaseNs + wakeNs
            var began = hog > 0 ? woken : woken + renderFirst
            if plant == .appThreadHogBeforeVsync {
                let hogStart = vsync - 3 * ms, hogEnd = hogStart + 60 * ms
                b.list.append(hogStart, hogThread, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: 0)))
                b.list.append(hogEnd, hogThread, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: false, cpu: 0)))
                b.stage("hog", on: hogThread, from: hogStart, to: hogEnd)
                began = hogEnd
            }
            switched(mainThread, out: mainFree, in: began, preempted: false)
            main.spend(.init(asleep: woken - mainFree))
            main.spend(.init(runnable: began - woken))
            b.list.append(began, mainThread, main.reading(id, .frameBegan))
            b.list.append(began, mainThread, .frameBegan(FrameBegan(frameID: id, vsyncNs: vsync, targetNs: vsync + p, periodNs: p)))
            var t = began
            var renderRuns = contended ? vsync + wakeNs : Int64.max   // when the render gets the CPU
            if hog > 0 {
                b.list.append(t, hogThread, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: 0)))
                b.list.append(t + hog, hogThread, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: false, cpu: 0)))
                b.stage("hog", on: hogThread, from: t, to: t + hog)
                if contended { renderRuns = t + hog }
                let back = t + hog + renderFirst
                switched(mainThread, out: t, in: back, preempted: true)
                main.spend(.init(runnable: back - t))
                t = back
            }
            // The slot that frees first: asleep until then.
            let slot = slots.indices.min { slots[$0] < slots[$1] }!
            if slots[slot] > t {
                switched(mainThread, out: t, in: slots[slot] + wakeNs, preempted: false)
                main.spend(.init(asleep: slots[slot] + wakeNs - t))
                t = slots[slot] + wakeNs
            }
            let mainWork = t
            var work = Self.work
            if case .mainWork(let ns)? = plant { work = ns }
            main.spend(.work(work))
            t += work
            if plant == .lock {
                switched(mainThread, out: t, in: t + 40 * ms, preempted: false)
                main.spend(.init(asleep: 40 * ms))
                t += 40 * ms
            }
            if case .diskReads(let asleep, let wokenWait)? = plant {
                for (read, wait) in zip(asleep, wokenWait) {
                    switched(mainThread, out: t, in: t + read + wait, preempted: false)
                    main.spend(.init(asleep: read))
                    main.wait += wait
                    t += read + wait
                }
            }
            b.list.append(t, mainThread, .frameCommitted(frameID: id))
            b.list.append(t, mainThread, main.reading(id, .committed))
            mainFree = t
            if let r = pending {
                finishRender(r, runsAt: contended ? renderRuns : r.start, preemptedAt: contended && r.workNs > renderFirst ? mainWork : nil)
            }
            slots[slot] = .max
            var presentLateNs: Int64 = 0
            if case .latePresent(let ns)? = plant { presentLateNs = ns }
            var renderWork = plant == .longRender ? 45 * ms : Self.work
            if case .renderWork(let ns)? = plant { renderWork = ns }
            pending = (id, grid(atOrAfter: max(t, lastPresent)), renderWork, slot, presentLateNs)
        }

        /// Writes a render woken at its start, on the CPU from `runsAt`, preempted for the main
        /// thread's 2 ms from `preemptedAt`.
        mutating func finishRender(_ r: (id: UInt64, start: Int64, workNs: Int64, slot: Int, presentLateNs: Int64), runsAt: Int64, preemptedAt: Int64?) {
            let p = CauseChainPipelineTests.p
            // Asleep since its last render (until its present, then until this render's vsync),
            // then woken and waiting for the CPU until `runsAt`.
            if renderIdleFrom != .min { switched(renderThread, out: renderIdleFrom, in: runsAt, preempted: false) }
            render.spend(.init(asleep: 1))
            render.spend(.init(runnable: max(0, runsAt - r.start - wakeNs)))
            b.list.append(runsAt, renderThread, render.reading(r.id, .renderBegan))
            var end = runsAt + r.workNs
            if let preemptedAt {
                render.spend(.work(preemptedAt - runsAt))
                switched(renderThread, out: preemptedAt, in: preemptedAt + Self.work, preempted: true)
                render.spend(.init(runnable: Self.work))
                render.spend(.work(r.workNs - (preemptedAt - runsAt)))
                end += Self.work
            } else {
                render.spend(.work(r.workNs))
            }
            b.list.append(end, renderThread, .frameRenderEnded(frameID: r.id))
            b.list.append(end, renderThread, render.reading(r.id, .renderEnded))
            var release = end
            if let preempted = releasePreemptedNs[r.id] {
                switched(renderThread, out: end + 10_000, in: end + 10_000 + preempted, preempted: true)
                render.spend(.init(runnable: preempted))
                release = end + 20_000 + preempted
            }
            slots[r.slot] = release
            renderIdleFrom = release
            // The clock read after the wait for the present vsync (snapped to the vsync it belongs to,
            // or the next one when more than a quarter period late).
            let presentRead = max(grid(atOrAfter: end), r.start + p) + wakeNs + r.presentLateNs
            b.list.append(presentRead, renderThread, .framePresented(frameID: r.id))
            lastPresent = presentOnVsyncGrid(presentRead, anchor: 0, period: p)
        }

        mutating func finish() {
            if let r = pending { finishRender(r, runsAt: r.start + wakeNs, preemptedAt: nil) }
            pending = nil
        }

        func analyze() throws -> Analysis {
            try Analyzer.analyze([TraceOrders.timeOrdered(b.list)], options: AnalyzerOptions(refreshRatesHz: [60]))
        }
    }

    /// Frames 0..<60 of `shape` with `plants`, analyzed, by frame id; `configure` sets the pipeline up first.
    static func run(_ shape: Shape, plants: [UInt64: Plant], wakeNs: Int64,
                    configure: (inout Pipeline) -> Void = { _ in }) throws -> [UInt64: FrameSample] {
        var pipeline = Pipeline(shape, wakeNs: wakeNs)
        configure(&pipeline)
        for id: UInt64 in 0..<60 { pipeline.frame(id, plants[id]) }
        pipeline.finish()
        let a = try pipeline.analyze()
        return Dictionary(uniqueKeysWithValues: a.frames.map { ($0.frameID, $0) })
    }

    static func describe(_ frames: [UInt64: FrameSample], _ range: ClosedRange<UInt64>) -> String {
        range.compactMap { id in frames[id].map { "\(id): hitch \($0.hitchMs) \($0.cause.map { "\($0)" } ?? "-") behind \($0.queuedBehind.map { "\($0)" } ?? "-")" } }
            .joined(separator: "; ")
    }

    /// Ordinary frames are on time in every shape, though each waits for an earlier one.
    /// Wake-ups exactly at their time (the worked examples) and 60 µs late (a real machine's).
    static let wakes: [Int64] = [0, 60_000]

    @Test(arguments: [Shape.swapChainOfOne, .swapChainOfTwo, .sharedCPU], wakes) func ordinaryFramesAreOnTime(shape: Shape, wakeNs: Int64) throws {
        let frames = try Self.run(shape, plants: [:], wakeNs: wakeNs)
        #expect(frames.values.allSatisfy { $0.hitchMs == 0 }, "\(Self.describe(frames, 0...59))")
    }

    /// A swap chain of one: a frame asleep on a lock after its ordinary wait for the previous render
    /// is blocked, not queued behind the previous frame, which was on time.
    @Test(arguments: wakes) func aLockInASwapChainOfOneIsBlocked(wakeNs: Int64) throws {
        let frames = try Self.run(.swapChainOfOne, plants: [10: .lock], wakeNs: wakeNs)
        let frame = try #require(frames[10])
        #expect(frame.hitchMs > 30 && frame.cause == .blocked && frame.queuedBehind == nil, "\(Self.describe(frames, 9...12))")
        #expect(frame.heldByEarlierFrames == nil)
        #expect(frames.values.filter { $0.hitchMs > 0 }.map(\.frameID) == [10], "\(Self.describe(frames, 0...59))")
    }

    /// A long render: its frame is app work, and each frame its lateness made miss keeps app work
    /// and names it; the frames after are on time or, with two frames in flight, a period late in
    /// steady triple buffering (latency, not hitches).
    @Test(arguments: [(Shape.swapChainOfOne, [21] as [UInt64]), (.swapChainOfTwo, [21, 22, 23]), (.sharedCPU, [21, 22, 23])], wakes)
    func framesALongRenderMadeMissNameIt(shape: (Shape, [UInt64]), wakeNs: Int64) throws {
        let (shape, queued) = shape
        let frames = try Self.run(shape, plants: [20: .longRender], wakeNs: wakeNs)
        let detail = Self.describe(frames, 19...26)
        let root = try #require(frames[20])
        #expect(root.hitchMs > 30 && root.cause == .appWork && root.queuedBehind == nil, "\(detail)")
        let hitches = frames.values.filter { $0.hitchMs > 0 }.map(\.frameID).sorted()
        #expect(hitches == [20] + queued, "\(detail)")
        for id in queued {
            #expect(frames[id]?.cause == .appWork && frames[id]?.queuedBehind == 20, "\(detail)")
        }
    }

    /// Reads from a disk in a frame behind a late render: the render's end (which gives back a slot)
    /// comes inside the second read's sleep, 1 ms before the thread runs again, well within its wait
    /// for a CPU after wake-ups (14 ms). But it comes 23 ms into that sleep, and the thread slept 20 ms
    /// in all in its frame: it had been woken (by its read) before the release came, so the release
    /// ended no wait of it. The frame slept more than it waited for a CPU: blocked, not queued behind
    /// the render, and none of its sleep held by it.
    @Test(arguments: wakes) func aReleaseAfterTheThreadWokeHoldsNothing(wakeNs: Int64) throws {
        let ms = Self.ms
        let frames = try Self.run(.swapChainOfTwo, plants: [20: .renderWork(35 * ms),
                                                           21: .diskReads(asleepNs: [10 * ms, 10 * ms], wokenWaitNs: [0, 14 * ms])], wakeNs: wakeNs)
        let detail = Self.describe(frames, 19...23)
        #expect(frames[20]?.cause == .appWork && frames[20]?.queuedBehind == nil, "\(detail)")
        let frame = try #require(frames[21])
        #expect(frame.hitchMs > 0 && frame.cause == .blocked && frame.queuedBehind == nil, "\(detail)")
        #expect((frame.heldByEarlierFrames?.blockedMs ?? 0) == 0, "\(String(describing: frame.heldByEarlierFrames))")
    }

    /// A render so long that the next frame's main thread sleeps over 100 ms for its slot, while the
    /// hang watchdog's signal interrupts that sleep every 50 ms from 100 ms on (the thread runs
    /// 20 µs and sleeps again on the same wait): still one wait, held by the long render, so the
    /// frame keeps app work and names it.
    @Test(arguments: wakes) func aWaitTheWatchdogInterruptsIsStillOneWait(wakeNs: Int64) throws {
        let frames = try Self.run(.swapChainOfOne, plants: [20: .renderWork(130 * Self.ms)], wakeNs: wakeNs) { $0.watchdogSignals = true }
        let detail = Self.describe(frames, 19...26)
        #expect(frames[20]?.cause == .appWork && frames[20]?.queuedBehind == nil, "\(detail)")
        #expect(frames[21].map { $0.hitchMs > 100 && $0.cause == .appWork && $0.queuedBehind == 20 } == true, "\(detail)")
    }

    /// A long render whose thread, right after recording the render's end, is preempted for 6 ms
    /// before it gives back the slot: the next frame's main thread, asleep for that slot, wakes 6 ms
    /// after the recorded end, far past a wake-up's slack. The release came when the render thread
    /// ran again, so the long render still held the whole wait: the frame keeps app work and names it.
    @Test(arguments: wakes) func aReleaserPreemptedAfterItsReleaseStillHeldTheWait(wakeNs: Int64) throws {
        let frames = try Self.run(.swapChainOfOne, plants: [20: .longRender], wakeNs: wakeNs) { $0.releasePreemptedNs[20] = 6 * Self.ms }
        let detail = Self.describe(frames, 19...24)
        #expect(frames[20]?.cause == .appWork && frames[20]?.queuedBehind == nil, "\(detail)")
        #expect(frames[21].map { $0.hitchMs > 0 && $0.cause == .appWork && $0.queuedBehind == 20 } == true, "\(detail)")
    }

    /// The app's own thread at a higher priority on the shared CPU: the frame whose main thread it
    /// held is waiting for the app's threads, and the thread is named with its time on that CPU.
    @Test(arguments: wakes) func theAppsOwnHogOnTheSharedCPUIsNamed(wakeNs: Int64) throws {
        var pipeline = Pipeline(.sharedCPU, wakeNs: wakeNs)
        for id: UInt64 in 0..<60 { pipeline.frame(id, id == 30 ? .appThreadHog : nil) }
        pipeline.finish()
        let a = try pipeline.analyze()
        let frame = try #require(a.frames.first { $0.frameID == 30 })
        #expect(frame.hitchMs > 30 && frame.cause == .waitingForAppThreads && frame.queuedBehind == nil,
                "\(a.frames.filter { $0.frameID >= 28 && $0.frameID <= 32 }.map { ($0.frameID, $0.hitchMs, $0.cause as Any, $0.queuedBehind as Any) })")
        let attribution = try #require(a.hitchAttributions.first { $0.frameID == 30 })
        let hog = try #require(attribution.cpuTakenBy.first { $0.name == "planted.hog" }, "\(attribution.cpuTakenBy)")
        #expect(abs(hog.ms - 60) < 1e-6, "the hog's time on the CPU, counted once though two frame threads waited for it: \(hog.ms)")
    }

    /// A display link that calls the main thread 1 ms after each vsync, by design: a frame whose
    /// 16 ms of work miss the deadline from there is app work, not a late wake-up (its late start
    /// counts from when the app's frames usually begin).
    @Test func aDisplayLinkPhaseIsTheAppsNotTheMachines() throws {
        var pipeline = Pipeline(.swapChainOfTwo, displayLinkPhaseNs: Self.ms)
        for id: UInt64 in 0..<60 { pipeline.frame(id, id == 30 ? .mainWork(16 * Self.ms) : nil) }
        pipeline.finish()
        let a = try pipeline.analyze()
        let frame = try #require(a.frames.first { $0.frameID == 30 })
        #expect(frame.hitchMs > 0 && frame.cause == .appWork && frame.queuedBehind == nil, "\(frame)")
        #expect(a.frames.filter { $0.hitchMs > 0 }.map(\.frameID) == [30])
    }

    /// A frame whose render ended in time but whose present came more than a quarter period after
    /// its vsync (the render thread's wait for it woke late, where no reading splits the time) is
    /// unknown, with `latePresentMs`: not a machine stall, which nothing measured shows.
    @Test func aLatePresentIsUnknown() throws {
        var pipeline = Pipeline(.swapChainOfOne)
        for id: UInt64 in 0..<60 { pipeline.frame(id, id == 30 ? .latePresent(6 * Self.ms) : nil) }
        pipeline.finish()
        let a = try pipeline.analyze()
        let frame = try #require(a.frames.first { $0.frameID == 30 })
        #expect(frame.hitchMs > 0 && frame.cause == .unknown && frame.queuedBehind == nil, "\(frame)")
        #expect(abs((frame.latePresentMs ?? 0) - Double(Self.p) / 1e6) < 1e-6, "\(frame)")
    }

    /// The app's own thread takes the main thread's CPU from just before the vsync: the main thread
    /// waits for it before it begins (in its late start), and the thread is named there too.
    @Test func theAppsOwnHogBeforeTheVsyncIsNamed() throws {
        var pipeline = Pipeline(.swapChainOfTwo)
        for id: UInt64 in 0..<60 { pipeline.frame(id, id == 30 ? .appThreadHogBeforeVsync : nil) }
        pipeline.finish()
        let a = try pipeline.analyze()
        let frame = try #require(a.frames.first { $0.frameID == 30 })
        #expect(frame.hitchMs > 30 && frame.cause == .waitingForAppThreads && frame.queuedBehind == nil, "\(frame)")
        let attribution = try #require(a.hitchAttributions.first { $0.frameID == 30 })
        let hog = try #require(attribution.cpuTakenBy.first { $0.name == "planted.hog" }, "\(attribution.cpuTakenBy)")
        #expect(abs(hog.ms - 57) < 1e-6, "\(hog.ms)")
        #expect(abs((frame.mainLateStartStates?.runnableBehindAppThreadsMs ?? 0) - 57) < 1e-6, "\(String(describing: frame.mainLateStartStates))")
    }
}
