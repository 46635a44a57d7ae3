import HitchReader
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
    enum Plant { case lock, longRender, appThreadHog }

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
        var main = ThreadStateTests.Counters(), render = ThreadStateTests.Counters()
        let mainThread: ThreadID, renderThread: ThreadID, hogThread: ThreadID
        /// When each slot is given back (.max: taken, its render not done).
        var slots: [Int64]
        var mainFree: Int64 = 10 * CauseChainPipelineTests.p
        var lastPresent: Int64 = .min
        /// When the render thread went to sleep after its last render (.min: before the first).
        var renderIdleFrom: Int64 = .min
        /// The previous frame's render, written once the next frame's main thread is known.
        var pending: (id: UInt64, start: Int64, workNs: Int64, slot: Int)? = nil
        static let work: Int64 = 2 * CauseChainPipelineTests.ms

        init(_ shape: Shape) {
            self.shape = shape
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
            b.list.append(out, thread, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: preempted, cpu: 0)))
            b.list.append(back, thread, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: 0)))
        }

        mutating func frame(_ id: UInt64, _ plant: Plant? = nil) {
            let p = CauseChainPipelineTests.p, ms = CauseChainPipelineTests.ms
            let vsync = grid(atOrAfter: mainFree + 1)
            // On a shared CPU, the previous frame's render wakes at this vsync too; otherwise it is
            // written now (its slot may be the one this frame waits for).
            let contended = shape == .sharedCPU && pending?.start == vsync
            if !contended, let r = pending { finishRender(r, runsAt: r.start, preemptedAt: nil); pending = nil }
            let hog = plant == .appThreadHog ? 60 * ms : 0
            let renderFirst = contended ? min(Self.work, pending!.workNs) : 0
            // Woken at the vsync: the main thread begins at once with the hog (which it starts), else
            // after the render's first turn.
            let began = hog > 0 ? vsync : vsync + renderFirst
            switched(mainThread, out: mainFree, in: began, preempted: false)
            main.spend(.init(asleep: vsync - mainFree))
            main.spend(.init(runnable: began - vsync))
            b.list.append(began, mainThread, main.reading(id, .frameBegan))
            b.list.append(began, mainThread, .frameBegan(FrameBegan(frameID: id, vsyncNs: vsync, targetNs: vsync + p, periodNs: p)))
            var t = began
            var renderRuns = contended ? vsync : Int64.max   // when the render gets the CPU
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
                switched(mainThread, out: t, in: slots[slot], preempted: false)
                main.spend(.init(asleep: slots[slot] - t))
                t = slots[slot]
            }
            let mainWork = t
            main.spend(.work(Self.work))
            t += Self.work
            if plant == .lock {
                switched(mainThread, out: t, in: t + 40 * ms, preempted: false)
                main.spend(.init(asleep: 40 * ms))
                t += 40 * ms
            }
            b.list.append(t, mainThread, .frameCommitted(frameID: id))
            b.list.append(t, mainThread, main.reading(id, .committed))
            mainFree = t
            if let r = pending {
                finishRender(r, runsAt: contended ? renderRuns : r.start, preemptedAt: contended && r.workNs > renderFirst ? mainWork : nil)
            }
            slots[slot] = .max
            pending = (id, grid(atOrAfter: max(t, lastPresent)), plant == .longRender ? 45 * ms : Self.work, slot)
        }

        /// Writes a render woken at its start, on the CPU from `runsAt`, preempted for the main
        /// thread's 2 ms from `preemptedAt`.
        mutating func finishRender(_ r: (id: UInt64, start: Int64, workNs: Int64, slot: Int), runsAt: Int64, preemptedAt: Int64?) {
            let p = CauseChainPipelineTests.p
            // Asleep since its last render (until its present, then until this render's vsync),
            // then woken and waiting for the CPU until `runsAt`.
            if renderIdleFrom != .min { switched(renderThread, out: renderIdleFrom, in: runsAt, preempted: false) }
            render.spend(.init(asleep: 1))
            render.spend(.init(runnable: runsAt - r.start))
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
            slots[r.slot] = end
            renderIdleFrom = end
            let shown = max(grid(atOrAfter: end), r.start + p)
            b.list.append(shown, renderThread, .framePresented(frameID: r.id))
            lastPresent = shown
        }

        mutating func finish() {
            if let r = pending { finishRender(r, runsAt: r.start, preemptedAt: nil) }
            pending = nil
        }

        func analyze() throws -> Analysis {
            var list = b.list
            list.events.sort { $0.timestampNs < $1.timestampNs }
            return try Analyzer.analyze([list], options: AnalyzerOptions(refreshRatesHz: [60]))
        }
    }

    static func run(_ shape: Shape, plants: [UInt64: Plant]) throws -> [UInt64: FrameSample] {
        var pipeline = Pipeline(shape)
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
    @Test(arguments: [Shape.swapChainOfOne, .swapChainOfTwo, .sharedCPU]) func ordinaryFramesAreOnTime(shape: Shape) throws {
        let frames = try Self.run(shape, plants: [:])
        #expect(frames.values.allSatisfy { $0.hitchMs == 0 }, "\(Self.describe(frames, 0...59))")
    }

    /// A swap chain of one: a frame asleep on a lock after its ordinary wait for the previous render
    /// is blocked, not queued behind the previous frame, which was on time.
    @Test func aLockInASwapChainOfOneIsBlocked() throws {
        let frames = try Self.run(.swapChainOfOne, plants: [10: .lock])
        let frame = try #require(frames[10])
        #expect(frame.hitchMs > 30 && frame.cause == .blocked && frame.queuedBehind == nil, "\(Self.describe(frames, 9...12))")
        #expect(frame.heldByEarlierFrames == nil)
        #expect(frames.values.filter { $0.hitchMs > 0 }.map(\.frameID) == [10], "\(Self.describe(frames, 0...59))")
    }

    /// A long render: its frame is app work, and each frame its lateness made miss keeps app work
    /// and names it; the frames after are on time or, with two frames in flight, a period late in
    /// steady triple buffering (latency, not hitches).
    @Test(arguments: [(Shape.swapChainOfOne, [21] as [UInt64]), (.swapChainOfTwo, [21, 22, 23]), (.sharedCPU, [21, 22, 23])])
    func framesALongRenderMadeMissNameIt(shape: Shape, queued: [UInt64]) throws {
        let frames = try Self.run(shape, plants: [20: .longRender])
        let detail = Self.describe(frames, 19...26)
        let root = try #require(frames[20])
        #expect(root.hitchMs > 30 && root.cause == .appWork && root.queuedBehind == nil, "\(detail)")
        let hitches = frames.values.filter { $0.hitchMs > 0 }.map(\.frameID).sorted()
        #expect(hitches == [20] + queued, "\(detail)")
        for id in queued {
            #expect(frames[id]?.cause == .appWork && frames[id]?.queuedBehind == 20, "\(detail)")
        }
    }

    /// The app's own thread at a higher priority on the shared CPU: the frame whose main thread it
    /// held is waiting for the app's threads, and the thread is named with its time on that CPU.
    @Test func theAppsOwnHogOnTheSharedCPUIsNamed() throws {
        var pipeline = Pipeline(.sharedCPU)
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
}
