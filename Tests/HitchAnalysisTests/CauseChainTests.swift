import HitchAlgorithms
import HitchReader
import HitchTestSupport
import HitchTrace
import Testing
@testable import HitchAnalysis

/// Hitch causes over the whole timeline (docs/METRICS.md "Hitch causes"): random timelines of an
/// app with a main thread and a render thread, each frame's time planted as work, a wait for a CPU,
/// a sleep, stolen time or a late wake-up, with the queues a real app has (a frame renders when the
/// render thread is free, and is shown at most one frame per vsync). Every hitch must carry the
/// cause that was planted in it or, when it is late only because it queued behind a planted frame,
/// that frame's cause and id.
@Suite struct CauseChainTests {
    static let ms: Int64 = 1_000_000
    static let period: Int64 = 8_333_333

    /// What a planted frame does beyond ordinary work.
    enum Plant: CaseIterable {
        case mainWork, renderWork, mainRunnable, renderAsleep, mainStolen, lateWake
        var cause: HitchCause {
            switch self {
            case .mainWork, .renderWork: .appWork
            case .mainRunnable: .waitingForCPU
            case .renderAsleep: .blocked
            case .mainStolen, .lateWake: .machineStall
            }
        }
        /// On-CPU work the plant adds, on the main or render thread.
        var isWork: Bool { self == .mainWork || self == .renderWork }
    }

    typealias Window = ThreadStateTests.Window
    typealias Counters = ThreadStateTests.Counters

    /// One timeline: the trace and, per frame id, the plant it carries (planted frames only).
    struct Timeline {
        var b = TraceBuilder()
        var main = Counters(), render = Counters()
        var planted: [UInt64: (plant: Plant, amountNs: Int64)] = [:]
        var order: [UInt64] = []

        /// Frames in a loop like a display-link app's: the main thread begins each frame at the first
        /// vsync after it is free and the previous frame's render has begun (one frame in flight:
        /// the swap chain's back-pressure; a late wake-up begins it later), the render thread renders
        /// each committed frame at the first vsync after the commit once it is free, and a frame is
        /// shown at the first vsync after its render, one frame per vsync.
        init(seed: UInt64, episodes: Int) {
            var random = SeededGenerator(seed: seed)
            func next(in range: ClosedRange<Int64>) -> Int64 {
                range.lowerBound + Int64(random.next() % UInt64(range.upperBound - range.lowerBound + 1))
            }
            let mainThread = b.main, renderThread = b.render
            var vsync: Int64 = 10 * CauseChainTests.ms
            var renderFree: Int64 = 0, lastShown: Int64 = 0
            var id: UInt64 = 0
            let p = CauseChainTests.period
            for episode in 0..<(episodes * 8) {
                let plant: Plant? = episode % 8 == 7 ? Plant.allCases[Int(random.next() % UInt64(Plant.allCases.count))] : nil
                let amount = next(in: (3 * p / 2)...(4 * p))
                var mainWindow = Window(running: next(in: (CauseChainTests.ms / 2)...(2 * CauseChainTests.ms)))
                var renderWindow = Window(running: next(in: (CauseChainTests.ms / 2)...(2 * CauseChainTests.ms)))
                var lateWake: Int64 = 0
                switch plant {
                case .mainWork?: mainWindow.running += amount
                case .renderWork?: renderWindow.running += amount
                case .mainRunnable?: mainWindow.runnable += amount
                case .renderAsleep?: renderWindow.asleep += amount
                case .mainStolen?: mainWindow.stolen += amount
                case .lateWake?: lateWake = amount
                case nil: break
                }
                if let plant { planted[id] = (plant, amount) }
                order.append(id)
                // The main thread sleeps from its last commit to the vsync (plus a late wake-up).
                let commit = b.appendMainThreadFrame(id, on: mainThread, counters: &main, vsyncNs: vsync, beganNs: vsync + lateWake,
                                                     periodNs: p, window: mainWindow)
                let renderBegan = max(vsyncAtOrAfter(commit, anchor: vsync, period: p), renderFree)
                if renderBegan > renderFree { render.spend(Window(asleep: 1)) }   // idle until then: asleep
                let renderEnd = b.appendRender(id, on: renderThread, counters: &render, beganNs: renderBegan, window: renderWindow)
                let shown = max(vsyncAtOrAfter(renderEnd, anchor: vsync, period: p), vsyncAtOrAfter(renderBegan, anchor: vsync, period: p) + p, lastShown + p)
                b.list.append(shown, renderThread, .framePresented(frameID: id))
                renderFree = renderEnd
                lastShown = shown
                id += 1
                vsync = vsyncAtOrAfter(max(commit + 1, renderBegan), anchor: vsync, period: p)
            }
        }

        func analyze() throws -> Analysis {
            try Analyzer.analyze([TraceOrders.timeOrdered(b.list)], options: AnalyzerOptions(refreshRatesHz: [120]))
        }
    }

    @Test(arguments: 1...12) func everyHitchCarriesThePlantedCauseOrItsRoots(seed: Int) throws {
        let timeline = Timeline(seed: UInt64(seed), episodes: 12)
        let a = try timeline.analyze()
        let hitches = a.frames.filter { $0.hitchMs > 0 }
        #expect(!hitches.isEmpty)
        var plantedHitched = 0
        for frame in hitches {
            // The planted frame at or before this one, in this episode (queues drain within it).
            guard let root = timeline.order.last(where: { $0 <= frame.frameID && timeline.planted[$0] != nil }),
                  frame.frameID - root < 7, let plant = timeline.planted[root] else {
                Issue.record("frame \(frame.frameID) hitched \(frame.hitchMs) ms outside any planted episode (\(frame.cause.map { "\($0)" } ?? "-"))")
                continue
            }
            let detail = "seed \(seed): frame \(frame.frameID) hitch \(frame.hitchMs) ms, planted \(plant.plant) \(Double(plant.amountNs) / 1e6) ms in frame \(root): judged \(frame.cause.map { "\($0)" } ?? "-") behind \(frame.queuedBehind.map { "\($0)" } ?? "-")"
            #expect(frame.cause == plant.plant.cause, "\(detail)")
            if frame.frameID == root {
                plantedHitched += 1
                #expect(frame.queuedBehind == nil, "\(detail)")
            } else {
                #expect(frame.queuedBehind == root, "\(detail)")
            }
            // The invariant: an app-work hitch has enough on-CPU time in its own frame or its root's
            // to miss the deadline by itself (here, more than a period planted as work).
            if frame.cause == .appWork { #expect(plant.plant.isWork && plant.amountNs > Self.period, "\(detail)") }
        }
        #expect(plantedHitched > 0)
        // A plant on the render thread holds it past the next frames' vsyncs: they queue behind it.
        if timeline.planted.values.contains(where: { $0.plant == .renderWork || $0.plant == .renderAsleep }) {
            #expect(hitches.contains { $0.queuedBehind != nil })
        }
        let figures = a.recorded
        let sum = HitchCause.allCases.map { figures.byCause[$0].totalHitchMs }.reduce(0, +)
        #expect(abs(sum - figures.totalHitchMs) < 1e-6)
    }

    /// A long render and the frames queued behind it: the render's frame is app work, the frames
    /// behind it are judged by it and name it, and the report groups them under it.
    /// A loop that renders on its main thread right after each commit (a frame marker): a frame
    /// that waited for a CPU until its commit landed just before a vsync renders across that vsync.
    /// The frames that told how the app renders (their renders began before the vsync after the
    /// commit) say it renders at once, so the counterfactual frame does not wait for a vsync it never
    /// waited for: the hitch is the wait's, not the app's work.
    @Test(arguments: [2_000 as Int64, 16_000, 1_000_000]) func aRenderAtOnceThatCrossesAVsyncIsNotAppWork(commitBeforeVsyncNs: Int64) throws {
        var b = TraceBuilder()
        var main = ThreadStateTests.Counters()
        let p = Self.period, mainThread = b.main
        var vsync: Int64 = 10 * Self.ms
        let waitID: UInt64 = 6
        for id: UInt64 in 0..<10 {
            // Ordinary frames: 1 ms of work. The planted one: 1 ms of work and a wait for a CPU that
            // ends `commitBeforeVsyncNs` before the third vsync after its own.
            let window = id == waitID ? ThreadStateTests.Window(running: Self.ms, runnable: 3 * p - commitBeforeVsyncNs - Self.ms)
                                      : ThreadStateTests.Window(running: Self.ms)
            let commit = b.appendMainThreadFrame(id, on: mainThread, counters: &main, vsyncNs: vsync, beganNs: vsync, periodNs: p, window: window)
            let renderEnd = b.appendRender(id, on: mainThread, counters: &main, beganNs: commit + 10_000, window: ThreadStateTests.Window(running: 20_000))
            let shown = vsyncAtOrAfter(commit, anchor: vsync, period: p) + p
            b.list.append(shown, mainThread, .framePresented(frameID: id))
            vsync = vsyncAtOrAfter(renderEnd + 1, anchor: vsync, period: p)
        }
        let a = try Analyzer.analyze([TraceOrders.timeOrdered(b.list)], options: AnalyzerOptions(refreshRatesHz: [120]))
        let waited = try #require(a.frames.first { $0.frameID == waitID })
        #expect(waited.hitchMs > 0)
        #expect(waited.cause == .waitingForCPU, "\(waited)")
        #expect(a.frames.filter { $0.frameID != waitID }.allSatisfy { $0.hitchMs == 0 }, "\(a.frames.map { ($0.frameID, $0.hitchMs) })")
    }

    @Test func framesQueuedBehindALongRenderAreJudgedByIt() throws {
        var t = ThreadStateTests.StateTrace()
        for _ in 0..<10 { t.frame() }
        let root = t.frameID
        // 30 ms of rendering on the CPU; the next frames commit in time but the render thread is busy.
        let mainThread = t.b.main, renderThread = t.b.render
        let p = Self.period
        var renderFree: Int64 = 0, lastShown: Int64 = 0
        for i in 0..<6 {
            let id = t.frameID
            let vsync = t.vsync
            t.b.list.append(vsync, mainThread, t.main.reading(id, .frameBegan))
            t.b.list.append(vsync, mainThread, .frameBegan(FrameBegan(frameID: id, vsyncNs: vsync, targetNs: vsync + p, periodNs: p)))
            let commit = vsync + Self.ms
            t.main.spend(.work(Self.ms))
            t.b.list.append(commit, mainThread, .frameCommitted(frameID: id))
            t.b.list.append(commit, mainThread, t.main.reading(id, .committed))
            let renderBegan = max(vsync + p, renderFree)
            t.b.list.append(renderBegan, renderThread, t.render.reading(id, .renderBegan))
            let work = i == 0 ? 30 * Self.ms : Self.ms
            let renderEnd = renderBegan + work
            t.render.spend(.work(work))
            t.b.list.append(renderEnd, renderThread, .frameRenderEnded(frameID: id))
            t.b.list.append(renderEnd, renderThread, t.render.reading(id, .renderEnded))
            let shown = max(vsyncAtOrAfter(renderEnd, anchor: vsync, period: p), lastShown + p)
            t.b.list.append(shown, renderThread, .framePresented(frameID: id))
            renderFree = renderEnd; lastShown = shown
            t.frameID += 1
            t.vsync += p
        }
        for _ in 0..<10 { t.frame() }
        let a = try t.analyze(rates: [120])
        let hitches = a.frames.filter { $0.hitchMs > 0 }
        let rootFrame = try #require(hitches.first { $0.frameID == root })
        #expect(rootFrame.cause == .appWork && rootFrame.queuedBehind == nil)
        let queued = hitches.filter { $0.frameID != root }
        #expect(!queued.isEmpty, "\(hitches.map { ($0.frameID, $0.hitchMs, $0.cause as Any, $0.queuedBehind as Any) })")
        #expect(queued.allSatisfy { $0.cause == .appWork && $0.queuedBehind == root },
                "\(hitches.map { ($0.frameID, $0.hitchMs, $0.cause as Any, $0.queuedBehind as Any) })")
        #expect(a.hitchAttributions.filter { $0.queuedBehind == root }.count == queued.count)
        // Only the root's window weights offenders: the queued frames' work is not what made them late.
        #expect(a.offenders.allSatisfy { $0.hitchingFrames <= 1 })
    }

    /// A frame whose main thread waited for a CPU that one of the app's own threads held: behind
    /// the app's threads, named, and counted in the app's ratio; the same wait while that thread ran
    /// on the other CPU is behind other processes.
    /// Ten frames, one whose main thread runs 2 ms, is preempted on CPU 0 for 12 ms while the app's
    /// thread "feed.thumbnails" runs on `workerCPU`, then runs 1 ms more, and ten frames after it:
    /// the trace (every recording thread's switches), the worker and the planted frame's id.
    static func waitWhileWorkerRuns(workerCPU: UInt16) -> (trace: ThreadStateTests.StateTrace, worker: ThreadID, planted: UInt64) {
        var t = ThreadStateTests.StateTrace()
        t.b.metadata(MetadataKey.schedSource.name, "perf-context-switch")
        t.b.metadata(MetadataKey.schedSwitchThreads.name, MetadataKey.everyRecordingThread)
        let worker = t.b.list.thread("feed.thumbnails")
        for _ in 0..<10 { t.frame() }
        let planted = t.frameID
        let out = t.vsync + 2 * Self.ms, back = out + 12 * Self.ms
        t.b.list.append(out, t.b.main, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: true, cpu: 0)))
        t.b.list.append(back, t.b.main, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: 0)))
        t.b.list.append(out, worker, .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: workerCPU)))
        t.b.list.append(back, worker, .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: false, cpu: workerCPU)))
        t.frame(main: Window(running: 3 * Self.ms, runnable: 12 * Self.ms))
        for _ in 0..<10 { t.frame() }
        return (t, worker, planted)
    }

    @Test(arguments: [0, 1]) func aWaitBehindTheAppsOwnThreadNamesIt(workerCPU: Int) throws {
        let (t, _, planted) = Self.waitWhileWorkerRuns(workerCPU: UInt16(workerCPU))
        let a = try t.analyze(rates: [120])
        let frame = try #require(a.frames.first { $0.frameID == planted })
        #expect(frame.hitchMs > 0)
        let attribution = try #require(a.hitchAttributions.first { $0.frameID == planted })
        #expect(a.threadStates?.appThreadSplit == true)
        if workerCPU == 0 {
            #expect(frame.cause == .waitingForAppThreads)
            #expect(attribution.cpuTakenBy.map(\.name) == ["feed.thumbnails"])
            #expect(abs((attribution.cpuTakenBy.first?.ms ?? 0) - 12) < 1e-6)
            #expect(abs((frame.mainThreadStates?.runnableBehindAppThreadsMs ?? 0) - 12) < 1e-6)
            #expect(a.recorded.appHitchTimeRatioMsPerS == a.recorded.hitchTimeRatioMsPerS)
            #expect(a.threadStates?.cpuTakenByAppThreadsInHitches.first?.name == "feed.thumbnails")
            // The thread that took the CPU is the hitch's offender, by its time on the CPU in the wait
            // (12 of the 12 ms waited: the whole hitch), and the frame's own stages are not.
            let thread = try #require(a.offenders.first { $0.kind == .thread })
            #expect(thread.name == "feed.thumbnails" && thread.hitchingFrames == 1)
            #expect(abs(thread.onCPUMs - 12) < 1e-6 && abs(thread.weightedHitchMs - frame.hitchMs) < 1e-6)
            #expect(a.offenders.allSatisfy { $0.kind == .thread })
        } else {
            #expect(frame.cause == .waitingForCPU)
            #expect(attribution.cpuTakenBy.isEmpty)
            #expect(a.recorded.appHitchTimeRatioMsPerS == 0)
            #expect(a.offenders.isEmpty)
        }
    }

    /// A thread whose first records (its context switches) come before the record that names it, as
    /// when its switch ring is flushed ahead of its own events: the hitch names it by the name the
    /// trace gives it by the end, not by its thread id.
    @Test func aThreadNamedAfterItsFirstSwitchIsNamedInTheHitch() throws {
        let (t, worker, planted) = Self.waitWhileWorkerRuns(workerCPU: 0)
        let list = TraceOrders.timeOrdered(t.b.list)
        var input = NamedLate(list: list, thread: worker, unnamedUntil: list.events.count - 1)
        var analyzer = Analyzer(options: AnalyzerOptions(refreshRatesHz: [120]))
        try analyzer.add(&input, path: "named late")
        let a = analyzer.finish()
        let attribution = try #require(a.hitchAttributions.first { $0.frameID == planted })
        #expect(attribution.cpuTakenBy.map(\.name) == ["feed.thumbnails"])
        #expect(a.offenders.first { $0.kind == .thread }?.name == "feed.thumbnails")
    }

    /// An input whose one thread is unnamed (`thread <id>`, as the FXT reader says before a thread's
    /// name record) until `unnamedUntil` events have been read.
    struct NamedLate: TraceInput {
        var list: TraceEventList
        let thread: ThreadID
        let unnamedUntil: Int
        var read = 0
        mutating func nextEvent() throws -> TraceEvent? {
            guard let next = try list.nextEvent() else { return nil }
            read += 1
            return next
        }
        var progress: Double? { nil }
        func string(_ id: StringID) -> String { list.string(id) }
        func threadName(_ id: ThreadID) -> String {
            id == thread && read < unnamedUntil ? "thread \(id.rawValue)" : list.threadName(id)
        }
    }
}

extension TraceBuilder {
    /// The main thread's part of frame `id`: asleep until `beganNs` (a voluntary switch), then
    /// `window` to its commit, with the thread's readings at both ends. Returns the commit's time.
    mutating func appendMainThreadFrame(_ id: UInt64, on thread: ThreadID, counters: inout ThreadStateTests.Counters,
                                        vsyncNs: Int64, beganNs: Int64, periodNs: Int64, window: ThreadStateTests.Window) -> Int64 {
        counters.spend(ThreadStateTests.Window(asleep: 1))
        list.append(beganNs, thread, counters.reading(id, .frameBegan))
        list.append(beganNs, thread, .frameBegan(FrameBegan(frameID: id, vsyncNs: vsyncNs, targetNs: vsyncNs + periodNs, periodNs: periodNs)))
        let commitNs = beganNs + window.total
        counters.spend(window)
        list.append(commitNs, thread, .frameCommitted(frameID: id))
        list.append(commitNs, thread, counters.reading(id, .committed))
        return commitNs
    }

    /// The render of frame `id` on `thread`: `window` from `beganNs`, with the thread's readings at
    /// both ends. Returns its end.
    mutating func appendRender(_ id: UInt64, on thread: ThreadID, counters: inout ThreadStateTests.Counters,
                               beganNs: Int64, window: ThreadStateTests.Window) -> Int64 {
        list.append(beganNs, thread, counters.reading(id, .renderBegan))
        let endNs = beganNs + window.total
        counters.spend(window)
        list.append(endNs, thread, .frameRenderEnded(frameID: id))
        list.append(endNs, thread, counters.reading(id, .renderEnded))
        return endNs
    }
}
