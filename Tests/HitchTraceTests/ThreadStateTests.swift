import CHitchSupport
import Dispatch
import Foundation
import Synchronization
import Testing
import HitchReader
@testable import HitchTrace

/// Thread-state recording (docs/FORMAT.md "Thread states"): real readings on the threads that make
/// frames, on this machine, with wide bounds.
@Suite(.serialized) struct ThreadStateTests {
    /// CPU time of the calling thread.
    static func threadCPUNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Spins until the calling thread has run `ns` more on a CPU (work, not wall time).
    static func burnCPU(ns: Int64) {
        let end = threadCPUNs() + ns
        var x: UInt64 = 1
        while threadCPUNs() < end { for _ in 0..<1000 { x = x &* 6364136223846793005 &+ 1 } }
        if x == 0 { print("") }
    }

    /// Frame 1 begun and committed on a new thread named `name` (its readings at both phases).
    static func beginAndCommitOneFrame(onThread name: String) {
        onThread(name) {
            let now = Trace.now()
            Trace.frameBegan(frameID: 1, vsync: now, target: now, periodNs: 8_333_333)
            Trace.frameCommitted(frameID: 1)
        }
    }

    /// Runs `body` on a new named thread and waits for it.
    static func onThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread { Trace.setCurrentThreadName(name); body(); done.signal() }
        thread.start()
        done.wait()
    }

    struct Reading { var t: Int64; var r: ThreadStateReading }

    static func readings(_ events: [TraceEvent], _ reader: TraceReader, thread name: String) -> [Reading] {
        events.compactMap { event in
            guard case let .threadState(r) = event.payload, reader.threadName(event.thread) == name else { return nil }
            return Reading(t: event.timestampNs, r: r)
        }.sorted { $0.t < $1.t }
    }

    @Test func framesCarryTheirThreadsReadings() async { await #expect(processExitsWith: .success) { try Self.framesCarryTheirThreadsReadingsRecorded() } }

    static func framesCarryTheirThreadsReadingsRecorded() throws {
        let (path, recorder) = try startRecording("thread-states")
        defer { unlink(path) }
        Self.onThread("ts-main") {
            let period: Int64 = 16_666_667
            for frame in UInt64(1)...4 {
                let now = Trace.now()
                Trace.frameBegan(frameID: frame, vsync: now, target: now.advanced(byNanoseconds: period), periodNs: period)
                switch frame {
                case 1: Self.burnCPU(ns: 20_000_000)        // a busy frame
                case 2: usleep(20_000)                       // a sleeping frame
                default: break
                }
                Trace.frameCommitted(frameID: frame)
            }
        }
        Self.onThread("ts-render") {
            for frame in UInt64(1)...4 {
                Trace.frameRenderBegan(frameID: frame)
                Trace.frameRenderEnded(frameID: frame)
                Trace.framePresented(frameID: frame, at: Trace.now())
            }
        }
        Self.onThread("ts-present") {
            // A render thread that does not mark render begins: its presents carry readings.
            Trace.frameRenderEnded(frameID: 1)
            Trace.framePresented(frameID: 1, at: Trace.now())
        }
        try recorder.stop()
        let (events, reader) = try readAll(path)
        #expect(reader.warnings.isEmpty, "\(reader.warnings)")
        #expect(Self.readings(events, reader, thread: "ts-present").map(\.r.phase) == [.renderEnded, .presented])
        let source = reader.metadata["schedSource"]
        #expect(source == "procfs" || source == "perf-context-switch", "schedSource \(String(describing: source)) \(reader.metadata["schedSourceReason"] ?? "")")

        let main = Self.readings(events, reader, thread: "ts-main")
        #expect(main.map(\.r.phase) == Array(repeating: [FramePhase.frameBegan, .committed], count: 4).flatMap { $0 })
        let render = Self.readings(events, reader, thread: "ts-render")
        // A thread that marks render begins gets no reading at present (its render is bracketed).
        #expect(render.map(\.r.phase) == Array(repeating: [FramePhase.renderBegan, .renderEnded], count: 4).flatMap { $0 })
        for thread in [main, render] {
            for (a, b) in zip(thread, thread.dropFirst()) {
                #expect(a.r.cpuNs <= b.r.cpuNs)
                #expect((a.r.runnableWaitNs ?? 0) <= (b.r.runnableWaitNs ?? 0))
                #expect((a.r.voluntarySwitches ?? 0) <= (b.r.voluntarySwitches ?? 0))
                #expect((a.r.involuntarySwitches ?? 0) <= (b.r.involuntarySwitches ?? 0))
            }
            #expect(thread.allSatisfy { $0.r.runnableWaitNs != nil && $0.r.voluntarySwitches != nil && $0.r.involuntarySwitches != nil })
        }
        guard main.count == 8 else { return }
        // The busy frame: 20 ms of CPU inside it, never more CPU than wall time, and the rest of its
        // wall time mostly runnable (on a loaded machine), not asleep.
        let busyWall = main[1].t - main[0].t, busyCPU = main[1].r.cpuNs - main[0].r.cpuNs
        let busyWait = (main[1].r.runnableWaitNs ?? 0) - (main[0].r.runnableWaitNs ?? 0)
        #expect(busyCPU >= 19_000_000 && busyCPU <= busyWall + 1_000_000, "cpu \(busyCPU) wall \(busyWall)")
        #expect(Double(busyCPU + busyWait) >= 0.5 * Double(busyWall), "cpu \(busyCPU) wait \(busyWait) wall \(busyWall)")
        #expect((main[1].r.voluntarySwitches ?? 0) - (main[0].r.voluntarySwitches ?? 0) <= 1)
        // The sleeping frame: at least one voluntary switch, little CPU.
        let sleepCPU = main[3].r.cpuNs - main[2].r.cpuNs
        #expect((main[3].r.voluntarySwitches ?? 0) - (main[2].r.voluntarySwitches ?? 0) >= 1)
        #expect(sleepCPU < 5_000_000, "cpu \(sleepCPU)")
        #expect(main[3].t - main[2].t >= 19_000_000)

        let machine = events.compactMap { event -> MachineStateReading? in
            if case let .machineState(m) = event.payload { return m } else { return nil }
        }
        #expect(!machine.isEmpty)
        #expect(machine.allSatisfy { $0.onlineCPUs > 0 })
        #expect(machine.allSatisfy { $0.stealNs != nil })   // /proc/stat exists here
        #expect(zip(machine, machine.dropFirst()).allSatisfy { ($0.stealNs ?? 0) <= ($1.stealNs ?? 0) })

        if source == "perf-context-switch" {
            // The sleeping frame switched the main thread out (asleep, not preempted) and back in.
            let mainThread = events.first { reader.threadName($0.thread) == "ts-main" }?.thread
            let switches = events.filter { $0.thread == mainThread && $0.timestampNs > main[2].t && $0.timestampNs < main[3].t }
                .compactMap { event -> SchedSwitch? in if case let .schedSwitch(s) = event.payload { return s } else { return nil } }
            #expect(switches.contains { $0.direction == .switchedOut && !$0.preempted }, "\(switches)")
            #expect(switches.contains { $0.direction == .switchedIn })
        }
    }

    /// The calling thread's getrusage switch counts (voluntary, involuntary), by a direct read.
    static func switchCounts() -> (voluntary: Int64, involuntary: Int64) {
        var reading = hitch_thread_reading()
        hitch_thread_read(&reading)
        return (Int64(reading.voluntary_switches), Int64(reading.involuntary_switches))
    }

    /// With its perf ring a thread counts its switches from its own switch records (docs/FORMAT.md
    /// "Thread states"): the counts agree with the switch records the trace carries and with
    /// getrusage, also across a window with more switches than the ring can vouch for (counted
    /// again by getrusage).
    @Test func withContextSwitchEventsTheCountsAreTheSwitchRecords() async { await #expect(processExitsWith: .success) { try Self.withContextSwitchEventsTheCountsAreTheSwitchRecordsRecorded() } }

    static func withContextSwitchEventsTheCountsAreTheSwitchRecordsRecorded() throws {
        let (path, recorder) = try startRecording("thread-states-ring")
        defer { unlink(path) }
        let usage = Mutex<[(voluntary: Int64, involuntary: Int64)]>([])
        Self.onThread("ts-ring") {
            let now = Trace.now()
            // getrusage brackets the first and the last reading: a preemption between a bracket
            // and its reading (the first one opens the ring) counts in one and not the other.
            for frame in UInt64(1)...40 {
                if frame == 1 { usage.withLock { $0.append(Self.switchCounts()) } }
                Trace.frameBegan(frameID: frame, vsync: now, target: now, periodNs: 8_333_333)
                if frame == 1 { usage.withLock { $0.append(Self.switchCounts()) } }
                usleep(200)
                Trace.frameCommitted(frameID: frame)
            }
            Trace.frameBegan(frameID: 41, vsync: now, target: now, periodNs: 8_333_333)
            // 3000 sleeps: 6000 switch records, more than the 16-page ring holds.
            for _ in 0..<3000 { usleep(1) }
            usage.withLock { $0.append(Self.switchCounts()) }
            Trace.frameCommitted(frameID: 41)
            usage.withLock { $0.append(Self.switchCounts()) }
        }
        try recorder.stop()
        let (events, reader) = try readAll(path)
        let readings = Self.readings(events, reader, thread: "ts-ring")
        try #require(readings.count == 82, "\(readings.count) readings, \(reader.droppedEventCount) dropped, threads \(reader.threads.map(\.name)), warnings \(reader.warnings.prefix(3))")
        #expect(readings.allSatisfy { $0.r.voluntarySwitches != nil && $0.r.involuntarySwitches != nil && $0.r.runnableWaitNs != nil })
        // The 200 µs frames slept once each, nearly all of them: a sleep whose timer fires before the
        // thread reaches the scheduler does not switch, and on a VM the host can hold the vCPU that
        // long (CI saw one such frame in 40). Of the 3000 1 µs sleeps most switch; the run delay
        // never went back.
        let sleptPerFrame = (0..<41).map { frame in
            readings[2 * frame + 1].r.voluntarySwitches! - readings[2 * frame].r.voluntarySwitches!
        }
        let framesThatSlept = sleptPerFrame.prefix(40).filter { $0 >= 1 }.count
        #expect(framesThatSlept >= 36, "switches per frame \(sleptPerFrame)")
        #expect(sleptPerFrame[40] >= 2500, "switches per frame \(sleptPerFrame)")
        #expect(zip(readings, readings.dropFirst()).allSatisfy { $0.r.runnableWaitNs! <= $1.r.runnableWaitNs! })
        let brackets = usage.withLock { $0 }
        try #require(brackets.count == 4)
        let first = readings[0].r, last = readings[81].r
        // The switches between the two readings lie between the fewest and the most getrusage allows for the two
        // bracketed readings, ±2 for a switch the two class apart (sched_state.c).
        let betweenReadings = (voluntary: last.voluntarySwitches! - first.voluntarySwitches!,
                       involuntary: last.involuntarySwitches! - first.involuntarySwitches!)
        let fewest = (voluntary: brackets[2].voluntary - brackets[1].voluntary, involuntary: brackets[2].involuntary - brackets[1].involuntary)
        let most = (voluntary: brackets[3].voluntary - brackets[0].voluntary, involuntary: brackets[3].involuntary - brackets[0].involuntary)
        #expect(fewest.voluntary - 2 <= betweenReadings.voluntary && betweenReadings.voluntary <= most.voluntary + 2,
                "readings \(first) \(last), getrusage brackets \(brackets)")
        #expect(fewest.involuntary - 2 <= betweenReadings.involuntary && betweenReadings.involuntary <= most.involuntary + 2,
                "readings \(first) \(last), getrusage brackets \(brackets)")
        guard reader.metadata["schedSource"] == "perf-context-switch" else { return }
        // Over the 40 frames (whose switches the ring vouched for), the counts are the switch-out
        // records; ±2 for a switch that lands between a reading's timestamp and its count.
        let thread = events.first { reader.threadName($0.thread) == "ts-ring" }?.thread
        let start = readings[0].t, end = readings[79].t
        var asleep: Int64 = 0, preempted: Int64 = 0
        for event in events where event.thread == thread && event.timestampNs > start && event.timestampNs <= end {
            guard case let .schedSwitch(s) = event.payload, s.direction == .switchedOut else { continue }
            if s.preempted { preempted += 1 } else { asleep += 1 }
        }
        let counted = readings[79].r
        #expect(abs(counted.voluntarySwitches! - first.voluntarySwitches! - asleep) <= 2, "records \(asleep) asleep")
        #expect(abs(counted.involuntarySwitches! - first.involuntarySwitches! - preempted) <= 2, "records \(preempted) preempted")
        #expect(asleep >= Int64(framesThatSlept))
    }

    /// Sessions that stop while a frame thread keeps taking readings: every stop closes the thread's
    /// ring while it counts in it now and then, and its readings after the close fall back on
    /// getrusage. (The writer unmaps a ring only once its thread is out of it; the window where that
    /// matters is a few ns wide, so this exercises the path rather than proving the wait.)
    @Test func sessionsStopWhileAThreadKeepsReading() async { await #expect(processExitsWith: .success) { try Self.sessionsStopWhileAThreadKeepsReadingRecorded() } }

    static func sessionsStopWhileAThreadKeepsReadingRecorded() throws {
        let path = temporaryTracePath("thread-states-stop")
        defer { unlink(path) }
        let stop = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread {
            var frame: UInt64 = 1
            while !stop.load(ordering: .relaxed) {
                let now = Trace.now()
                Trace.frameBegan(frameID: frame, vsync: now, target: now, periodNs: 8_333_333)
                if frame % 8 == 0 { usleep(50) }
                Trace.frameCommitted(frameID: frame)
                frame += 1
            }
            done.signal()
        }.start()
        // The thread may not run inside one 5 ms session on a loaded machine: some session has readings.
        var sessionsWithReadings = 0
        for _ in 0..<20 {
            let recorder = try TraceRecorder.start(path: path, configuration: .init(flushIntervalMs: 5))
            usleep(5_000)
            try recorder.stop()
            let (events, _) = try readAll(path)
            if events.contains(where: { $0.payload.kindName == "threadState" }) { sessionsWithReadings += 1 }
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        #expect(sessionsWithReadings > 0)
    }

    @Test func missingProcfsGivesNilReadingsNotErrors() async { await #expect(processExitsWith: .success) { try Self.missingProcfsGivesNilReadingsNotErrorsRecorded() } }

    static func missingProcfsGivesNilReadingsNotErrorsRecorded() throws {
        let path = temporaryTracePath("thread-states-missing")
        defer { unlink(path) }
        var configuration = TraceRecorder.Configuration()
        configuration.procfsRootsForTesting = ("/nonexistent-proc", "/nonexistent-cgroup")
        let recorder = try TraceRecorder.start(path: path, configuration: configuration)
        Self.beginAndCommitOneFrame(onThread: "ts-noproc")
        try recorder.stop()
        let (events, reader) = try readAll(path)
        let readings = Self.readings(events, reader, thread: "ts-noproc")
        #expect(readings.count == 2)
        #expect(readings.allSatisfy { $0.r.runnableWaitNs == nil && $0.r.cpuNs > 0 && $0.r.voluntarySwitches != nil })
        let machine = events.compactMap { event -> MachineStateReading? in
            if case let .machineState(m) = event.payload { return m } else { return nil }
        }
        #expect(!machine.isEmpty)
        #expect(machine.allSatisfy { $0.stealNs == nil && $0.cpuPressureSomeUs == nil && $0.cgroupThrottledUs == nil && $0.onlineCPUs > 0 })
        #expect(reader.metadata["schedSourceReason"]?.contains("/nonexistent-proc") == true, "\(reader.metadata)")
    }

    @Test func threadStatesOffRecordsNone() async { await #expect(processExitsWith: .success) { try Self.threadStatesOffRecordsNoneRecorded() } }

    static func threadStatesOffRecordsNoneRecorded() throws {
        let (path, recorder) = try startRecording("thread-states-off", configuration: .init(threadStates: false))
        defer { unlink(path) }
        Self.beginAndCommitOneFrame(onThread: "ts-off")
        try recorder.stop()
        let (events, reader) = try readAll(path)
        #expect(!events.contains { ["threadState", "machineState", "schedSwitch"].contains($0.payload.kindName) })
        #expect(reader.metadata["schedSource"] == "none")
    }

    /// A context switch record that names both threads (another producer's, e.g. a Fuchsia system
    /// trace) reads as the outgoing thread's switch out, then the incoming thread's switch in, both
    /// on the record's CPU.
    @Test func contextSwitchRecordNamingBothThreadsReadsAsTwoSwitches() throws {
        let path = temporaryTracePath("context-switch")
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0)
        let output = FXTOutput(fd: fd, ownsDescriptor: true)
        let encoder = FXTEncoder(output: output, ticksPerSecond: 1_000_000_000)
        let a = encoder.threadRef(pid: 7, tid: 70, name: "a"), b = encoder.threadRef(pid: 7, tid: 71, name: "b")
        let p = output.reserve(2)
        p[0] = FXT.RecordType.scheduling.rawValue | 2 << 4 | 1 << 16 | FXT.ThreadState.running << 24
            | UInt64(a) << 28 | UInt64(b) << 36
        p[1] = 500
        output.commit(2)
        encoder.contextSwitch(cpu: 1, ticks: 600, thread: a, direction: .switchedIn, preempted: false)
        output.flush()
        let (events, reader) = try readAll(path)
        #expect(reader.warnings.isEmpty, "\(reader.warnings)")
        let described = events.map { "\($0.timestampNs)@\(reader.threadName($0.thread)) \($0.payload)" }
        #expect(described == [
            "500@a schedSwitch(HitchReader.SchedSwitch(direction: HitchTrace.SwitchDirection.switchedOut, preempted: true, cpu: 1))",
            "500@b schedSwitch(HitchReader.SchedSwitch(direction: HitchTrace.SwitchDirection.switchedIn, preempted: false, cpu: 1))",
            "600@a schedSwitch(HitchReader.SchedSwitch(direction: HitchTrace.SwitchDirection.switchedIn, preempted: false, cpu: 1))",
        ])
    }
}
