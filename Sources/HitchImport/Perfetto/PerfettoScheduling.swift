import HitchReader
import HitchTrace

/// Scheduling from ftrace (`sched_switch`, `sched_waking` and their `compact_sched` forms): the app's
/// threads' context switches, with their CPU, and every thread's transitions (`SchedAccounting`),
/// from which frames get thread-state readings at their phases.
final class PerfettoScheduling {
    private let sink: ImportSink, processes: PerfettoProcesses, slices: PerfettoSlices

    init(sink: ImportSink, processes: PerfettoProcesses, slices: PerfettoSlices) {
        (self.sink, self.processes, self.slices) = (sink, processes, slices)
    }

    /// Every thread's transitions, for the thread-state readings at frame phases.
    private var accounting = SchedAccounting()
    /// The thread each CPU last switched in (compact_sched names only the incoming thread).
    private var cpuRunning: [UInt16: Int64] = [:]
    private(set) var sawSched = false
    private var sawWaking = false
    /// The newest scheduling event's time: frames are held until it passes their end by
    /// `schedSlackNs`, so their threads' transitions (one ftrace bundle per CPU) are in.
    private(set) var schedNewestNs = Int64.min
    static let schedSlackNs: Int64 = 1_000_000_000
    private var wroteSchedMetadata = false

    /// `compact_sched`: sched_switch and sched_waking as parallel packed arrays, timestamps as
    /// deltas, read side by side without copying them. A compact switch names only the incoming
    /// thread: the outgoing one is the CPU's previous incoming thread (unknown for a CPU's first
    /// switch in the trace).
    func compactSched(_ message: ProtoReader, cpu: UInt16) throws(ProtoError) {
        var reader = message
        var packed: [UInt32: Range<Int>] = [:]
        while let field = try reader.next() {
            guard [1, 2, 3, 7, 8].contains(field.number) else { continue }
            guard case .bytes(let range) = field.value, packed[field.number] == nil else {
                sink.skip("compact_sched arrays not packed in one run"); continue
            }
            packed[field.number] = range
        }
        func run(_ number: UInt32) -> ProtoReader { message.message(packed[number] ?? 0..<0) }
        var times = run(1), states = run(2), nextPids = run(3)
        var time: UInt64 = 0
        while let delta = try times.nextPacked() {
            guard let state = try states.nextPacked(), let nextPid = try nextPids.nextPacked() else {
                sink.skip("compact_sched switches with arrays of unequal lengths"); break
            }
            time &+= delta
            let next = Int64(Int32(truncatingIfNeeded: nextPid))
            let previous = cpu == SchedSwitch.unknownCPU ? nil : cpuRunning[cpu]
            if cpu != SchedSwitch.unknownCPU { cpuRunning[cpu] = next }
            switched(from: previous, state: Int64(bitPattern: state), to: next, cpu: cpu, at: Int64(bitPattern: time))
        }
        var wakingTimes = run(7), wakingPids = run(8)
        time = 0
        while let delta = try wakingTimes.nextPacked() {
            guard let pid = try wakingPids.nextPacked() else { sink.skip("compact_sched wakings with arrays of unequal lengths"); break }
            time &+= delta
            wake(Int64(Int32(truncatingIfNeeded: pid)), at: Int64(bitPattern: time))
        }
    }

    /// An ftrace `sched_switch` event on `cpu`.
    func contextSwitch(_ message: ProtoReader, cpu: UInt16, at timestamp: Int64) throws(ProtoError) {
        var reader = message
        var previous: Int64 = 0, next: Int64 = 0, previousState: Int64 = -1
        while let f = try reader.next() {
            switch f.number {
            case 2: previous = f.int64
            case 4: previousState = f.int64
            case 6: next = f.int64
            default: break
            }
        }
        if cpu != SchedSwitch.unknownCPU { cpuRunning[cpu] = next }
        switched(from: previous, state: previousState, to: next, cpu: cpu, at: timestamp)
    }

    /// An ftrace `sched_wakeup` or `sched_waking` event.
    func waking(_ message: ProtoReader, at timestamp: Int64) throws(ProtoError) {
        var fields = message
        while let f = try fields.next() { if f.number == 2 { wake(f.int64, at: timestamp) } }
    }

    /// `prev_state` of a switch-out: runnable (TASK_RUNNING 0, with the preemption mark 0x100 of
    /// Linux 4.14 and later or 0x800 before) means preempted; anything else went to sleep.
    static func preempted(_ state: Int64) -> Bool { state >= 0 && state & ~0x900 == 0 }

    private func switched(from previous: Int64?, state: Int64, to next: Int64, cpu: UInt16, at timestamp: Int64) {
        sawSched = true
        schedNewestNs = max(schedNewestNs, timestamp)
        if let previous, previous > 0 {
            let preempted = Self.preempted(state)
            let app = processes.isAppThread(previous)
            accounting.add(preempted ? .switchOutPreempted : .switchOutAsleep, thread: previous, atNs: timestamp, isAppThread: app)
            // The app's threads (known from their first FrameTimeline packet on, or `--process`):
            // the rest of the device's threads stay out of the trace.
            if app {
                sink.emit(TraceEvent(timestampNs: timestamp, thread: processes.thread(previous),
                                     payload: .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: preempted, cpu: cpu))))
            }
        }
        if next > 0 {
            let app = processes.isAppThread(next)
            accounting.add(.switchIn, thread: next, atNs: timestamp, isAppThread: app)
            if app {
                sink.emit(TraceEvent(timestampNs: timestamp, thread: processes.thread(next),
                                     payload: .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: cpu))))
            }
        }
    }

    private func wake(_ tid: Int64, at timestamp: Int64) {
        guard tid > 0 else { return }
        sawWaking = true
        schedNewestNs = max(schedNewestNs, timestamp)
        accounting.add(.waking, thread: tid, atNs: timestamp, isAppThread: processes.isAppThread(tid))
    }

    /// A thread-state reading of `tid` at `atNs` from its transitions (nil where they do not reach).
    /// The run delay is given only where the trace has wake-ups: without them the wait after a
    /// wake-up cannot be told from the sleep before it, and the analysis splits from the switches.
    private func reading(_ tid: Int64, at atNs: Int64, frameID: UInt64, phase: FramePhase) -> ThreadStateReading? {
        guard let c = accounting.counters(thread: tid, atNs: atNs) else { return nil }
        return ThreadStateReading(frameID: frameID, phase: phase, cpuNs: c.cpuNs, runnableWaitNs: sawWaking ? c.runnableNs : nil,
                                  voluntarySwitches: c.voluntary, involuntarySwitches: c.involuntary)
    }

    /// Thread-state readings for the frame `token` of the app `pid`: the main thread's at the frame's
    /// vsync and at its `Choreographer#doFrame` end (the hand-over to the RenderThread), the
    /// RenderThread's at its `DrawFrame` begin and end. Returns the RenderThread when its readings
    /// were written. Nothing without sched data, the frame's doFrame slice, or transitions covering it.
    func threadStates(pid: Int64, token: Int64, frameID: UInt64, vsync: Int64, handOver: Int64, main: ThreadID) -> ThreadID? {
        guard sawSched else { return nil }
        guard let frame = slices.frameSlices(pid: pid, token: token), frame.mainTid == pid,
              let mainEnd = frame.mainEnd, mainEnd >= vsync, mainEnd <= handOver else {
            sink.skip("thread states of frames without a Choreographer#doFrame slice on the main thread")
            return nil
        }
        guard let began = reading(pid, at: vsync, frameID: frameID, phase: .frameBegan),
              let committed = reading(pid, at: mainEnd, frameID: frameID, phase: .committed) else {
            sink.skip("thread states of frames whose main thread has no sched_switch before them")
            return nil
        }
        if !wroteSchedMetadata {
            wroteSchedMetadata = true
            sink.metadata(.schedSource, SchedSource.ftrace.name, thread: main, timestampNs: vsync)
            // Every thread of the one app imported has its switches in the trace (ftrace sees them all).
            sink.metadata(.schedSwitchThreads, MetadataKey.everyRecordingThread, thread: main, timestampNs: vsync)
        }
        sink.emit(TraceEvent(timestampNs: vsync, thread: main, payload: .threadState(began)))
        sink.emit(TraceEvent(timestampNs: mainEnd, thread: main, payload: .threadState(committed)))
        guard frame.renderTid > 0, let renderBegin = frame.renderBegin, let renderEnd = frame.renderEnd,
              renderBegin >= mainEnd, renderEnd >= renderBegin, renderEnd <= handOver,
              let renderBegan = reading(frame.renderTid, at: renderBegin, frameID: frameID, phase: .renderBegan),
              let renderEnded = reading(frame.renderTid, at: renderEnd, frameID: frameID, phase: .renderEnded) else {
            sink.skip("RenderThread states of frames without its DrawFrame slice or sched_switch (main thread states only)")
            return nil
        }
        let render = processes.thread(frame.renderTid, pid: pid)
        sink.emit(TraceEvent(timestampNs: renderBegin, thread: render, payload: .threadState(renderBegan)))
        sink.emit(TraceEvent(timestampNs: renderEnd, thread: render, payload: .threadState(renderEnded)))
        return render
    }

    /// What the trace ends with.
    func finish() {
        if accounting.skippedTransitions > 0 { sink.skip("sched transitions beyond the threads or history kept", count: accounting.skippedTransitions) }
    }
}
