import CHitchSupport
import Foundation
import Synchronization

/// Which threads a sampling session covers.
public struct SampledThreads: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// The process's initial thread (the UI thread of an app).
    public static let main = SampledThreads(rawValue: UInt32(HITCH_SAMPLE_MAIN_THREAD))
    /// Threads that called `Sampler.registerCurrentThread()`.
    public static let registered = SampledThreads(rawValue: UInt32(HITCH_SAMPLE_REGISTERED_THREADS))
    /// Every thread of the process (new threads are picked up every 100 ms).
    public static let all = SampledThreads(rawValue: UInt32(HITCH_SAMPLE_ALL_THREADS))
}

public struct SamplerConfiguration: Sendable {
    /// The stack bytes copied per sample unless configured (docs/RELIABILITY.md says how it was chosen).
    public static let defaultStackCopyBytes = Int(HITCH_DEFAULT_STACK_COPY_BYTES)

    /// The sampling rate unless configured: of recordings (`hitch record feed --sample-rate`), of
    /// `hitch bench sample --rate` and of this type's initializer. One place, so the default can be
    /// chosen from `hitch bench sample`'s figures (docs/RELIABILITY.md, "Sampling overhead").
    /// 250 Hz: where every sample is a timer interrupt that exits to a hypervisor, taking samples at
    /// 1 kHz costs several percent before any of Hitch's code runs (docs/RELIABILITY.md has the
    /// figures); at 250 Hz a hitching 120 Hz frame still gets about 4 samples. Pass 1000 on bare metal.
    public static let defaultRateHz = 250

    /// Samples per second per sampled thread (1 ... 10,000).
    public var rateHz: Int
    public var threads: SampledThreads
    /// The longest the drain thread waits before it unwinds the snapshots and moves the samples
    /// into the trace; it also wakes whenever a sampled thread's ring passes a quarter full, so the
    /// wake-ups follow the rate. 0 (the default): 100 ms.
    public var drainIntervalMs: Int
    /// Stack bytes copied per sample (256 ... 256 KiB; perf events copy at most 65,528); deeper
    /// stacks are cut off where the copy ends (counted in `UnwindFailures.offCopyEnd`).
    public var stackCopyBytes: Int
    /// Where samples come from; nil picks perf events where the kernel permits them, else the timer
    /// signal, unless the environment variable HITCH_SAMPLER_SOURCE says `signal` or `perf`.
    public var source: SampleSource?

    public init(rateHz: Int = SamplerConfiguration.defaultRateHz, threads: SampledThreads = .main, drainIntervalMs: Int = 0,
                stackCopyBytes: Int = SamplerConfiguration.defaultStackCopyBytes, source: SampleSource? = nil) {
        self.rateHz = rateHz; self.threads = threads; self.drainIntervalMs = drainIntervalMs
        self.stackCopyBytes = stackCopyBytes; self.source = source
    }
}

/// One sample as the drain thread sees it (for in-process consumers such as tests and benchmarks).
public struct SampledStack: Sendable {
    /// Kernel thread id of the sampled thread.
    public var threadID: Int32
    public var timestamp: TraceTimestamp
    /// Code addresses, innermost first: the interrupted PC, then each caller's return address minus one.
    public var addresses: [UInt64]
}

/// Unwinds that ended before the outermost frame, by cause. Each such sample is still recorded
/// with the frames found before the stop, except `modulesChanged` at the interrupted PC itself.
public struct UnwindFailures: Sendable, Equatable {
    /// Only the PC was kept: the thread's stack bounds were not known yet (a thread found by the
    /// all-threads scan, until its first sample) or its SP was outside them.
    public var stackUnknown: UInt64 = 0
    /// The unwind needed stack bytes above the copied range (`stackCopyBytes` too small).
    public var offCopyEnd: UInt64 = 0
    /// The unwind reached code of a module loaded after the sample was taken (never read as if
    /// it were the code the sample ran).
    public var modulesChanged: UInt64 = 0
    /// The unwind reached an address outside every loaded module (JIT code, an unloaded library).
    public var noModule: UInt64 = 0
    /// libunwind could not step further (no unwind info and no usable frame pointer).
    public var errors: UInt64 = 0

    public init() {}

    public var total: UInt64 { stackUnknown + offCopyEnd + modulesChanged + noModule + errors }

    /// Adds another session's counts (for totals over several sessions).
    public mutating func add(_ other: UnwindFailures) {
        stackUnknown += other.stackUnknown
        offCopyEnd += other.offCopyEnd
        modulesChanged += other.modulesChanged
        noModule += other.noModule
        errors += other.errors
    }
}

/// What a session did; every lost sample is counted in one of these.
public struct SamplerStatistics: Sendable, Equatable {
    /// Where this session's samples came from.
    public var source: SampleSource
    /// Stack snapshots taken: written by the signal handler, or read from the kernel's perf rings.
    public var samplesTaken: UInt64
    /// Samples lost because a thread's ring was full (the drain thread fell behind), the kernel's
    /// lost perf records included.
    public var samplesDropped: UInt64
    /// Of `samplesDropped`: samples the kernel could not write into a full perf ring.
    public var perfSamplesLost: UInt64
    /// Threads of a perf-event session whose event was refused, sampled by the timer signal instead.
    public var perfFallbackThreads: Int
    /// Timer expirations the kernel merged because the thread was not scheduled in time.
    public var timerOverruns: UInt64
    /// Snapshots unwound on the drain thread (complete or not).
    public var samplesUnwound: UInt64
    /// Of `samplesUnwound`: answered from the memo of an earlier unwind of the same registers and
    /// stack words (no libunwind walk).
    public var unwindMemoHits: UInt64
    /// Unwinds that stopped early, by cause.
    public var unwindFailures: UnwindFailures
    /// Unwound snapshots that kept no frame at all (the interrupted PC's module changed before the
    /// unwind, or the PC was 0), so never became a sample: taken = recorded + discarded.
    public var samplesDiscarded: UInt64
    /// Samples written into the trace (or counted, without a recorder).
    public var samplesRecorded: UInt64
    /// Time spent in the signal handler per sample (median and 99th percentile), in nanoseconds;
    /// 0 when no signal was handled (perf events: the kernel takes the sample).
    public var handlerNsP50: Double
    public var handlerNsP99: Double
    /// The drain thread's time per sample: read the snapshot or perf record and unwind it, in ns.
    public var unwindNsP50: Double
    public var unwindNsP99: Double
    /// Stack bytes (from SP) that 99% of complete unwinds read, rounded up to a power of two: the
    /// copy size that would have sufficed for them.
    public var stackBytesNeededP99: UInt64
    /// CPU time of the drain thread over the whole session (its wake-ups, unwinding, recording).
    public var drainCPUSeconds: Double
    /// Times the drain thread woke to look for samples.
    public var drainWakeups: UInt64

    /// The share of unwound samples whose unwind ran off the end of the copied stack.
    public var offCopyEndShare: Double {
        samplesUnwound == 0 ? 0 : Double(unwindFailures.offCopyEnd) / Double(samplesUnwound)
    }
}

/// Where samples come from, written to the trace's metadata (`samplerSource`).
public enum SampleSource: String, Sendable, CaseIterable {
    /// A per-thread POSIX timer sends SIGPROF; the handler copies registers and stack.
    case timerSignal = "timer-signal"
    /// A per-thread perf_event_open task-clock event: the kernel copies registers and stack into a
    /// ring the drain thread reads; no signal reaches the sampled thread. Samples on-CPU user time
    /// only (a thread blocked or in a system call is not sampled).
    case perfEvent = "perf-event"

    /// The source HITCH_SAMPLER_SOURCE names (`signal` or `perf`); nil when unset or empty.
    public static func fromEnvironment() throws(SamplerError) -> SampleSource? {
        guard let value = ProcessInfo.processInfo.environment["HITCH_SAMPLER_SOURCE"], !value.isEmpty else { return nil }
        switch value {
        case "signal", timerSignal.rawValue: return .timerSignal
        case "perf", perfEvent.rawValue: return .perfEvent
        default: throw .invalidSourceSetting(value)
        }
    }
}

public enum SamplerError: Error, CustomStringConvertible, Equatable {
    case alreadyRunning
    case invalidRate(Int)
    case invalidStackCopySize(Int)
    /// HITCH_SAMPLER_SOURCE holds something other than `signal` or `perf`.
    case invalidSourceSetting(String)
    /// No sample source exists on this platform (the sampler is Linux-only).
    case unavailableOnThisPlatform
    /// Perf events were asked for and the kernel refused them.
    case perfEventsRefused(errno: Int32)
    case system(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .alreadyRunning: "a sampling session is already running"
        case .invalidRate(let rate): "sampling rate must be 1 to 10000 Hz; got \(rate)"
        case .invalidStackCopySize(let bytes): "stack copy size must be 256 to 262144 bytes; got \(bytes)"
        case .invalidSourceSetting(let value): "HITCH_SAMPLER_SOURCE must be 'signal' or 'perf'; got '\(value)'"
        case .unavailableOnThisPlatform: "the sampling profiler is not available on this platform (it needs Linux)"
        case .perfEventsRefused(let code): "perf events were asked for and refused: \(Sampler.describePerfRefusal(code))"
        case .system(let operation, let code): "\(operation) failed: \(String(cString: strerror(code)))"
        }
    }
}

/// The sampling profiler. Each sampled thread's registers and the top of its stack are copied
/// `rateHz` times a second, by the kernel (a perf_event_open task-clock event per thread, where
/// permitted: `SampleSource.perfEvent`, no signals) or by a C SIGPROF handler driven by a per-thread
/// CLOCK_MONOTONIC timer (`SampleSource.timerSignal`: it copies into a lock-free ring and does
/// nothing else: no unwinding, no loader call, no lock; an eventfd write wakes the drain when its
/// ring passes a quarter full). A drain thread unwinds the snapshots of either source, moves the samples into the recording (`TraceRecorder.defineStack`/`recordSample`)
/// and names every new address once (`defineSymbol`). `source` and `sourceReason` say which ran.
///
/// ```swift
/// let sampler = try Sampler.start(.init(rateHz: 1000, threads: .main))
/// defer { _ = sampler.stop() }
/// ```
public final class Sampler: Sendable {
    private let configuration: SamplerConfiguration
    private let recorder: TraceRecorder?
    private let onSample: (@Sendable (SampledStack) -> Void)?
    private let stopRequested = Atomic<Bool>(false)
    private let stopped = Locked<SamplerStatistics?>(nil)
    private let samplesRecorded = Atomic<UInt64>(0)
    private let drainCPUNanoseconds = Atomic<UInt64>(0)
    private let drainWakeups = Atomic<UInt64>(0)
    private let drainFinished = DispatchSemaphore(value: 0)
    private let baseline: hitch_sampler_stats
    /// Where this session's samples come from, and why (also the trace's `samplerSource` and
    /// `samplerSourceReason`).
    public let source: SampleSource
    public let sourceReason: String

    private init(configuration: SamplerConfiguration, recorder: TraceRecorder?,
                 onSample: (@Sendable (SampledStack) -> Void)?, baseline: hitch_sampler_stats,
                 source: SampleSource, sourceReason: String) {
        self.configuration = configuration
        self.recorder = recorder
        self.onSample = onSample
        self.baseline = baseline
        self.source = source
        self.sourceReason = sourceReason
    }

    /// The kernel's perf_event_paranoid setting, nil where there is none.
    static var perfEventParanoid: Int? {
        (try? String(contentsOfFile: "/proc/sys/kernel/perf_event_paranoid", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Why perf events could not be used, in words, from the refusing errno.
    static func describePerfRefusal(_ code: Int32) -> String {
        let paranoid = perfEventParanoid.map { "perf_event_paranoid \($0)" } ?? "no perf_event_paranoid"
        switch code {
        case EMSGSIZE: return "the stack copy is larger than the \(HITCH_PERF_MAX_STACK_COPY_BYTES) bytes a perf record holds"
        case EACCES, EPERM: return "perf_event_open not permitted (\(String(cString: strerror(code))); \(paranoid), or a seccomp filter, or the locked-memory budget for its rings)"
        case ENOSYS, ENOENT, EOPNOTSUPP, ENODEV: return "perf_event_open not supported here (\(String(cString: strerror(code))))"
        default: return "perf_event_open failed (\(String(cString: strerror(code))); \(paranoid))"
        }
    }

    /// Starts sampling into `recorder` (the active recording by default; with none, samples are
    /// only counted). `onSample`, if given, also sees every sample, on the drain thread.
    public static func start(_ configuration: SamplerConfiguration = .init(),
                             recorder: TraceRecorder? = TraceRecorder.current,
                             onSample: (@Sendable (SampledStack) -> Void)? = nil) throws(SamplerError) -> Sampler {
        guard (1...10_000).contains(configuration.rateHz) else { throw .invalidRate(configuration.rateHz) }
        guard (256...(1 << 18)).contains(configuration.stackCopyBytes) else {
            throw .invalidStackCopySize(configuration.stackCopyBytes)
        }
        let fromEnvironment = configuration.source == nil ? try SampleSource.fromEnvironment() : nil
        let requested = configuration.source ?? fromEnvironment
        var baseline = hitch_sampler_stats()
        hitch_sampler_get_stats(&baseline)
        let sourceCode: UInt32 = switch requested {
        case nil: UInt32(HITCH_SAMPLER_SOURCE_AUTOMATIC)
        case .timerSignal: UInt32(HITCH_SAMPLER_SOURCE_SIGNAL)
        case .perfEvent: UInt32(HITCH_SAMPLER_SOURCE_PERF)
        }
        var config = hitch_sampler_config(rate_hz: UInt32(configuration.rateHz),
                                          scope: configuration.threads.isEmpty ? SampledThreads.main.rawValue : configuration.threads.rawValue,
                                          ring_words_log2: 0, stack_copy_bytes: UInt32(configuration.stackCopyBytes),
                                          source: sourceCode, ticks_per_second: TraceClock.ticksPerSecond)
        let result = hitch_sampler_start(&config)
        if result == EBUSY { throw .alreadyRunning }
        #if !os(Linux)
        if result == ENOSYS { throw .unavailableOnThisPlatform }
        #endif
        if result != 0 && requested == .perfEvent { throw .perfEventsRefused(errno: result) }
        if result != 0 { throw .system(operation: "hitch_sampler_start", errno: result) }
        var started = hitch_sampler_stats()
        hitch_sampler_get_stats(&started)
        let source: SampleSource = hitch_sampler_source() == UInt32(HITCH_SAMPLER_SOURCE_PERF) ? .perfEvent : .timerSignal
        let asked = configuration.source != nil ? "the sampler's configuration" : "HITCH_SAMPLER_SOURCE"
        let reason: String = switch (source, requested) {
        case (.perfEvent, .some): "\(asked) asked for perf events"
        case (.perfEvent, nil): "perf_event_open permitted (\(perfEventParanoid.map { "perf_event_paranoid \($0)" } ?? "")): the kernel copies each thread's registers and stack, no signals"
        case (.timerSignal, .some): "\(asked) asked for the timer signal"
        case (.timerSignal, nil): "timer signal: " + describePerfRefusal(started.perf_refusal)
        }
        let sampler = Sampler(configuration: configuration, recorder: recorder, onSample: onSample, baseline: baseline,
                              source: source, sourceReason: reason)
        recorder?.setMetadata(.samplerRateHz, String(configuration.rateHz))
        recorder?.setMetadata(.samplerSource, source.rawValue)
        recorder?.setMetadata(.samplerSourceReason, reason)
        recorder?.setMetadata(.samplerStackCopyBytes, String(configuration.stackCopyBytes))
        let thread = Thread { sampler.drainLoop() }
        thread.name = "hitch-sampler-drain"
        thread.start()
        return sampler
    }

    /// Stops the timers, drains what is left into the trace and returns the session's statistics
    /// (also written to the trace as metadata). Calling it again returns the same figures.
    @discardableResult
    public func stop() -> SamplerStatistics {
        stopped.withLock { result in
            if let result { return result }
            hitch_sampler_stop()
            stopRequested.store(true, ordering: .releasing)
            hitch_sampler_wake_drain() // it may have woken for the stop before it saw the request
            drainFinished.wait()
            var now = hitch_sampler_stats()
            hitch_sampler_get_stats(&now)
            // Only now may another session start: its drain would otherwise pop this one's samples.
            defer { hitch_sampler_finish() }
            var failures = UnwindFailures()
            failures.stackUnknown = now.unwind_stack_unknown - baseline.unwind_stack_unknown
            failures.offCopyEnd = now.unwind_off_copy_end - baseline.unwind_off_copy_end
            failures.modulesChanged = now.unwind_modules_changed - baseline.unwind_modules_changed
            failures.noModule = now.unwind_no_module - baseline.unwind_no_module
            failures.errors = now.unwind_errors - baseline.unwind_errors
            let nsPerTick = 1e9 / Double(TraceClock.ticksPerSecond)
            let statistics = SamplerStatistics(
                source: source,
                samplesTaken: now.samples_taken - baseline.samples_taken,
                samplesDropped: now.samples_dropped - baseline.samples_dropped,
                perfSamplesLost: now.perf_samples_lost - baseline.perf_samples_lost,
                perfFallbackThreads: Int(now.perf_fallback_threads),
                timerOverruns: now.timer_overruns - baseline.timer_overruns,
                samplesUnwound: now.unwound_complete - baseline.unwound_complete + failures.total,
                unwindMemoHits: now.unwind_memo_hits - baseline.unwind_memo_hits,
                unwindFailures: failures,
                samplesDiscarded: now.samples_discarded - baseline.samples_discarded,
                samplesRecorded: samplesRecorded.load(ordering: .relaxed),
                handlerNsP50: Double(hitch_sampler_handler_ticks_percentile(0.5)) * nsPerTick,
                handlerNsP99: Double(hitch_sampler_handler_ticks_percentile(0.99)) * nsPerTick,
                unwindNsP50: Double(hitch_sampler_unwind_ticks_percentile(0.5)) * nsPerTick,
                unwindNsP99: Double(hitch_sampler_unwind_ticks_percentile(0.99)) * nsPerTick,
                stackBytesNeededP99: hitch_sampler_stack_bytes_needed_percentile(0.99),
                drainCPUSeconds: Double(drainCPUNanoseconds.load(ordering: .relaxed)) / 1e9,
                drainWakeups: drainWakeups.load(ordering: .relaxed))
            if let recorder {
                recorder.setMetadata(.samplerSamplesTaken, String(statistics.samplesTaken))
                recorder.setMetadata(.samplerSamplesDropped, String(statistics.samplesDropped))
                recorder.setMetadata(.samplerPerfSamplesLost, String(statistics.perfSamplesLost))
                if statistics.perfFallbackThreads > 0 {
                    recorder.setMetadata(.samplerPerfFallbackThreads, String(statistics.perfFallbackThreads))
                    recorder.setMetadata(.samplerPerfFallbackReason, Self.describePerfRefusal(now.perf_refusal))
                }
                recorder.setMetadata(.samplerTimerOverruns, String(statistics.timerOverruns))
                recorder.setMetadata(.samplerSamplesUnwound, String(statistics.samplesUnwound))
                recorder.setMetadata(.samplerSamplesDiscarded, String(statistics.samplesDiscarded))
                recorder.setMetadata(.samplerUnwindFailures, String(failures.total))
                recorder.setMetadata(.samplerUnwindStackUnknown, String(failures.stackUnknown))
                recorder.setMetadata(.samplerUnwindOffCopyEnd, String(failures.offCopyEnd))
                recorder.setMetadata(.samplerUnwindModulesChanged, String(failures.modulesChanged))
                recorder.setMetadata(.samplerUnwindNoModule, String(failures.noModule))
                recorder.setMetadata(.samplerUnwindErrors, String(failures.errors))
                recorder.setMetadata(.samplerHandlerNsP50, String(Int(statistics.handlerNsP50.rounded())))
                recorder.setMetadata(.samplerHandlerNsP99, String(Int(statistics.handlerNsP99.rounded())))
                recorder.setMetadata(.samplerUnwindNsP50, String(Int(statistics.unwindNsP50.rounded())))
                recorder.setMetadata(.samplerUnwindNsP99, String(Int(statistics.unwindNsP99.rounded())))
                recorder.setMetadata(.samplerStackBytesNeededP99, String(statistics.stackBytesNeededP99))
            }
            result = statistics
            return statistics
        }
    }

    /// Makes the calling thread samplable under `.registered` (now and in later sessions) until it
    /// exits or unregisters; also records its stack bounds (the handler copies no further).
    public static func registerCurrentThread() throws(SamplerError) {
        let result = hitch_sampler_register_current_thread()
        if result != 0 { throw .system(operation: "hitch_sampler_register_current_thread", errno: result) }
    }

    public static func unregisterCurrentThread() { hitch_sampler_unregister_current_thread() }

    private func drainLoop() {
        let frames = UnsafeMutablePointer<UInt64>.allocate(capacity: Int(HITCH_MAX_FRAMES))
        defer { frames.deallocate() }
        var info = hitch_sample_info()
        let intervalNs = Int64(configuration.drainIntervalMs > 0 ? configuration.drainIntervalMs : 100) * 1_000_000
        var lastRescanNs = DispatchTime.now().uptimeNanoseconds
        while true {
            let finishing = stopRequested.load(ordering: .acquiring)
            var drained: UInt64 = 0
            while hitch_sampler_pop(&info, frames, UInt32(HITCH_MAX_FRAMES)) == 1 {
                drained += 1
                guard recorder != nil || onSample != nil else { continue }
                let addresses = Array(UnsafeBufferPointer(start: frames, count: Int(info.depth)))
                let timestamp = TraceTimestamp(ticks: info.timestamp_ticks)
                if let recorder {
                    let stack = recorder.defineStack(addresses: addresses)
                    SymbolDefinitions.define(addresses, in: recorder)
                    recorder.recordSample(threadID: info.tid, timestamp: timestamp, stack: stack)
                }
                onSample?(SampledStack(threadID: info.tid, timestamp: timestamp, addresses: addresses))
            }
            samplesRecorded.add(drained, ordering: .relaxed)
            drainWakeups.add(1, ordering: .relaxed)
            if finishing { break }
            hitch_sampler_wait_for_samples(UInt64(intervalNs))
            let now = DispatchTime.now().uptimeNanoseconds
            if configuration.threads.contains(.all), now - lastRescanNs >= 100_000_000 {
                lastRescanNs = now
                _ = hitch_sampler_rescan_threads()
            }
        }
        var cpu = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        drainCPUNanoseconds.store(UInt64(cpu.tv_sec) * 1_000_000_000 + UInt64(cpu.tv_nsec), ordering: .relaxed)
        drainFinished.signal()
    }
}
