import CHitchSupport
import Dispatch
import Foundation
import Synchronization

/// Records the process's events (from `Trace`) into an FXT file.
///
/// One recorder is active per process at a time. Every thread's events go to its own buffer;
/// a background writer thread turns them into FXT records: whole buffers as they fill, and every
/// `flushIntervalMs` the committed part of each buffer still being filled (without stopping the
/// thread that fills it), so no event waits longer than that to reach the file. At process exit
/// (`exit`, a return from `main`) the recorder stops itself; on SIGTERM, SIGINT, SIGHUP and the
/// fatal signals it flushes first (docs/FORMAT.md section 5). When the writer cannot keep up and
/// `maxBufferedBytes` is in use, further events are dropped and counted; the count is in the
/// trace as `droppedEvents` events and in the `Summary`.
public final class TraceRecorder: Sendable {
    public struct Configuration: Sendable {
        /// Each recording thread's buffer (the unit handed to the writer).
        public var bufferBytesPerThread: Int
        /// All buffers together: the recorder's memory bound.
        public var maxBufferedBytes: Int
        /// The longest an event waits before it is written to the file (while the writer keeps up).
        public var flushIntervalMs: Int
        /// How long `start` waits for another active recording in the process to stop. 0 (the
        /// default): it fails at once with `TraceRecorderError.alreadyRecording`.
        public var waitForOtherRecordingSeconds: Double
        /// Flush on SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT before the
        /// signal's previous disposition runs (installed once per process, at the first start).
        public var flushOnSignals: Bool
        /// Record what the scheduler did to the threads that make frames: each frame call reads the
        /// calling thread's CPU clock, runnable wait and context switches, the writer reads the
        /// machine's steal, CPU pressure and cgroup throttling every `machineStateIntervalMs`, and
        /// exact context switches come from perf_event_open where the kernel permits it
        /// (docs/FORMAT.md "Thread states"). The environment variable HITCH_THREAD_STATES=0 turns
        /// it off whatever this says.
        public var threadStates: Bool
        public var machineStateIntervalMs: Int
        /// With thread states: also exact context switches from perf_event_open where permitted
        /// (each switch of a recorded thread then costs the kernel a ring record). HITCH_SCHED_PERF=0
        /// turns it off whatever this says.
        public var contextSwitchEvents: Bool
        /// Watch the frame loop's thread for hangs (docs/FORMAT.md "Hangs"): away from its loop for
        /// the threshold, its stack and kernel state are captured into the trace, and the stretch is
        /// written when it comes back. nil turns it off; so does HITCH_HANG_WATCHDOG=0.
        public var hangWatchdog: HangWatchdogConfiguration?
        /// Tests only: read procfs and the cgroup tree under these roots for this session alone
        /// (set once the session slot is held, reset at stop), so a test that fakes a missing
        /// /proc cannot leak into a recording another suite starts in parallel.
        var procfsRootsForTesting: (proc: String, cgroup: String)?

        public init(bufferBytesPerThread: Int = 64 << 10, maxBufferedBytes: Int = 64 << 20,
                    flushIntervalMs: Int = 100, waitForOtherRecordingSeconds: Double = 0, flushOnSignals: Bool = true,
                    threadStates: Bool = true, machineStateIntervalMs: Int = 50, contextSwitchEvents: Bool = true,
                    hangWatchdog: HangWatchdogConfiguration? = HangWatchdogConfiguration()) {
            self.bufferBytesPerThread = bufferBytesPerThread
            self.maxBufferedBytes = maxBufferedBytes
            self.flushIntervalMs = flushIntervalMs
            self.waitForOtherRecordingSeconds = waitForOtherRecordingSeconds
            self.flushOnSignals = flushOnSignals
            self.threadStates = threadStates
            self.machineStateIntervalMs = machineStateIntervalMs
            self.contextSwitchEvents = contextSwitchEvents
            self.hangWatchdog = hangWatchdog
        }

        /// `threadStates` unless the environment turns them off.
        var threadStatesInEffect: Bool {
            threadStates && ProcessInfo.processInfo.environment["HITCH_THREAD_STATES"] != "0"
        }

        var contextSwitchEventsInEffect: Bool {
            contextSwitchEvents && ProcessInfo.processInfo.environment["HITCH_SCHED_PERF"] != "0"
        }

        var hangWatchdogInEffect: HangWatchdogConfiguration? {
            ProcessInfo.processInfo.environment["HITCH_HANG_WATCHDOG"] == "0" ? nil : hangWatchdog
        }
    }

    public struct Summary: Sendable {
        public var path: String
        /// Events written to the file (including metadata, stacks, symbols and samples).
        public var eventCount: UInt64
        /// Events dropped because no buffer was free (also recorded in the trace).
        public var droppedEventCount: UInt64
        public var bytesWritten: UInt64
        public var ticksPerSecond: UInt64
        /// Dynamic names evicted from the bounded table during the recording (also in the trace's
        /// metadata as `dynamicNameEvictions`).
        public var dynamicNameEvictions: UInt64 = 0
        /// CPU time the hang watchdog's thread used (0 when it did not watch): its whole cost but
        /// the two stores per frame on the loop's thread (`hitch bench watchdog`).
        public var hangWatchdogCPUNs: UInt64 = 0
    }

    /// The active recorder, or nil.
    public static var current: TraceRecorder? { activeRecorder.withLock { $0 } }

    public let path: String
    public let configuration: Configuration
    private let state = Locked(State())
    private let writerDone = DispatchSemaphore(value: 0)
    /// The hang watchdog of this session, when it watches (stopped before the writer finishes).
    private let watchdog = Locked<HangWatchdog?>(nil)
    private let droppedBaseline: UInt64

    private struct State {
        var pending: [SideItem] = []
        var stacks: [[UInt64]: StackID] = [:]
        var nextStack: UInt32 = 1
        var summary: Summary?
        var writeErrno: Int32?
        var stopped = false
        /// What ended the recording, for its end-of-recording marker: "stop" or "exit".
        var endedBy = "stop"
    }

    /// Work that is not the hot path: it reaches the writer through a locked queue.
    private enum SideItem: Sendable {
        case metadata(tid: Int32, ticks: UInt64, key: String, value: String)
        case stack(StackID, [UInt64])
        case symbol(address: UInt64, size: UInt64, function: String, image: String, offset: UInt64)
        case sample(tid: Int32, ticks: UInt64, stack: StackID)
        case hang(tid: Int32, begin: UInt64, end: UInt64, source: String)
        case hangStack(tid: Int32, ticks: UInt64, since: UInt64, stack: StackID?, systemCall: String, waitChannel: String, schedState: String)
    }

    /// Starts recording to `path` (created or truncated).
    public static func start(path: String, configuration: Configuration = .init()) throws(TraceRecorderError) -> TraceRecorder {
        let bufferBytes = max(configuration.bufferBytesPerThread, 4096)
        let bufferCount = max(configuration.maxBufferedBytes / bufferBytes, 2)
        let wait = max(configuration.waitForOtherRecordingSeconds, 0)
        guard sessionSlot.wait(timeout: .now() + wait) == .success else {
            throw .alreadyRecording(activePath: activeRecorder.withLock { $0?.path })
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let error = errno
            sessionSlot.signal()
            throw .cannotOpen(path: path, reason: String(cString: strerror(error)))
        }
        let ticksPerSecond = TraceClock.ticksPerSecond
        let recorder = TraceRecorder(path: path, configuration: configuration)
        if let roots = configuration.procfsRootsForTesting { hitch_sched_set_roots(roots.proc, roots.cgroup) }
        // Scheduler readings start before any buffer is handed out: a thread's first buffer of the
        // session opens its context-switch ring (hitch_sched_join_thread).
        let sched = recorder.beginSchedReadings()
        switch hitch_recorder_begin(UInt32(bufferBytes / MemoryLayout<hitch_record>.stride), UInt32(bufferCount)) {
        case 0: break
        case let failure:
            hitch_sched_end()
            if configuration.procfsRootsForTesting != nil { hitch_sched_set_roots(nil, nil) }
            close(fd); sessionSlot.signal()
            if failure == -1 { throw .alreadyRecording(activePath: nil) }
            throw .outOfMemory(bytes: bufferBytes * bufferCount)
        }
        activeRecorder.withLock { $0 = recorder }
        recorder.recordSchedSource(sched)
        recorder.setMetadata(.flushIntervalMs, String(max(configuration.flushIntervalMs, 1)))
        installExitHooks(signals: configuration.flushOnSignals)
        // The file's preamble (magic, clock) is on disk before start returns, so a process killed at
        // any moment after it leaves a readable trace, never an empty file.
        let preambleWritten = DispatchSemaphore(value: 0)
        let thread = Thread { recorder.runWriter(fd: fd, ticksPerSecond: ticksPerSecond, preambleWritten: preambleWritten) }
        thread.name = "hitch-writer"
        thread.start()
        preambleWritten.wait()
        if let configuration = configuration.hangWatchdogInEffect {
            recorder.watchdog.withLock { $0 = HangWatchdog.start(configuration, recorder: recorder) }
        }
        return recorder
    }

    /// At exit, the active recorder stops (and so writes everything) before the process ends.
    private static let exitHookInstalled: Bool = {
        atexit { _ = try? TraceRecorder.current?.finish(endedBy: "exit") }
        return true
    }()

    private static func installExitHooks(signals: Bool) {
        _ = exitHookInstalled
        if signals { _ = hitch_recorder_install_signal_flush() }
    }

    private init(path: String, configuration: Configuration) {
        self.path = path
        self.configuration = configuration
        droppedBaseline = hitch_dropped_total()
    }

    /// Starts the scheduler readings; returns the source used and why perf was refused.
    private func beginSchedReadings() -> (source: Int32, reason: String) {
        var reason = [CChar](repeating: 0, count: 512)
        let source = hitch_sched_begin(configuration.threadStatesInEffect ? 1 : 0,
                                       configuration.contextSwitchEventsInEffect ? 1 : 0, &reason, reason.count)
        return (source, String(decoding: reason.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Which scheduler source this session uses, said in the trace's metadata (`schedSource`,
    /// `schedSourceReason`, and `schedSwitchThreads` when every recording thread has a switch ring).
    private func recordSchedSource(_ sched: (source: Int32, reason: String)) {
        let (started, text) = sched
        let source = SchedSource(started: started)
        setMetadata(.schedSource, source.name)
        if !text.isEmpty { setMetadata(.schedSourceReason, text) }
        // Rings open for every thread that records events (hitch_sched_join_thread): the analysis can
        // tell which of the app's threads held the CPUs while a frame thread waited for one.
        if source == .perfContextSwitch { setMetadata(.schedSwitchThreads, MetadataKey.everyRecordingThread) }
    }

    /// Adds trace-wide key/value metadata (host, cpu, refreshRateHz, peakBandwidthGBps, ...).
    public func setMetadata(_ key: String, _ value: String) {
        let item = SideItem.metadata(tid: hitch_current_tid(), ticks: hitch_now(), key: key, value: value)
        state.withLock { if !$0.stopped { $0.pending.append(item) } }
    }

    /// Adds one of the project's own metadata keys (`MetadataKey`).
    public func setMetadata(_ key: MetadataKey, _ value: String) { setMetadata(key.name, value) }

    /// The id of a call stack (return addresses, innermost first); defined in the trace once.
    public func defineStack(addresses: [UInt64]) -> StackID {
        state.withLock { state in
            if let id = state.stacks[addresses] { return id }
            let id = StackID(rawValue: state.nextStack)
            state.nextStack &+= 1
            state.stacks[addresses] = id
            if !state.stopped { state.pending.append(.stack(id, addresses)) }
            return id
        }
    }

    /// A sampled stack of thread `threadID` (a kernel thread id, `Trace.currentThreadID`).
    public func recordSample(threadID: Int32, timestamp: TraceTimestamp, stack: StackID) {
        state.withLock { if !$0.stopped { $0.pending.append(.sample(tid: threadID, ticks: timestamp.ticks, stack: stack)) } }
    }

    /// A hang of thread `threadID` that ended (the watchdog, or an app's own detector: `source` says which).
    func recordHang(threadID: Int32, from begin: UInt64, to end: UInt64, source: String) {
        state.withLock { if !$0.stopped { $0.pending.append(.hang(tid: threadID, begin: begin, end: end, source: source)) } }
    }

    /// The watchdog's capture of hung thread `threadID` at `ticks` (its hang began at `since`).
    func recordHangStack(threadID: Int32, at ticks: UInt64, since: UInt64, stack: StackID?, systemCall: String, waitChannel: String, schedState: String) {
        state.withLock {
            if !$0.stopped {
                $0.pending.append(.hangStack(tid: threadID, ticks: ticks, since: since, stack: stack, systemCall: systemCall,
                                             waitChannel: waitChannel, schedState: schedState))
            }
        }
    }

    /// Names the function at [address, address + size) of `image` (offset: address within the image).
    public func defineSymbol(address: UInt64, size: UInt64, function: String, image: String, offset: UInt64) {
        state.withLock {
            if !$0.stopped { $0.pending.append(.symbol(address: address, size: size, function: function, image: image, offset: offset)) }
        }
    }

    /// Stops recording, writes everything buffered and the end-of-recording marker, and closes the file.
    @discardableResult
    public func stop() throws(TraceRecorderError) -> Summary { try finish(endedBy: "stop") }

    /// `stop()`, saying in the end-of-recording marker what ended the recording.
    private func finish(endedBy reason: String) throws(TraceRecorderError) -> Summary {
        // The watchdog first: the end of a stretch it reported still goes into the trace.
        let watchdogCPUNs = watchdog.withLock { watchdog in
            defer { watchdog = nil }
            return watchdog?.stop() ?? 0
        }
        let alreadyStopped = state.withLock { state in
            defer { state.stopped = true }
            if !state.stopped { state.endedBy = reason }
            return state.stopped
        }
        if !alreadyStopped {
            hitch_sched_end()
            hitch_recorder_end()
            writerDone.wait()
            hitch_recorder_release()
            if configuration.procfsRootsForTesting != nil { hitch_sched_set_roots(nil, nil) }
            activeRecorder.withLock { $0 = nil }
            sessionSlot.signal()
        } else {
            // Another caller is finishing the stop; its summary appears once the writer is done.
            writerDone.wait()
        }
        // Passed on, on every path (the throwing one too), so any later stop() returns at once.
        writerDone.signal()
        let (summary, writeErrno) = state.withLock { state in
            if watchdogCPUNs > 0 { state.summary?.hangWatchdogCPUNs = watchdogCPUNs }
            return (state.summary, state.writeErrno)
        }
        if let writeErrno { throw .writeFailed(path: path, reason: String(cString: strerror(writeErrno))) }
        return summary!
    }

    // MARK: The writer thread

    private func runWriter(fd: Int32, ticksPerSecond: UInt64, preambleWritten: DispatchSemaphore) {
        hitch_set_current_thread_name("hitch-writer")
        let output = FXTOutput(fd: fd, ownsDescriptor: true)
        let encoder = FXTEncoder(output: output, ticksPerSecond: ticksPerSecond)
        let writer = RawRecordWriter(encoder: encoder)
        // Before start returns (the signal below): the app's names from then on are this recording's.
        let evictionsBaseline = TraceName.dynamicNameEvictions
        // The promise of an end-of-recording marker goes to disk with the preamble: a process killed
        // at any moment after start returns leaves a trace that says it was cut short.
        writer.metadata(tid: writer.selfTid, ticks: hitch_now(), key: MetadataKey.endMarker.name, value: MetadataKey.recordingEnded.name)
        output.flush()
        preambleWritten.signal()
        var lastDropped = droppedBaseline
        var droppedTotal: UInt64 = 0
        let flushIntervalNs = UInt64(max(configuration.flushIntervalMs, 1)) * 1_000_000
        var lastFlushNs = hitch_monotonic_ns()
        // Machine counters are read here, off every frame path: /proc/stat formats a line per CPU.
        let machineIntervalNs = UInt64(max(configuration.machineStateIntervalMs, 1)) * 1_000_000
        let readsMachine = configuration.threadStatesInEffect
        var lastMachineNs: UInt64 = 0
        func readMachine() {
            guard readsMachine else { return }
            var reading = hitch_machine_reading()
            hitch_machine_read(&reading)
            writer.machineState(reading)
            lastMachineNs = hitch_monotonic_ns()
        }
        var endMarked = false
        let switches = UnsafeMutablePointer<hitch_sched_switch>.allocate(capacity: 1024)
        defer { switches.deallocate() }
        var clockPair: (ticks: UInt64, ns: UInt64) = (0, 0)
        hitch_clock_pair(&clockPair.ticks, &clockPair.ns)
        var lostSwitches: UInt64 = 0
        func drainSwitches() {
            while true {
                let count = Int(hitch_sched_drain(switches, 1024, &lostSwitches))
                for index in 0..<count {
                    let change = switches[index]
                    let sinceNs = Int64(bitPattern: change.monotonic_ns &- clockPair.ns)
                    writer.schedSwitch(change, ticks: clockPair.ticks &+ TraceClock.converter.ticks(fromNanoseconds: sinceNs))
                }
                if count < 1024 { return }
            }
        }
        readMachine()

        func recordDrops() {
            let now = hitch_dropped_total()
            guard now > lastDropped else { return }
            droppedTotal += now - lastDropped
            writer.droppedEvents(count: now - lastDropped)
            lastDropped = now
        }
        func drainSideItems() {
            let items = state.withLock { state -> [SideItem] in
                defer { state.pending.removeAll(keepingCapacity: true) }
                return state.pending
            }
            for item in items {
                switch item {
                case let .metadata(tid, ticks, key, value): writer.metadata(tid: tid, ticks: ticks, key: key, value: value)
                case let .stack(id, addresses): encoder.stackDefinition(stack: id.rawValue, addresses: addresses)
                case let .symbol(address, size, function, image, offset):
                    encoder.symbol(address: address, size: size, offset: offset, function: function, image: image)
                case let .sample(tid, ticks, stack): writer.sample(tid: tid, ticks: ticks, stack: stack)
                case let .hang(tid, begin, end, source): writer.hang(tid: tid, begin: begin, end: end, source: source)
                case let .hangStack(tid, ticks, since, stack, systemCall, waitChannel, schedState):
                    writer.hangStack(tid: tid, ticks: ticks, sinceTicks: since, stack: stack, systemCall: systemCall,
                                     waitChannel: waitChannel, schedState: schedState)
                }
            }
        }

        let partials = UnsafeMutablePointer<hitch_partial>.allocate(capacity: RawRecordWriter.partialCapacity)
        defer { partials.deallocate() }

        /// Writes the full buffers waiting in the queue, until it is empty or a flush is due; true if
        /// the session ended and all is written.
        func drainFullBuffers(timeoutMs: Int32, atMost limit: Int = .max) -> Bool {
            var timeout = timeoutMs
            var taken = 0
            while true {
                if limit == .max, timeout == 0, hitch_monotonic_ns() &- lastFlushNs >= flushIntervalNs { return false }
                if taken == limit { return false }
                taken += 1
                var finished: Int32 = 0
                let buffer = hitch_writer_take(timeout, &finished)
                timeout = 0
                // Side items first: a stack defined before an event that uses it precedes it in the file.
                drainSideItems()
                guard let buffer else { return finished != 0 }
                writer.encode(buffer)
                hitch_writer_give_back(buffer)
            }
        }
        /// Writes the committed part of every buffer still being filled. A thread's full buffers
        /// precede its partial one in the file: the partials are taken only when the queue of full
        /// buffers is empty (the C side refuses otherwise), so per-thread order holds.
        func takeCommitted() {
            for _ in 0..<8 {
                var more: Int32 = 0
                let count = hitch_writer_take_committed(partials, UInt32(RawRecordWriter.partialCapacity), &more)
                for index in 0..<Int(count) { writer.encode(partials[index]) }
                if more == 0 { return }
                // Full buffers wait: write a few and try again; under a flood the full buffers
                // carry the data anyway, and the flush below must not wait for the queue to empty.
                if drainFullBuffers(timeoutMs: 0, atMost: 16) { return }
            }
        }

        while true {
            let loopStart = hitch_monotonic_ns()
            let sinceFlush = loopStart &- lastFlushNs
            var waitMs = sinceFlush >= flushIntervalNs ? 0 : Int32(max(1, (flushIntervalNs - sinceFlush) / 1_000_000))
            if readsMachine {
                let sinceMachine = loopStart &- lastMachineNs
                waitMs = min(waitMs, sinceMachine >= machineIntervalNs ? 0 : Int32(max(1, (machineIntervalNs - sinceMachine) / 1_000_000)))
            }
            let finished = drainFullBuffers(timeoutMs: waitMs)
            recordDrops()
            drainSwitches()
            if readsMachine && hitch_monotonic_ns() &- lastMachineNs >= machineIntervalNs { readMachine() }
            if finished { break }
            let flushRequested = hitch_writer_flush_requested() != 0
            let now = hitch_monotonic_ns()
            if flushRequested || now &- lastFlushNs >= flushIntervalNs {
                takeCommitted()
                recordDrops()
                // A terminating signal's flush is the recording's last: mark the end before it goes to disk.
                if flushRequested, !endMarked, let signal = Self.signalNames[hitch_writer_ending_signal()] {
                    writer.metadata(tid: writer.selfTid, ticks: hitch_now(), key: MetadataKey.recordingEnded.name, value: signal)
                    endMarked = true
                }
                output.flush()
                lastFlushNs = now
            }
            if flushRequested { hitch_writer_flush_done() }
        }
        drainSideItems()
        recordDrops()
        drainSwitches()
        hitch_sched_close()
        readMachine()
        if lostSwitches > 0 { writer.metadata(tid: writer.selfTid, ticks: hitch_now(), key: MetadataKey.schedSwitchesLost.name, value: String(lostSwitches)) }
        let evictions = TraceName.dynamicNameEvictions &- evictionsBaseline
        if evictions > 0 { writer.metadata(tid: writer.selfTid, ticks: hitch_now(), key: MetadataKey.dynamicNameEvictions.name, value: String(evictions)) }
        if !endMarked {
            let endedBy = state.withLock { $0.endedBy }
            writer.metadata(tid: writer.selfTid, ticks: hitch_now(), key: MetadataKey.recordingEnded.name, value: endedBy)
        }
        output.flush()
        var summary = Summary(path: path, eventCount: encoder.eventCount, droppedEventCount: droppedTotal,
                              bytesWritten: output.bytesFlushed, ticksPerSecond: ticksPerSecond)
        summary.dynamicNameEvictions = evictions
        state.withLock {
            $0.summary = summary
            $0.writeErrno = output.writeErrno
        }
        writerDone.signal()
    }
}

public enum TraceRecorderError: Error, CustomStringConvertible, Sendable {
    /// Another recording is active in this process (`activePath`, when known).
    case alreadyRecording(activePath: String?)
    case cannotOpen(path: String, reason: String)
    case outOfMemory(bytes: Int)
    case writeFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case let .alreadyRecording(activePath):
            "a trace recording\(activePath.map { " to '\($0)'" } ?? "") is already active in this process: stop it first, "
                + "or set Configuration.waitForOtherRecordingSeconds to wait for it"
        case let .cannotOpen(path, reason): "cannot create trace file '\(path)': \(reason)"
        case let .outOfMemory(bytes): "cannot reserve \(bytes) bytes of trace buffers"
        case let .writeFailed(path, reason): "writing trace file '\(path)' failed: \(reason); the file is cut short"
        }
    }
}

extension SchedSource {
    /// The source hitch_sched_begin says it started (0 none, 1 procfs, 2 perf context switches).
    init(started source: Int32) {
        switch source {
        case 1: self = .procfs
        case 2: self = .perfContextSwitch
        default: self = .none
        }
    }
}

extension TraceRecorder {
    /// The signals whose flush ends a recording (`hitch_writer_ending_signal`), by number.
    fileprivate static let signalNames: [Int32: String] = [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP"]
}

private let activeRecorder = Locked<TraceRecorder?>(nil)

/// One recording session per process at a time (the hot path's buffers are process-wide).
private let sessionSlot = DispatchSemaphore(value: 1)
