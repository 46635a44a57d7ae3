import Foundation
import HitchTrace
import Synchronization
import Testing
@testable import HitchAnalysis

/// Each hitch cause made to happen for real on this machine, recorded through the Trace API with
/// its thread-state readings, and the file analyzed: a busy loop in a frame is app work, the main
/// thread sharing one CPU with two busy threads is waiting for a CPU, a frame waiting on a mutex
/// another thread holds is blocked. Bounds are wide: three frames are planted and only those are
/// asserted (a shared machine may make others hitch too): every planted frame that hitched has the
/// planted cause, and at least one hitched.
@Suite(.serialized) struct RecordedCauseTests {
    /// 120 Hz: a planted frame misses by two periods or more, so it is a hitch even right after an
    /// ordinary frame the loaded machine made one period late (steady triple buffering otherwise).
    static let periodNs: Int64 = 8_333_333
    static let ms: Int64 = 1_000_000

    /// Frames at 120 Hz on the calling thread: `ordinary` frames of ~1 ms of work around each planted
    /// frame, `planted` frames doing `work`. Each frame begins at its vsync and is presented one
    /// period after the first vsync at or after its commit (a display with one frame in flight).
    /// Returns the analysis and the planted frames' ids.
    /// `prepare` runs before a planted frame begins (outside its window).
    /// `perf`: the recorder's context-switch source where the kernel permits it (readings plus exact
    /// switches, which the analysis holds frames for), else the procfs reads alone.
    static func record(_ name: String, perf: Bool, planted: Int = 3, ordinary: Int = 4, prepare: () -> Void = {},
                       work: () -> Void) throws -> (Analysis, [UInt64]) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-cause-\(name)-\(getpid()).fxt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try TraceRecorder.start(path: path, configuration: .init(waitForOtherRecordingSeconds: 300, contextSwitchEvents: perf))
        var plantedIDs: [UInt64] = []
        var id: UInt64 = 1
        var vsync = Trace.now().nanoseconds + periodNs
        for round in 0...planted {
            for f in 0..<(ordinary + (round == planted ? 0 : 1)) {
                let isPlanted = round < planted && f == ordinary
                if isPlanted { prepare() }
                sleep(untilNs: vsync)
                Trace.frameBegan(frameID: id, vsync: TraceTimestamp(nanoseconds: vsync), target: TraceTimestamp(nanoseconds: vsync + periodNs), periodNs: periodNs)
                if isPlanted { work(); plantedIDs.append(id) } else { spin(cpuNs: ms) }
                Trace.frameCommitted(frameID: id)
                let commit = Trace.now().nanoseconds
                let shown = vsyncAtOrAfter(commit, anchor: vsync, period: periodNs) + periodNs
                Trace.frameRenderEnded(frameID: id)
                Trace.framePresented(frameID: id, at: TraceTimestamp(nanoseconds: shown))
                id += 1
                vsync = vsyncAtOrAfter(commit + 1, anchor: vsync, period: periodNs)
            }
        }
        _ = try recorder.stop()
        return (try Analyzer.analyze(paths: [path], options: AnalyzerOptions(refreshRatesHz: [120])), plantedIDs)
    }

    /// The planted frames that hitched all have `cause`, and at least one hitched.
    static func expectPlanted(_ analysis: Analysis, _ planted: [UInt64], _ cause: HitchCause,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let frames = analysis.frames.filter { planted.contains($0.frameID) }
        let hitched = frames.filter { $0.hitchMs > 0 }
        let detail = frames.map { "frame \($0.frameID): hitch \($0.hitchMs) ms (\($0.kind)), frame time \($0.frameTimeMs) ms, main \($0.mainThreadMs) ms, \($0.cause.map { "\($0)" } ?? "-"), "
                                  + ($0.mainThreadStates.map { "running \($0.runningMs) runnable \($0.runnableMs) blocked \($0.blockedMs) machine \($0.machineMs) unknown \($0.unknownMs)" } ?? "no readings") }
        #expect(!hitched.isEmpty, "no planted frame hitched: \(detail)", sourceLocation: sourceLocation)
        #expect(hitched.allSatisfy { $0.cause == cause }, "\(detail)", sourceLocation: sourceLocation)
        #expect(analysis.threadStates != nil, sourceLocation: sourceLocation)
    }

    /// The source the recording used: perf where asked and the kernel permits it, procfs otherwise.
    static func expectSource(_ analysis: Analysis, perf: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let source = analysis.threadStates?.source
        if perf { #expect(source == .perfContextSwitch || source == .procfs, sourceLocation: sourceLocation) }
        else { #expect(source == .procfs, sourceLocation: sourceLocation) }
    }

    @Test(arguments: [true, false]) func aBusyLoopInAFrameIsAppWork(perf: Bool) throws {
        // 20 ms of the thread's own CPU time: two periods over the 8.3 ms deadline whatever else waited.
        let (a, planted) = try Self.record("app", perf: perf) { Self.spin(cpuNs: 20 * Self.ms) }
        Self.expectPlanted(a, planted, .appWork)
        Self.expectSource(a, perf: perf)
    }

    @Test(arguments: [true, false]) func theMainThreadSharingOneCPUWithTwoBusyThreadsWaitsForTheCPU(perf: Bool) throws {
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
        let (a, planted) = try Self.record("waiting", perf: perf) { Self.spin(cpuNs: 4 * Self.ms) }
        Self.expectPlanted(a, planted, .waitingForCPU)
        Self.expectSource(a, perf: perf)
        let runnable = a.frames.filter { planted.contains($0.frameID) }.compactMap { $0.mainThreadStates?.runnableMs }
        #expect(runnable.contains { $0 > 4 })
    }

    @Test(arguments: [true, false]) func aFrameWaitingOnAMutexAnotherThreadHoldsIsBlocked(perf: Bool) throws {
        let lock = NSLock()
        let held = StopFlag(), go = StopFlag()
        let (a, planted) = try Self.record("blocked", perf: perf, prepare: {
            // Before the frame: another thread takes the lock and waits for the frame's signal.
            held.reset(); go.reset()
            let holder = Thread {
                lock.lock()
                held.set()
                while !go.isSet { usleep(100) }
                usleep(20_000)
                lock.unlock()
            }
            holder.start()
            while !held.isSet { usleep(100) }
        }) {
            go.set()
            lock.lock()    // asleep ~20 ms until the holder lets go
            lock.unlock()
        }
        Self.expectPlanted(a, planted, .blocked)
        Self.expectSource(a, perf: perf)
        let blocked = a.frames.filter { planted.contains($0.frameID) }.compactMap { $0.mainThreadStates?.blockedMs }
        #expect(blocked.contains { $0 > 10 })
    }

    // MARK: Helpers

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

/// A flag threads share.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
    func reset() { flag.store(false, ordering: .releasing) }
}
