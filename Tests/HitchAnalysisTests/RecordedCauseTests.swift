import Foundation
import HitchTrace
import Synchronization
import Testing
@testable import HitchAnalysis

/// Each hitch cause made to happen for real on this machine, recorded through the Trace API with
/// its thread-state readings, and the file analyzed: a busy loop in a frame is app work, the main
/// thread sharing one CPU with two busy threads is waiting for a CPU, a frame waiting on a mutex
/// another thread holds is blocked. Bounds are wide: three frames are planted and only those are
/// asserted (a shared machine may make others hitch too): at least one hitched, every one the machine
/// left undisturbed has the planted cause, and a disturbed one the planted cause or the disturbance's.
/// Each test records in a child process of its own (an exit test): the recorder is process-wide, and
/// frames other suites record while it runs would join its trace and its timeline of causes.
@Suite(.serialized) struct RecordedCauseTests {
    /// 120 Hz: a planted frame misses by two periods or more, so it is a hitch even right after an
    /// ordinary frame the loaded machine made one period late (steady triple buffering otherwise).
    static let periodNs: Int64 = 8_333_333
    static let ms: Int64 = 1_000_000
    /// A planted frame's own CPU work that hitches whatever else waited (`aBusyLoopInAFrameIsAppWork`).
    static let appWorkNs: Int64 = 30 * ms

    /// One kind of planted frame: what runs before it (outside its window), in it, and after it.
    struct Plant {
        let name: String
        var prepare: () -> Void = {}
        let work: () -> Void
        var finish: () -> Void = {}
    }

    /// Frames at 120 Hz on the calling thread, `planted` frames doing `work`, each after `ordinary`
    /// frames of ~1 ms of work (see `record(_:perf:plants:)`). Returns the analysis and the planted frames' ids.
    static func record(_ name: String, perf: Bool, planted: Int = 3, ordinary: Int = 4, prepare: @escaping () -> Void = {},
                       work: @escaping () -> Void) throws -> (Analysis, [UInt64]) {
        let (analysis, ids) = try record(name, perf: perf, plants: [Plant(name: name, prepare: prepare, work: work)], rounds: planted, ordinary: ordinary)
        return (analysis, ids[name] ?? [])
    }

    /// Frames at 120 Hz on the calling thread: for each plant, `rounds` times, `ordinary` frames of
    /// ~1 ms of work and then one planted frame; `ordinary` frames to end. Each frame begins at its
    /// vsync, renders at once on the same thread and is presented one period after the first vsync
    /// at or after its commit (a display with one frame in flight). Returns the analysis and each plant's frame ids.
    /// `perf`: the recorder's context-switch source where the kernel permits it (readings plus exact
    /// switches, which the analysis holds frames for), else the procfs reads alone.
    static func record(_ name: String, perf: Bool, plants: [Plant], rounds: Int, ordinary: Int = 4) throws -> (Analysis, [String: [UInt64]]) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-cause-\(name)-\(getpid()).fxt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try TraceRecorder.start(path: path, configuration: .init(waitForOtherRecordingSeconds: 300, contextSwitchEvents: perf))
        var planted: [String: [UInt64]] = [:]
        var id: UInt64 = 1
        var vsync = Trace.now().nanoseconds + periodNs
        func frame(_ work: () -> Void) {
            sleep(untilNs: vsync)
            Trace.frameBegan(frameID: id, vsync: TraceTimestamp(nanoseconds: vsync), target: TraceTimestamp(nanoseconds: vsync + periodNs), periodNs: periodNs)
            work()
            Trace.frameCommitted(frameID: id)
            // The render follows on this thread, with its own readings: a preemption between the
            // commit and the render's end is then time not running, not render work.
            Trace.frameRenderBegan(frameID: id)
            let commit = Trace.now().nanoseconds
            let shown = vsyncAtOrAfter(commit, anchor: vsync, period: periodNs) + periodNs
            Trace.frameRenderEnded(frameID: id)
            Trace.framePresented(frameID: id, at: TraceTimestamp(nanoseconds: shown))
            id += 1
            vsync = vsyncAtOrAfter(commit + 1, anchor: vsync, period: periodNs)
        }
        for plant in plants {
            for _ in 0..<rounds {
                for _ in 0..<ordinary { frame { spin(cpuNs: ms) } }
                plant.prepare()
                planted[plant.name, default: []].append(id)
                frame(plant.work)
                plant.finish()
            }
        }
        for _ in 0..<ordinary { frame { spin(cpuNs: ms) } }
        _ = try recorder.stop()
        return (try Analyzer.analyze(paths: [path], options: AnalyzerOptions(refreshRatesHz: [120])), planted)
    }

    /// The planted frames that hitched: at least one, and at least one the machine left undisturbed,
    /// judged by `cause`. A disturbed frame (`disturbance(of:planted:)`) may be judged by its plant
    /// or by what disturbed it, and by nothing else. Every hitch of the recording, planted or not,
    /// has the cause its own shown states give (`expectCausesFollowTheirStates`).
    static func expectPlanted(_ analysis: Analysis, _ planted: [UInt64], _ cause: HitchCause,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let frames = analysis.frames.filter { planted.contains($0.frameID) }
        let hitched = frames.filter { $0.hitchMs > 0 }
        let detail = frames.map { "frame \($0.frameID): hitch \($0.hitchMs) ms (\($0.kind)), frame time \($0.frameTimeMs) ms, main \($0.mainThreadMs) ms, \($0.cause.map { "\($0)" } ?? "-"), "
                                  + (countedStates(analysis, frame: $0.frameID).map { "counted: running \($0.runningMs) runnable \($0.runnableMs) blocked \($0.blockedMs) machine \($0.machineMs) unknown \($0.unknownMs)" } ?? "no readings") }
        #expect(!hitched.isEmpty, "no planted frame hitched: \(detail)", sourceLocation: sourceLocation)
        #expect(hitched.contains { disturbance(of: countedStates(analysis, frame: $0.frameID), planted: cause) == nil },
                "every planted frame that hitched was disturbed: \(detail)", sourceLocation: sourceLocation)
        for frame in hitched {
            let judgements: [HitchCause] = switch disturbance(of: countedStates(analysis, frame: frame.frameID), planted: cause) {
            case nil: [cause]
            case .waitingForCPU?: [cause, .waitingForCPU, .waitingForAppThreads]
            case let other?: [cause, other]
            }
            #expect(frame.cause.map(judgements.contains) == true, "frame \(frame.frameID) may be judged \(judgements): \(detail)", sourceLocation: sourceLocation)
        }
        #expect(analysis.threadStates != nil, sourceLocation: sourceLocation)
        expectCausesFollowTheirStates(analysis, sourceLocation: sourceLocation)
    }

    /// A hitching frame's time by state as its cause counts it, from what the output shows: the main
    /// thread's window, its late start and the render's split (docs/METRICS.md "Late starts"), less
    /// what earlier late frames held (`heldByEarlierFrames`), and a present later than its pipeline
    /// allowed as unknown (`latePresentMs`). A hitch beyond the 50 worst kept in detail has no render
    /// split in the output: main and late start.
    static func countedStates(_ analysis: Analysis, frame: UInt64) -> ThreadStateSplit? {
        let parts: [ThreadStateSplit?]
        let held: ThreadStateSplit?, latePresentMs: Double?
        if let a = analysis.hitchAttributions.first(where: { $0.frameID == frame }) {
            parts = [a.mainThreadStates, a.mainLateStartStates, a.renderThreadStates]
            held = a.heldByEarlierFrames; latePresentMs = a.latePresentMs
        } else if let f = analysis.frames.first(where: { $0.frameID == frame }) {
            parts = [f.mainThreadStates, f.mainLateStartStates]
            held = f.heldByEarlierFrames; latePresentMs = f.latePresentMs
        } else {
            return nil
        }
        guard let main = parts[0] else { return nil }
        var sum = parts.dropFirst().compactMap { $0 }.reduce(main) { sum, s in
            var sum = sum
            sum.runningMs += s.runningMs; sum.runnableMs += s.runnableMs; sum.blockedMs += s.blockedMs
            sum.machineMs += s.machineMs; sum.unknownMs += s.unknownMs
            return sum
        }
        if let held {
            sum.runnableMs = max(0, sum.runnableMs - held.runnableMs); sum.blockedMs = max(0, sum.blockedMs - held.blockedMs)
            sum.machineMs = max(0, sum.machineMs - held.machineMs); sum.unknownMs = max(0, sum.unknownMs - held.unknownMs)
        }
        sum.unknownMs += latePresentMs ?? 0
        return sum
    }

    /// Every hitch late for its own sake and not app work (not queued behind another frame) is
    /// judged by the largest part of its counted time not running (ties: machine, waiting,
    /// blocked, unknown), or is blocked by its own sleeps, the rule docs/METRICS.md gives: the
    /// judgement agrees with what it shows.
    static func expectCausesFollowTheirStates(_ analysis: Analysis, sourceLocation: SourceLocation = #_sourceLocation) {
        for a in analysis.hitchAttributions where a.queuedBehind == nil && a.cause != .appWork {
            guard let s = countedStates(analysis, frame: a.frameID) else { continue }
            let parts: [(cause: HitchCause, ms: Double)] = [(.machineStall, s.machineMs), (.waitingForCPU, s.runnableMs),
                                                            (.blocked, s.blockedMs), (.unknown, s.unknownMs)]
            let most = parts.map(\.ms).max() ?? 0
            // The figures are whole nanoseconds: parts within one of the largest are tied, and the tie order decides.
            let largest = parts.filter { most - $0.ms < 1e-6 }.map(\.cause)
            let judged = a.cause == .waitingForAppThreads ? .waitingForCPU : a.cause
            // Blocked need not be the largest part: a frame whose own work and sleeps miss with no
            // wait for a CPU is blocked however long it also waited. Its threads then ran and slept
            // for more than a period (less, and both fit before their vsyncs).
            let period = analysis.frames.first { $0.frameID == a.frameID }?.periodMs ?? 0
            let ownSleepsMiss = judged == .blocked && s.runningMs + s.blockedMs > period
            #expect(largest.contains(judged) || ownSleepsMiss,
                    "frame \(a.frameID) judged \(a.cause), its counted states say \(largest): \(s)", sourceLocation: sourceLocation)
        }
    }

    /// What disturbed a planted frame, as the recording shows it: in its counted states
    /// (`countedStates`) as long or longer in a state its plant does not cause (runnable behind
    /// another test's threads on its CPU, a wake-up delivered late, a spell the host stole) as in the
    /// state its plant causes, so the disturbance may name the frame's cause. Nil when undisturbed:
    /// the plant's state is the largest, and the cause must be the plant's. App work is judged by
    /// the frame's own CPU time whatever else waited, so it is never disturbed.
    static func disturbance(of states: ThreadStateSplit?, planted cause: HitchCause) -> HitchCause? {
        guard let s = states else { return nil }
        let parts: [(cause: HitchCause, ms: Double)] = [(.waitingForCPU, s.runnableMs), (.blocked, s.blockedMs),
                                                        (.machineStall, s.machineMs), (.unknown, s.unknownMs)]
        guard let plantedMs = parts.first(where: { $0.cause == cause })?.ms,
              let other = parts.filter({ $0.cause != cause }).max(by: { $0.ms < $1.ms }),
              other.ms >= plantedMs else { return nil }
        return other.cause
    }

    /// Records until, for every plant, some planted frame that hitched was left undisturbed
    /// (`disturbance(of:planted:)`), at most three times: during a noisy spell a recording can lose
    /// every planted frame to it, and the judgement of the plant is then untested, not wrong.
    /// Returns the last recording.
    static func recordUndisturbed<Planted>(_ causes: (Planted) -> [(frames: [UInt64], cause: HitchCause)],
                                           _ record: () throws -> (Analysis, Planted)) rethrows -> (Analysis, Planted) {
        var result = try record()
        for _ in 1..<3 {
            let (analysis, planted) = result
            let judgeable = causes(planted).allSatisfy { plant in
                analysis.frames.contains { plant.frames.contains($0.frameID) && $0.hitchMs > 0
                    && disturbance(of: countedStates(analysis, frame: $0.frameID), planted: plant.cause) == nil }
            }
            if judgeable { break }
            result = try record()
        }
        return result
    }

    /// The source the recording used: perf where asked and the kernel permits it, procfs otherwise.
    static func expectSource(_ analysis: Analysis, perf: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let source = analysis.threadStates?.source
        if perf { #expect(source == .perfContextSwitch || source == .procfs, sourceLocation: sourceLocation) }
        else { #expect(source == .procfs, sourceLocation: sourceLocation) }
    }

    @Test(arguments: [true, false]) func aBusyLoopInAFrameIsAppWork(perf: Bool) async {
        await #expect(processExitsWith: .success) { [perf] in try RecordedCauseTests.aBusyLoopInAFrameIsAppWorkRecorded(perf: perf) }
    }

    static func aBusyLoopInAFrameIsAppWorkRecorded(perf: Bool) throws {
        // 30 ms of the thread's own CPU time: shown two periods late or more, a hitch whatever else
        // waited, even right after a frame already a period late (triple buffering's allowance).
        let (a, planted) = try Self.record("app", perf: perf) { Self.spin(cpuNs: Self.appWorkNs) }
        Self.expectPlanted(a, planted, .appWork)
        Self.expectSource(a, perf: perf)
    }

    @Test(arguments: [true, false]) func theMainThreadSharingOneCPUWithTwoBusyThreadsWaitsForTheCPU(perf: Bool) async {
        await #expect(processExitsWith: .success) { [perf] in try RecordedCauseTests.theMainThreadSharingOneCPUWithTwoBusyThreadsWaitsForTheCPURecorded(perf: perf) }
    }

    static func theMainThreadSharingOneCPUWithTwoBusyThreadsWaitsForTheCPURecorded(perf: Bool) throws {
        let original = Self.affinity()
        let cpu = Self.firstCPU(in: original)
        let stop = StopFlag()
        let busy = (0..<2).map { _ in
            let thread = Thread { Self.pin(to: cpu); while !stop.isSet { } }
            thread.start()
            return thread
        }
        defer {
            stop.set()
            Self.setAffinity(original)
            while busy.contains(where: { !$0.isFinished }) { usleep(1000) }
        }
        Self.pin(to: cpu)
        // 4 ms of CPU work: fits the deadline alone, but shared three ways it takes ~12 ms or more.
        let (a, planted) = try Self.recordUndisturbed({ [($0, .waitingForCPU)] }) { try Self.record("waiting", perf: perf) { Self.spin(cpuNs: 4 * Self.ms) } }
        Self.expectPlanted(a, planted, .waitingForCPU)
        Self.expectSource(a, perf: perf)
        // The readings see the wait: ~8 ms on a quiet machine; a loaded one shares the CPU with more
        // threads, but a thread woken from its sleep before the frame then runs first for longer.
        let runnable = a.frames.filter { planted.contains($0.frameID) && $0.hitchMs > 0 }.compactMap { $0.mainThreadStates?.runnableMs }
        #expect(runnable.contains { $0 > 1 }, "\(runnable)")
    }

    @Test(arguments: [true, false]) func aFrameWaitingOnAMutexAnotherThreadHoldsIsBlocked(perf: Bool) async {
        await #expect(processExitsWith: .success) { [perf] in try RecordedCauseTests.aFrameWaitingOnAMutexAnotherThreadHoldsIsBlockedRecorded(perf: perf) }
    }

    static func aFrameWaitingOnAMutexAnotherThreadHoldsIsBlockedRecorded(perf: Bool) throws {
        let holder = SleepingLockHolder()
        let (a, planted) = try Self.recordUndisturbed({ [($0, .blocked)] }) { try Self.record("blocked", perf: perf, prepare: holder.takeLock, work: holder.waitForLock) }
        Self.expectPlanted(a, planted, .blocked)
        Self.expectSource(a, perf: perf)
        let blocked = a.frames.filter { planted.contains($0.frameID) }.compactMap { $0.mainThreadStates?.blockedMs }
        #expect(blocked.contains { $0 > 10 })
    }

    @Test(arguments: [true, false]) func aSleepInsideTheFrameIsBlocked(perf: Bool) async {
        await #expect(processExitsWith: .success) { [perf] in try RecordedCauseTests.aSleepInsideTheFrameIsBlockedRecorded(perf: perf) }
    }

    static func aSleepInsideTheFrameIsBlockedRecorded(perf: Bool) throws {
        // A 20 ms sleep the frame asked for (not a wait for the vsync): the thread is asleep, not waiting on the machine.
        let (a, planted) = try Self.recordUndisturbed({ [($0, .blocked)] }) { try Self.record("sleep", perf: perf) { usleep(20_000) } }
        Self.expectPlanted(a, planted, .blocked)
        Self.expectSource(a, perf: perf)
    }

    @Test func anotherProcessAtAHigherPrioritySharingTheCPUIsWaitingForACPU() async {
        await #expect(processExitsWith: .success) { try RecordedCauseTests.anotherProcessAtAHigherPrioritySharingTheCPUIsWaitingForACPURecorded() }
    }

    static func anotherProcessAtAHigherPrioritySharingTheCPUIsWaitingForACPURecorded() throws {
        // Two busy child processes on the frame thread's CPU, the frame thread niced below them.
        let (a, planted) = try Self.onNicedThreadOnOneCPU { _ in
            let children = (0..<2).map { _ in Self.spawnBusyProcess() }   // inherits the pinned affinity
            defer { for child in children { kill(child, SIGKILL); var status: Int32 = 0; waitpid(child, &status, 0) } }
            return try Self.recordUndisturbed({ [($0, .waitingForCPU)] }) { try Self.record("process", perf: true) { Self.spin(cpuNs: 4 * Self.ms) } }
        }
        Self.expectPlanted(a, planted, .waitingForCPU)
        let taken = a.hitchAttributions.filter { planted.contains($0.frameID) }.flatMap(\.cpuTakenBy)
        #expect(taken.isEmpty, "another process's time named as the app's: \(taken)")
    }

    @Test func oneOfTheAppsThreadsAtAHigherPrioritySharingTheCPUIsNamed() async {
        await #expect(processExitsWith: .success) { try RecordedCauseTests.oneOfTheAppsThreadsAtAHigherPrioritySharingTheCPUIsNamedRecorded() }
    }

    static func oneOfTheAppsThreadsAtAHigherPrioritySharingTheCPUIsNamedRecorded() throws {
        let (a, planted) = try Self.onNicedThreadOnOneCPU { cpu in
            let hogs = AppHogThreads(cpu: cpu)
            hogs.start()
            defer { hogs.stop() }
            return try Self.record("app-thread", perf: true) { Self.spin(cpuNs: 4 * Self.ms) }
        }
        try Self.expectHogNamed(a, planted)
    }

    /// The frames planted behind `AppHogThreads` that hitched name the hog with its time, and are the
    /// app's where it held the CPU for most of the wait (on a machine whose other processes also
    /// share that CPU, only there); the hog is then an offender by its time on the CPU. Without the
    /// split (the kernel refused perf) the trace says it is unavailable.
    static func expectHogNamed(_ a: Analysis, _ planted: [UInt64], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let named = a.hitchAttributions.filter { planted.contains($0.frameID) && $0.hitchMs > 0 }
        #expect(!named.isEmpty, "no frame planted behind the app's own thread hitched", sourceLocation: sourceLocation)
        guard a.threadStates?.source == .perfContextSwitch, a.threadStates?.appThreadSplit == true else {
            #expect(a.warnings.contains { $0.contains("schedSwitchThreads") }, sourceLocation: sourceLocation)
            return
        }
        let detail = named.map { "frame \($0.frameID): \($0.cause), runnable \($0.mainThreadStates?.runnableMs ?? 0) ms, behind the app's threads \($0.mainThreadStates?.runnableBehindAppThreadsMs ?? 0) ms, \($0.cpuTakenBy.map { "\($0.name) \($0.ms)" })" }
        for hitch in named {
            _ = try #require(hitch.mainThreadStates, sourceLocation: sourceLocation)
            // The waits for a CPU over the frame's windows: its late start, its frame, its render.
            let windows = [hitch.mainLateStartStates, hitch.mainThreadStates, hitch.renderThreadStates].compactMap { $0 }
            let runnable = windows.map(\.runnableMs).reduce(0, +), behind = windows.map(\.runnableBehindAppThreadsMs).reduce(0, +)
            #expect(hitch.cpuTakenBy.first?.name == AppHogThreads.name && (hitch.cpuTakenBy.first?.ms ?? 0) > 0.5, "\(detail)", sourceLocation: sourceLocation)
            if hitch.queuedBehind == nil {   // a frame queued behind another carries that frame's cause
                #expect(hitch.cause == (behind * 2 > runnable ? .waitingForAppThreads : .waitingForCPU), "\(detail)", sourceLocation: sourceLocation)
            }
        }
        if named.contains(where: { $0.cause == .waitingForAppThreads }) {
            let hog = a.offenders.first { $0.kind == .thread && $0.name == AppHogThreads.name }
            #expect(hog.map { $0.onCPUMs > 0.5 } == true, "\(a.offenders.map { "\($0.kind) \($0.name) \($0.onCPUMs)" })", sourceLocation: sourceLocation)
        }
    }

    @Test func framesQueuedBehindALongRenderAreJudgedByIt() async {
        await #expect(processExitsWith: .success) { try RecordedCauseTests.framesQueuedBehindALongRenderAreJudgedByItRecorded() }
    }

    static func framesQueuedBehindALongRenderAreJudgedByItRecorded() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-cause-queue-\(getpid()).fxt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try TraceRecorder.start(path: path, configuration: .init(waitForOtherRecordingSeconds: 300))
        let renders = RenderQueue()
        let renderer = Thread {
            Trace.setThreadRole(.render)
            while let (id, vsync, workNs) = renders.next() {
                Self.sleep(untilNs: vsync)
                Trace.frameRenderBegan(frameID: id)
                Self.spin(cpuNs: workNs)
                Trace.frameRenderEnded(frameID: id)
                let end = Trace.now().nanoseconds
                let shown = vsyncAtOrAfter(end, anchor: vsync, period: Self.periodNs)
                Self.sleep(untilNs: shown)
                Trace.framePresented(frameID: id, at: TraceTimestamp(nanoseconds: shown))
            }
        }
        renderer.start()
        Trace.setThreadRole(.main)
        // Frame 20 renders for 40 ms of CPU: the frames after it commit in time and wait for the render thread.
        // One frame waits for the render thread at most (a swap chain's back-pressure): the main
        // thread begins a frame at the first vsync after there is room.
        let root: UInt64 = 20
        let origin = Trace.now().nanoseconds
        for id in UInt64(1)...40 {
            renders.waitForRoom(pending: 1)
            let vsync = vsyncAtOrAfter(Trace.now().nanoseconds + 1, anchor: origin, period: Self.periodNs)
            Self.sleep(untilNs: vsync)
            Trace.frameBegan(frameID: id, vsync: TraceTimestamp(nanoseconds: vsync), target: TraceTimestamp(nanoseconds: vsync + Self.periodNs), periodNs: Self.periodNs)
            Self.spin(cpuNs: Self.ms / 2)
            Trace.frameCommitted(frameID: id)
            let commit = Trace.now().nanoseconds
            renders.push(id, vsyncAtOrAfter(commit, anchor: vsync, period: Self.periodNs), id == root ? 40 * Self.ms : Self.ms / 2)
        }
        renders.close()
        while !renderer.isFinished { usleep(1000) }
        _ = try recorder.stop()
        let a = try Analyzer.analyze(paths: [path], options: AnalyzerOptions(refreshRatesHz: [120]))
        let frames = a.frames.filter { $0.frameID >= root && $0.frameID < root + 8 && $0.hitchMs > 0 }
        let detail = frames.map { "frame \($0.frameID): hitch \($0.hitchMs) \($0.cause.map { "\($0)" } ?? "-") behind \($0.queuedBehind.map { "\($0)" } ?? "-")" }
        let rootFrame = try #require(frames.first { $0.frameID == root }, "\(detail)")
        #expect(rootFrame.cause == .appWork && rootFrame.queuedBehind == nil, "\(detail)")
        // The frame after the root waits for its render; every frame queued names the root and its
        // cause. A later frame may also hitch for its own reason on a loaded machine (a late
        // wake-up): it is judged by its own states.
        let queued = frames.filter { $0.queuedBehind != nil }
        #expect(queued.contains { $0.frameID == root + 1 }, "\(detail)")
        #expect(queued.allSatisfy { $0.cause == .appWork && $0.queuedBehind == root }, "\(detail)")
        expectCausesFollowTheirStates(a)
    }

    // MARK: Helpers

    /// Runs `body` on a new thread niced to 10 (below every other thread here), so a busy thread or
    /// process at the default priority takes the CPU from it; the niceness dies with the thread.
    static func onNicedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let result = ResultBox<T>()
        let thread = Thread {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(Self.currentThreadID()), 10)
            let outcome = Result { try body() }
            result.value.withLock { $0 = outcome }
        }
        thread.stackSize = 8 << 20
        thread.start()
        while result.value.withLock({ $0 == nil }) { usleep(2000) }
        return try result.value.withLock { $0! }.get()
    }


    /// `onNicedThread`, with the thread pinned to the first CPU the process may run on (passed to
    /// `body`): busy threads and processes pinned there share the frame thread's CPU.
    static func onNicedThreadOnOneCPU<T: Sendable>(_ body: @escaping @Sendable (Int) throws -> T) throws -> T {
        try onNicedThread {
            let cpu = firstCPU(in: affinity())
            pin(to: cpu)
            return try body(cpu)
        }
    }

    /// The calling thread's kernel id (glibc's gettid, hidden from Swift's Glibc module).
    static func currentThreadID() -> Int32 {
        unsafeBitCast(dlsym(dlopen(nil, RTLD_NOW), "gettid"), to: (@convention(c) () -> Int32).self)()
    }

    /// A child process that spins until killed (`/bin/sh` running a busy loop).
    static func spawnBusyProcess() -> pid_t {
        var pid: pid_t = 0
        let args = ["/bin/sh", "-c", "while :; do :; done"]
        var argv = args.map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        _ = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
        return pid
    }

    /// Spins until the calling thread has run `cpuNs` on a CPU (its CPU clock, not the wall clock).
    static func spin(cpuNs: Int64) {
        let start = threadCPUNs()
        var x: UInt64 = 1
        while threadCPUNs() - start < cpuNs { for _ in 0..<1000 { x = x &* 6364136223846793005 &+ 1 } }
        if x == 42 { print("") }   // keeps the loop from being optimized away
    }

    static func threadCPUNs() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }

    static func sleep(untilNs target: Int64) {
        let remaining = target - Trace.now().nanoseconds
        if remaining > 0 { usleep(UInt32(min(remaining / 1000, 1_000_000))) }
    }

    /// glibc's sched_getaffinity / sched_setaffinity (hidden from Swift's Glibc module behind
    /// _GNU_SOURCE), looked up once. pid 0 = the calling thread.
    typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
    static func libc(_ name: String) -> AffinityCall {
        unsafeBitCast(dlsym(dlopen(nil, RTLD_NOW), name), to: AffinityCall.self)
    }

    static func affinity() -> cpu_set_t {
        var set = cpu_set_t()
        _ = withUnsafeMutableBytes(of: &set) { libc("sched_getaffinity")(0, $0.count, $0.baseAddress!) }
        return set
    }

    static func setAffinity(_ set: cpu_set_t) {
        var set = set
        _ = withUnsafeMutableBytes(of: &set) { libc("sched_setaffinity")(0, $0.count, $0.baseAddress!) }
    }

    /// The lowest CPU the process may run on.
    static func firstCPU(in set: cpu_set_t) -> Int {
        withUnsafeBytes(of: set) { bytes in
            for (index, byte) in bytes.enumerated() where byte != 0 { return index * 8 + byte.trailingZeroBitCount }
            return 0
        }
    }

    /// Pins the calling thread to one CPU.
    static func pin(to cpu: Int) {
        var set = cpu_set_t()
        withUnsafeMutableBytes(of: &set) { $0[cpu / 8] = UInt8(1 << (cpu % 8)) }
        setAffinity(set)
    }
}
