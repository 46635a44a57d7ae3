import CHitchSupport
import CxxExceptionSupport
import Foundation
import Synchronization
import Testing
@testable import HitchTrace

/// A busy call chain whose frames the sampler must find by name, in debug and release builds.
enum SamplerWorkload {
    nonisolated(unsafe) static var sink = 0

    @inline(never) static func hot(_ seed: Int) -> Int {
        var value = seed
        for step in 0..<20_000 { value = value &* 6364136223846793005 &+ step }
        return value
    }

    @inline(never) static func middle(_ seed: Int) -> Int { hot(seed) &+ 1 }

    /// Runs the chain until `seconds` of wall time have passed.
    @inline(never) static func outer(seconds: Double) -> Int {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        var total = 0, seed = 1
        while DispatchTime.now().uptimeNanoseconds < end {
            total &+= middle(seed)
            seed &+= 1
        }
        return total
    }
}

/// Runs `body` on a new thread registered with the sampler and returns its result.
func onRegisteredThread<T: Sendable>(_ body: @escaping @Sendable () -> T)
    -> (result: T, threadID: Int32, cpuSeconds: Double, start: TraceTimestamp, end: TraceTimestamp) {
    let box = Mutex<(T, Int32, Double, TraceTimestamp, TraceTimestamp)?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        // Before registering: the timer or perf event is armed inside registration and can fire
        // before it returns, so every sample of this thread is taken after this moment.
        let start = TraceTimestamp.now
        try? Sampler.registerCurrentThread()
        let tid = Trace.currentThreadID
        let cpuStart = threadCPUSeconds()
        let result = body()
        let cpu = threadCPUSeconds() - cpuStart
        Sampler.unregisterCurrentThread()
        // After unregistering: the thread's timer or perf event is disarmed, so every sample of
        // it was taken before this moment.
        let end = TraceTimestamp.now
        box.withLock { $0 = (result, tid, cpu, start, end) }
        done.signal()
    }
    thread.start()
    done.wait()
    return box.withLock { $0! }
}

func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Samples collected in memory by `onSample`, by thread.
final class SampleCollector: Sendable {
    private let samples = Mutex<[SampledStack]>([])
    var onSample: @Sendable (SampledStack) -> Void { { sample in self.samples.withLock { $0.append(sample) } } }
    func of(thread: Int32) -> [SampledStack] { samples.withLock { $0.filter { $0.threadID == thread } } }
}

// One sampling session per process at a time: these tests run one after another, and wait
// (FaultSupport.startSampler) for a session of the fault and load suites, which run in parallel.
@Suite(.serialized) struct SamplerTests {
    /// The sources this machine can run: the timer signal always, perf events where the kernel permits them.
    static let availableSources: [SampleSource] = perfEventsPermitted ? [.timerSignal, .perfEvent] : [.timerSignal]

    static let perfEventsPermitted: Bool = {
        guard let sampler = try? FaultSupport.startSampler(.init(rateHz: 100, source: .perfEvent), recorder: nil) else { return false }
        sampler.stop()
        return true
    }()

    @Test(arguments: SamplerTests.availableSources)
    func busyCallChainIsSampledAtTheRateAndNamedByFunction(source: SampleSource) throws {
        let collector = SampleCollector()
        let sampler = try FaultSupport.startSampler(.init(rateHz: 1000, threads: .registered, source: source), recorder: nil, onSample: collector.onSample)
        #expect(sampler.source == source)
        let run = onRegisteredThread { SamplerWorkload.outer(seconds: 0.5) }
        let statistics = sampler.stop()
        SamplerWorkload.sink &+= run.result

        let samples = collector.of(thread: run.threadID)
        // A timer signal can only be handled while the thread is on a CPU (the kernel merges the
        // rest into counted overruns), so the expectation is the thread's CPU time at 1 kHz; on an
        // idle machine that is its 0.5 s of wall time.
        let expected = 1000 * run.cpuSeconds
        #expect(Double(samples.count) >= 0.8 * expected, "\(samples.count) samples for \(expected) expected; \(statistics)")
        #expect(statistics.samplesDropped == 0)
        #expect(statistics.source == source && statistics.perfFallbackThreads == 0)
        // Timestamps are on the trace's clock, inside the run (perf records are converted from
        // CLOCK_MONOTONIC), and in order per thread.
        let times = samples.map(\.timestamp)
        #expect(times == times.sorted(), "sample times out of order")
        if let first = times.first, let last = times.last {
            #expect(first >= run.start && last <= run.end, "samples at \(first)...\(last), run \(run.start)...\(run.end)")
        }

        var names: [UInt64: String] = [:]
        func name(_ address: UInt64) -> String {
            if let known = names[address] { return known }
            let resolved = Symbolicator.resolve(address)?.function ?? ""
            names[address] = resolved
            return resolved
        }
        let withHot = samples.filter { sample in sample.addresses.contains { name($0).contains("SamplerWorkload.hot(") } }
        #expect(Double(withHot.count) >= 0.9 * Double(samples.count), "hot in \(withHot.count) of \(samples.count)")
        // The chain is intact below hot: middle and outer are its callers, in (nearly) every sample.
        // An unwind that stops early is counted by cause (`statistics.unwindFailures`), so a rare
        // short stack is allowed; a broken unwinder fails here.
        let intact = withHot.filter { sample in
            let frames = sample.addresses.map(name)
            guard let hotIndex = frames.firstIndex(where: { $0.contains("SamplerWorkload.hot(") }) else { return false }
            let callers = frames[(hotIndex + 1)...]
            return callers.contains { $0.contains("SamplerWorkload.middle(") } && callers.contains { $0.contains("SamplerWorkload.outer(") }
        }
        // Every short stack beyond one in ten is one the sampler counted as a failed unwind, and those
        // stay a minority: some hosts' libunwind stops at `hot` on part of the samples taken inside
        // the iterator `hot` calls (an error it reports); a broken unwinder fails nearly every sample.
        let failures = statistics.unwindFailures.total
        let broken = withHot.first { sample in !intact.contains { $0.addresses == sample.addresses } }
        #expect(Double(withHot.count - intact.count) <= 0.1 * Double(withHot.count) + Double(failures)
                    && 2 * failures < UInt64(samples.count),
                "middle and outer below hot in \(intact.count) of \(withHot.count), \(failures) unwinds counted as failed; first: \(withHot.first.map { $0.addresses.map(name) } ?? []); first short: \(broken.map { $0.addresses.map(name) } ?? []); \(statistics)")
        // The loop's few stacks repeat: most unwinds come from the memo, and the checks above hold
        // for them (a memo answer is the frames a fresh walk of the same input gave).
        #expect(statistics.unwindMemoHits > 0 && statistics.unwindMemoHits <= statistics.samplesUnwound, "\(statistics)")
    }

    /// The timer signal reaches a thread blocked in a system call (perf events, which sample CPU
    /// time, do not: that thread gets no samples there).
    @Test func threadBlockedInReadCompletesItsSyscall() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd); close(writeEnd) }
        let collector = SampleCollector()
        let sampler = try FaultSupport.startSampler(.init(rateHz: 1000, threads: .registered, source: .timerSignal), recorder: nil, onSample: collector.onSample)
        let writer = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            let message = Array("sixty-four bytes of payload, written while the reader is sampled".utf8.prefix(64))
            _ = message.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        }
        writer.start()
        let run = onRegisteredThread { () -> (Int, Int32, [UInt8]) in
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, 64) }
            return (count, count < 0 ? errno : 0, buffer)
        }
        sampler.stop()
        #expect(run.result.0 == 64, "read returned \(run.result.0), errno \(run.result.1)")
        #expect(String(decoding: run.result.2, as: UTF8.self).hasPrefix("sixty-four bytes"))
        // The signals did reach the blocked thread (each one interrupted and restarted the read).
        #expect(collector.of(thread: run.threadID).count >= 20)
    }

    @Test func samplingWhileAnotherThreadLoadsLibrariesDoesNotDeadlock() throws {
        let sampler = try FaultSupport.startSampler(.init(rateHz: 1000, threads: .all), recorder: nil)
        let stopLoading = Atomic<Bool>(false)
        let loads = Atomic<Int>(0)
        let loaderDone = DispatchSemaphore(value: 0)
        let loader = Thread {
            while !stopLoading.load(ordering: .relaxed) {
                for library in ["libz.so.1", "libm.so.6"] {
                    if let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) {
                        dlclose(handle)
                        loads.add(1, ordering: .relaxed)
                    }
                }
            }
            loaderDone.signal()
        }
        loader.start()
        let run = onRegisteredThread { SamplerWorkload.outer(seconds: 0.4) }
        stopLoading.store(true, ordering: .relaxed)
        let finished = loaderDone.wait(timeout: .now() + 20)
        let statistics = sampler.stop()
        SamplerWorkload.sink &+= run.result
        #expect(finished == .success)
        #expect(loads.load(ordering: .relaxed) > 0)
        #expect(statistics.samplesTaken > 0)
    }

    @Test func sourceAndReasonAreReported() async { await #expect(processExitsWith: .success) { try Self.sourceAndReasonAreReportedRecorded() } }

    static func sourceAndReasonAreReportedRecorded() throws {
        let path = FaultSupport.temporaryPath("source.fxt")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path)
        defer { _ = try? recorder.stop() }
        // Automatic: perf events where permitted, else the signal with the refusal in words.
        let sampler = try FaultSupport.startSampler(.init(rateHz: 100), recorder: recorder)
        let statistics = sampler.stop()
        try recorder.stop()
        #expect(sampler.source == (Self.perfEventsPermitted ? .perfEvent : .timerSignal))
        #expect(statistics.source == sampler.source)
        let metadata = try DecodedStacks(path: path).metadata
        #expect(metadata["samplerSource"] == sampler.source.rawValue)
        #expect(metadata["samplerSourceReason"] == sampler.sourceReason && !sampler.sourceReason.isEmpty)
        if !Self.perfEventsPermitted { #expect(sampler.sourceReason.contains("perf_event")) }
        // Forced: the signal always; perf events either run or fail loudly, never silently fall back.
        let forced = try FaultSupport.startSampler(.init(rateHz: 100, source: .timerSignal), recorder: nil)
        #expect(forced.source == .timerSignal && forced.sourceReason.contains("asked for the timer signal"))
        forced.stop()
        // A stack copy larger than a perf record holds samples with the signal and says why.
        let big = try FaultSupport.startSampler(.init(rateHz: 100, stackCopyBytes: 1 << 17), recorder: nil)
        #expect(big.source == .timerSignal && big.sourceReason.contains("perf record holds"), "\(big.sourceReason)")
        big.stop()
        if Self.perfEventsPermitted {
            #expect(throws: SamplerError.perfEventsRefused(errno: EMSGSIZE)) {
                try Sampler.start(.init(rateHz: 100, stackCopyBytes: 1 << 17, source: .perfEvent), recorder: nil)
            }
        }
    }

    @Test func badRateIsRejectedAndSecondSessionIsBusy() throws {
        #expect(throws: SamplerError.invalidRate(0)) { try Sampler.start(.init(rateHz: 0), recorder: nil) }
        let sampler = try FaultSupport.startSampler(.init(rateHz: 100), recorder: nil)
        #expect(throws: SamplerError.alreadyRunning) { try Sampler.start(.init(rateHz: 100), recorder: nil) }
        let first = sampler.stop()
        #expect(sampler.stop() == first)
    }
}

// MARK: - The loader storm: a handler must never wait for anything the sampled thread holds

/// Threads doing what hangs or crashes a careless signal-time unwinder, all sampled at 1 kHz: loading
/// and unloading libraries (inside the loader's lock), walking the loader's list themselves
/// (dl_iterate_phdr), running libgcc's own unwinder (`_Unwind_Backtrace`, and `_Unwind_RaiseException`
/// of an exception nothing catches: its search phase walks the whole stack), throwing and catching
/// C++ exceptions (both phases: destructors run as cleanups, then the catch's landing pad; the
/// CxxExceptionSupport target), churning malloc, blocked in read(2), and one that checks its errno
/// survives every signal.
final class SamplerStorm: Sendable {
    typealias UnwindTrace = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
    typealias UnwindBacktrace = @convention(c) (UnwindTrace, UnsafeMutableRawPointer?) -> Int32
    typealias UnwindRaise = @convention(c) (UnsafeMutableRawPointer) -> Int32
    typealias PhdrCallback = @convention(c) (OpaquePointer?, Int, UnsafeMutableRawPointer?) -> Int32
    typealias IteratePhdr = @convention(c) (PhdrCallback, UnsafeMutableRawPointer?) -> Int32

    let stop = Atomic<Bool>(false)
    let loads = Atomic<Int>(0)
    let loaderWalks = Atomic<Int>(0)
    let unwinds = Atomic<Int>(0)
    let errnoViolations = Atomic<Int>(0)
    let exceptionsCaught = Atomic<Int>(0)
    let exceptionsMissed = Atomic<Int>(0)
    let readResult = Atomic<Int>(Int.min)
    let finished = DispatchSemaphore(value: 0)
    let threadCount = 9
    let libraries: [String]
    let pipeEnds: (read: Int32, write: Int32)

    init() {
        // Libraries the process has not loaded, so dlclose really unmaps them.
        libraries = ["libz.so.1", "libbz2.so.1", "libexpat.so.1", "libuuid.so.1"].filter { name in
            if let handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD) { dlclose(handle); return false }
            return true
        }
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        pipeEnds = (fds[0], fds[1])
    }

    deinit { close(pipeEnds.read); close(pipeEnds.write) }

    func startThreads() {
        let unwindBacktrace = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_Unwind_Backtrace")
            .map { unsafeBitCast($0, to: UnwindBacktrace.self) }
        let unwindRaise = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_Unwind_RaiseException")
            .map { unsafeBitCast($0, to: UnwindRaise.self) }
        // Not in the Glibc module (link.h): looked up like libgcc's entry points.
        let iteratePhdr = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dl_iterate_phdr")
            .map { unsafeBitCast($0, to: IteratePhdr.self) }
        let bodies: [@Sendable () -> Void] = [
            { self.loadAndUnload(offset: 0) },
            { self.loadAndUnload(offset: 1) },
            {
                guard let iteratePhdr else { return }
                while !self.stop.load(ordering: .relaxed) {
                    _ = iteratePhdr({ _, _, _ in 0 }, nil)
                    self.loaderWalks.add(1, ordering: .relaxed)
                }
            },
            {
                guard let unwindBacktrace else { return }
                while !self.stop.load(ordering: .relaxed) {
                    _ = unwindBacktrace({ _, _ in 0 }, nil)
                    self.unwinds.add(1, ordering: .relaxed)
                }
            },
            {
                guard let unwindRaise else { return }
                // struct _Unwind_Exception: class, cleanup, two private words (16-byte aligned).
                let exception = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 16)
                defer { exception.deallocate() }
                while !self.stop.load(ordering: .relaxed) {
                    exception.initializeMemory(as: UInt64.self, repeating: 0, count: 4)
                    exception.storeBytes(of: 0x4849_5443_4800_0000, as: UInt64.self) // "HITCH"
                    _ = unwindRaise(exception) // nothing catches it: returns _URC_END_OF_STACK
                    self.unwinds.add(1, ordering: .relaxed)
                }
            },
            {
                while !self.stop.load(ordering: .relaxed) {
                    let caught = Int(hitch_test_throw_and_catch(20))
                    self.exceptionsCaught.add(caught, ordering: .relaxed)
                    self.exceptionsMissed.add(20 - caught, ordering: .relaxed)
                }
            },
            {
                while !self.stop.load(ordering: .relaxed) {
                    var blocks: [UnsafeMutableRawPointer?] = []
                    for size in stride(from: 16, to: 40_000, by: 997) { blocks.append(malloc(size)) }
                    blocks.forEach { free($0) }
                }
            },
            {
                var byte: UInt8 = 0
                let count = read(self.pipeEnds.read, &byte, 1)
                self.readResult.store(count < 0 ? -Int(errno) : count, ordering: .relaxed)
            },
            {
                errno = 4242
                while !self.stop.load(ordering: .relaxed) {
                    for _ in 0..<1000 where errno != 4242 { self.errnoViolations.add(1, ordering: .relaxed); errno = 4242 }
                }
            },
        ]
        precondition(bodies.count == threadCount)
        for body in bodies {
            Thread { body(); self.finished.signal() }.start()
        }
    }

    private func loadAndUnload(offset: Int) {
        var index = offset
        while !stop.load(ordering: .relaxed) {
            guard !libraries.isEmpty else { return }
            if let handle = dlopen(libraries[index % libraries.count], RTLD_NOW | RTLD_LOCAL) {
                dlclose(handle)
                loads.add(1, ordering: .relaxed)
            }
            index += 1
        }
    }

    /// Stops every thread; false if one did not finish within `timeout` seconds.
    func stopThreads(timeout: Double) -> Bool {
        stop.store(true, ordering: .relaxed)
        var byte: UInt8 = 1
        _ = write(pipeEnds.write, &byte, 1)
        for _ in 0..<threadCount where finished.wait(timeout: .now() + timeout) == .timedOut { return false }
        return true
    }
}

/// Fails the run with evidence instead of hanging: if `done` is not signalled within `seconds`,
/// prints every thread's kernel state (name, wait channel, syscall) and aborts the process.
/// (scripts/check-asan-sampler.sh also runs under with-deadline.sh, which prints gdb backtraces.)
func watchdog(seconds: Double, what: String) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread {
        guard done.wait(timeout: .now() + seconds) == .timedOut else { return }
        var report = "watchdog: \(what) still running after \(seconds) s; threads:\n"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks.sorted() {
            func field(_ name: String) -> String {
                ((try? String(contentsOfFile: "/proc/self/task/\(task)/\(name)", encoding: .utf8)) ?? "?")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            report += "  \(task) \(field("comm")) wchan=\(field("wchan")) syscall=\(field("syscall").prefix(40))\n"
        }
        FileHandle.standardError.write(Data(report.utf8))
        abort()
    }.start()
    return done
}

extension SamplerTests {
    /// Short sessions, many times over: HITCH_SAMPLER_STORM_ITERATIONS (default 3; the ASan check
    /// runs 200). Each session samples every thread at 1 kHz for about 100 ms.
    @Test func dlopenStormWithEveryThreadSampledNeverHangsOrCrashes() throws {
        let iterations = Int(ProcessInfo.processInfo.environment["HITCH_SAMPLER_STORM_ITERATIONS"] ?? "") ?? 3
        // A full ring (the drain thread starved on a loaded machine, under ASan) drops snapshots;
        // that is counted, not checked: this test is about hangs, crashes and errno.
        var totals = (taken: UInt64(0), complete: UInt64(0), dropped: UInt64(0), loads: 0, walks: 0, unwinds: 0, catches: 0)
        var failures = UnwindFailures()
        for iteration in 0..<iterations {
            let done = watchdog(seconds: 60, what: "sampler storm iteration \(iteration)")
            let storm = SamplerStorm()
            storm.startThreads()
            // Both sources in turn where perf events are permitted: the signal lands inside the loader,
            // malloc and libgcc's unwinder; the kernel's samples meet the same unwinder mid-dlclose.
            let source = Self.availableSources[iteration % Self.availableSources.count]
            let sampler = try FaultSupport.startSampler(.init(rateHz: 1000, threads: .all, source: source), recorder: nil)
            Thread.sleep(forTimeInterval: 0.1)
            let statistics = sampler.stop()
            let stopped = storm.stopThreads(timeout: 20)
            done.signal()
            #expect(stopped, "iteration \(iteration): a storm thread did not finish")
            #expect(storm.errnoViolations.load(ordering: .relaxed) == 0, "iteration \(iteration): errno changed under a signal")
            #expect(storm.exceptionsMissed.load(ordering: .relaxed) == 0, "iteration \(iteration): a C++ exception was not caught as thrown")
            #expect(storm.readResult.load(ordering: .relaxed) == 1, "iteration \(iteration): read returned \(storm.readResult.load(ordering: .relaxed))")
            // No silent loss: every snapshot became a sample or was counted as discarded.
            #expect(statistics.samplesTaken == statistics.samplesRecorded + statistics.samplesDiscarded,
                    "iteration \(iteration): \(statistics)")
            guard stopped else { return }
            totals.taken += statistics.samplesTaken
            totals.complete += statistics.samplesUnwound - statistics.unwindFailures.total
            totals.dropped += statistics.samplesDropped
            failures.add(statistics.unwindFailures)
            totals.loads += storm.loads.load(ordering: .relaxed)
            totals.walks += storm.loaderWalks.load(ordering: .relaxed)
            totals.unwinds += storm.unwinds.load(ordering: .relaxed)
            totals.catches += storm.exceptionsCaught.load(ordering: .relaxed)
        }
        // Every kind of thread made progress while being sampled.
        #expect(totals.taken > 0 && totals.loads > 0 && totals.walks > 0 && totals.unwinds > 0 && totals.catches > 0, "\(totals)")
        #expect(totals.complete > 0, "no unwind reached the outermost frame: \(failures)")
        print("sampler storm: \(iterations) iterations, \(totals.taken) samples (\(totals.complete) unwound to the end, \(totals.dropped) dropped on full rings), \(totals.loads) dlopen/dlclose, \(totals.walks) dl_iterate_phdr walks, \(totals.unwinds) libgcc unwinds, \(totals.catches) C++ exceptions caught; unwinds stopped early: \(failures)")
    }
}
