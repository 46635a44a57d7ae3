import HitchTrace

// Thread states and hitch causes (docs/METRICS.md "Thread states", "Hitch causes").
//
// The recorder reads each frame-making thread's scheduler counters at the frame's phases (CPU clock,
// schedstat run delay, voluntary and involuntary switches). Differencing two readings of the same
// thread splits the wall time between them into running, runnable, blocked, machine and unknown
// (`StateSplit.between`). FramePass keeps the readings with the frame they belong to, so every judged
// frame, recorded or replayed, carries its split, and `HitchCauseRule` classifies each hitch with one
// counterfactual: the same frame doing only its on-CPU work. This file's pass adds what needs the
// whole run: machine counters over each hitch, exact context switches, the trace-level summary.

/// One thread's counters at one frame phase, compact (-1 = unavailable; `atNs == .min` = no reading).
struct PhaseReading: Sendable, Equatable {
    var atNs: Int64 = .min
    var cpuNs: Int64 = 0
    var runnableWaitNs: Int64 = -1
    var voluntarySwitches: Int64 = -1
    var involuntarySwitches: Int64 = -1

    init() {}

    init(atNs: Int64, _ r: ThreadStateReading) {
        self.atNs = atNs
        cpuNs = r.cpuNs
        runnableWaitNs = r.runnableWaitNs.map { max(0, $0) } ?? -1
        voluntarySwitches = r.voluntarySwitches.map { max(0, $0) } ?? -1
        involuntarySwitches = r.involuntarySwitches.map { max(0, $0) } ?? -1
    }

    var isPresent: Bool { atNs != .min }
}

/// A frame's readings: the main thread's at begin and commit, the render thread's around its render.
struct FrameReadings: Sendable {
    /// No reading at any phase.
    static let none = FrameReadings()

    var mainBegan = PhaseReading()
    var mainCommitted = PhaseReading()
    /// The waiting and stolen parts of the frame's late starts (`ReadingHistory.lateStart`): the
    /// main thread's from the vsync to its begin, the render thread's from the first vsync after
    /// the commit to its render began. Filled when the frame is judged.
    var mainLateStart: StateSplit? = nil
    var renderLateStart: StateSplit? = nil
    /// The threads the main and render readings came from.
    var mainThread: UInt32 = .max
    var renderThread: UInt32 = .max
    /// The committing thread's reading before its commit reading: the frame's begin when the
    /// recorder took none for it (`FrameMarker` takes one reading per mark, which ends one frame
    /// and begins the next).
    var beforeCommit = PhaseReading()
    var renderBegan = PhaseReading()
    var renderEnded = PhaseReading()

    mutating func set(_ phase: ThreadStateReading.Phase, _ reading: PhaseReading) {
        switch phase {
        case .frameBegan: mainBegan = reading
        case .committed: mainCommitted = reading
        case .renderBegan: renderBegan = reading
        case .renderEnded: renderEnded = reading
        case .presented: break   // after the frame's work: not part of a window the analysis splits
        }
    }

    /// The main thread's split from its begin reading, else from its reading before the commit
    /// when that was taken no earlier than the frame began (never across idle time between frames).
    func main(beganNs: Int64, switches: SwitchHistory) -> StateSplit? {
        if mainBegan.isPresent { return StateSplit.between(mainBegan, mainCommitted, thread: mainThread, switches: switches) }
        guard beforeCommit.isPresent, beforeCommit.atNs >= beganNs else { return nil }
        return StateSplit.between(beforeCommit, mainCommitted, thread: mainThread, switches: switches)
    }
    /// The render thread's split of its render. The judged render duration runs from the first
    /// vsync after the commit, so a render that began later adds the runnable and stolen part of
    /// that late start (a render thread busy or waiting for a CPU before it could begin).
    func render(switches: SwitchHistory) -> StateSplit? {
        guard var split = StateSplit.between(renderBegan, renderEnded, thread: renderThread, switches: switches) else { return nil }
        if let late = renderLateStart { split.add(late) }
        return split
    }

}

/// Where one thread's time in a window went, in integer ns (sums are order independent).
struct StateSplit: Sendable, Equatable {
    var runningNs: Int64 = 0
    var runnableNs: Int64 = 0
    var blockedNs: Int64 = 0
    var machineNs: Int64 = 0
    var unknownNs: Int64 = 0

    var wallNs: Int64 { runningNs.addingSaturated(notRunningNs) }
    /// Everything but running: what the counterfactual frame leaves out.
    var notRunningNs: Int64 { runnableNs.addingSaturated(blockedNs).addingSaturated(machineNs).addingSaturated(unknownNs) }

    /// The split of the wall time between two readings of one thread (docs/METRICS.md "Thread states"):
    /// - running = the CPU clock's advance;
    /// - runnable = the schedstat run delay's advance (a thread waiting on a run queue);
    /// - the rest, with a voluntary switch in the window, is blocked (the thread went to sleep);
    ///   with no voluntary switch it is machine time: the thread neither ran, waited nor slept by its
    ///   own counters, which in a VM with steal accounting is the time stolen while it held the CPU
    ///   (its CPU clock excludes steal);
    /// - without the run delay (no schedstat file) but with the thread's switches recorded, runnable
    ///   and blocked are the window's time after preempting and other switch-outs of `thread`
    ///   (`SwitchHistory.outTime`; a wait after a wake-up is then blocked), the rest machine time; when the
    ///   window's switch records fall short of its switch counts (records lost), or
    ///   without switches kept, the rest is machine time only when the thread did not switch at
    ///   all, else unknown; without the switch counts it is unknown.
    /// Each part is clamped to what the window has left (readings are taken a few µs apart).
    static func between(_ a: PhaseReading, _ b: PhaseReading, thread: UInt32 = .max,
                        switches: SwitchHistory = SwitchHistory()) -> StateSplit? {
        guard a.isPresent, b.isPresent, b.atNs >= a.atNs else { return nil }
        var split = StateSplit()
        var rest = b.atNs - a.atNs
        split.runningNs = min(max(0, b.cpuNs.subtractingSaturated(a.cpuNs)), rest)
        rest -= split.runningNs
        let hasSwitches = a.voluntarySwitches >= 0 && b.voluntarySwitches >= 0 && a.involuntarySwitches >= 0 && b.involuntarySwitches >= 0
        let slept = hasSwitches && b.voluntarySwitches > a.voluntarySwitches
        let switched = hasSwitches && (slept || b.involuntarySwitches > a.involuntarySwitches)
        if a.runnableWaitNs >= 0 && b.runnableWaitNs >= 0 {
            split.runnableNs = min(max(0, b.runnableWaitNs - a.runnableWaitNs), rest)
            rest -= split.runnableNs
            if !hasSwitches { split.unknownNs = rest }
            else if slept { split.blockedNs = rest }
            else { split.machineNs = rest }
        } else if hasSwitches && !switched {
            split.machineNs = rest
        } else if hasSwitches, let out = switches.outTime(thread: thread, from: a.atNs, to: b.atNs,
                                                         expectedOuts: b.voluntarySwitches - a.voluntarySwitches + b.involuntarySwitches - a.involuntarySwitches) {
            split.runnableNs = min(max(0, out.runnableNs), rest)
            rest -= split.runnableNs
            split.blockedNs = min(max(0, out.blockedNs), rest)
            split.machineNs = rest - split.blockedNs
        } else {
            split.unknownNs = rest
        }
        return split
    }

    mutating func add(_ other: StateSplit) {
        runningNs +|= other.runningNs
        runnableNs +|= other.runnableNs
        blockedNs +|= other.blockedNs
        machineNs +|= other.machineNs
        unknownNs +|= other.unknownNs
    }

    /// The non-running cause with the most time; ties go to the machine, then waiting, then blocked.
    var largestNotRunning: HitchCause {
        var cause = HitchCause.machineStall, most = machineNs
        if runnableNs > most { cause = .waitingForCPU; most = runnableNs }
        if blockedNs > most { cause = .blocked; most = blockedNs }
        if unknownNs > most { cause = .unknown; most = unknownNs }
        return cause
    }

    var figures: ThreadStateSplit {
        var s = ThreadStateSplit()
        s.runningMs = milliseconds(runningNs)
        s.runnableMs = milliseconds(runnableNs)
        s.blockedMs = milliseconds(blockedNs)
        s.machineMs = milliseconds(machineNs)
        s.unknownMs = milliseconds(unknownNs)
        return s
    }
}

/// A judged frame's thread states: the main thread's frame work and the render thread's render.
struct FrameStates: Sendable, Equatable {
    var main: StateSplit?
    var render: StateSplit?
    /// A recorded frame that began after its vsync: the part of that late start the main thread
    /// spent runnable or stolen (its wake-up waited for a CPU), from its readings before the frame.
    /// Not in replayed frames: the replay starts each frame on its own grid.
    var lateStart: StateSplit? = nil

    static let unknown = FrameStates(main: nil, render: nil)

}

/// Each frame thread's recent readings in its own order (file order is per-thread order, so the
/// same in any interleaving of threads): the thread's state over any recent interval.
struct ReadingHistory: Sendable {
    /// Enough for a thread's buffer to reach the file a few thousand frames ahead of the frames
    /// being judged (3 readings a frame), like `FrameAssembler.window`.
    static let perThread = 12_288
    static let threads = 16
    private var rings: [UInt32: Ring<PhaseReading>] = [:]

    mutating func removeAll() { rings.removeAll(keepingCapacity: true) }

    /// Adds a reading; returns the thread's previous one.
    mutating func add(_ reading: PhaseReading, thread: UInt32) -> PhaseReading? {
        if rings[thread] == nil {
            guard rings.count < Self.threads else { return nil }
            rings[thread] = Ring(capacity: Self.perThread)
        }
        var previous: PhaseReading?
        rings[thread]?.forEachNewestFirst { previous = $0; return false }
        rings[thread]?.append(reading)
        return previous
    }

    /// The time not running of `thread` in [start, end), from each pair of consecutive readings
    /// overlapping it: a pair's runnable time, then its stolen time, then its time asleep are taken
    /// as lying at its end, up to the overlap (a thread that slept, woke and waited for a CPU waits
    /// last, and slept before that). Nil when the readings kept do not reach back to `start`, or
    /// there was no such time.
    func lateStart(thread: UInt32, from start: Int64, to end: Int64, switches: SwitchHistory) -> StateSplit? {
        guard end > start, let ring = rings[thread] else { return nil }
        var result = StateSplit(), later: PhaseReading? = nil, covered = false
        ring.forEachNewestFirst { earlier in
            defer { later = earlier }
            guard let later else { return true }
            if later.atNs <= start { return false }
            if earlier.atNs <= start { covered = true }
            let overlap = min(end, later.atNs) - max(start, earlier.atNs)
            let span = later.atNs - earlier.atNs
            guard overlap > 0, span > 0, let split = StateSplit.between(earlier, later, thread: thread, switches: switches) else { return !covered }
            let runnable = min(overlap, split.runnableNs)
            result.runnableNs +|= runnable
            let machine = min(overlap - runnable, split.machineNs)
            result.machineNs +|= machine
            // Asleep past the vsync (a wake-up timer the host fired late, a lock): not on-CPU work,
            // so the counterfactual frame does not keep it. The pair's running time may all lie
            // after the wake-up (work before the frame began), so only what is left beyond it counts.
            result.blockedNs +|= max(0, min(overlap - runnable - machine - split.runningNs, split.blockedNs))
            return !covered
        }
        return covered && result.notRunningNs > 0 ? result : nil
    }
}

/// Classifies one hitch (docs/METRICS.md "Hitch causes"). The counterfactual frame starts when the
/// frame started and does only its on-CPU work: its commit moves earlier by the main thread's time
/// not running, its render shrinks by the render thread's. Where that saves whole periods, the
/// frame would have been shown that much earlier; if it would still hitch, the hitch is the app's
/// work. Otherwise the hitch is the largest part of the time not running: the machine, waiting for
/// a CPU, blocked, or unknown. The same rule judges recorded frames and replayed ones (at a replayed
/// rate a frame's work is the recorded wall time, waits included, so the waits are removed the same way).
enum HitchCauseRule {
    /// A recorded frame: the counterfactual moves its commit and render earlier in place (the
    /// recorded timeline's later frames are what was recorded).
    static func cause(hitchNs: Int64, periodNs: Int64, anchorNs: Int64, commitNs: Int64,
                      renderNs: Int64, states: FrameStates) -> HitchCause {
        guard hitchNs > 0, periodNs > 0, let main = states.main else { return .unknown }
        let renderStart = vsyncAtOrAfter(commitNs, anchor: anchorNs, period: periodNs)
        let counterfactualCommit = commitNs.subtractingSaturated(main.notRunningNs).subtractingSaturated(states.lateStart?.notRunningNs ?? 0)
        let counterfactualStart = vsyncAtOrAfter(counterfactualCommit, anchor: anchorNs, period: periodNs)
        let renderNotRunning = states.render?.notRunningNs ?? 0
        func periods(_ ns: Int64) -> Int64 { max(1, (max(0, ns) + periodNs - 1) / periodNs) }
        let savedNs = (renderStart - counterfactualStart).addingSaturated((periods(renderNs) - periods(renderNs - renderNotRunning)) * periodNs)
        return cause(hitchNs: hitchNs, counterfactualHitchNs: hitchNs - savedNs, states: states)
    }

    /// App work when the counterfactual frame still hitches; otherwise the largest part of the time
    /// not running (ties: machine, waiting, blocked, unknown).
    static func cause(hitchNs: Int64, counterfactualHitchNs: Int64, states: FrameStates) -> HitchCause {
        guard hitchNs > 0, let main = states.main else { return .unknown }
        if counterfactualHitchNs > 0 { return .appWork }
        var notRunning = main
        if let render = states.render { notRunning.add(render) }
        if let lateStart = states.lateStart { notRunning.add(lateStart) }
        return notRunning.largestNotRunning
    }
}

/// Leaf functions that mean a sample caught its thread asleep in the kernel (the sampler's timer
/// runs on wall time): a poll, a futex wait, a blocking read, a sleep. One list, used by the hitch
/// attribution to count such samples as blocked time, never as a hot function.
enum BlockingCalls {
    static let names: Set<String> = [
        "poll", "__poll", "ppoll", "__ppoll", "__GI___poll", "__GI_ppoll", "select", "__select", "pselect", "pselect6",
        "epoll_wait", "epoll_pwait", "epoll_pwait2", "__epoll_wait",
        "futex", "futex_wait", "__futex_abstimed_wait_common", "__futex_abstimed_wait_common64",
        "__futex_abstimed_wait_cancelable64", "do_futex_wait", "__lll_lock_wait", "__lll_lock_wait_private",
        "pthread_cond_wait", "__pthread_cond_wait", "pthread_cond_timedwait", "__pthread_cond_timedwait",
        "pthread_cond_clockwait", "__pthread_clockjoin_ex", "pthread_join", "__pthread_join",
        "sem_wait", "__new_sem_wait", "__new_sem_wait_slow64", "__new_sem_wait_slow", "sem_timedwait", "sem_clockwait",
        "read", "__read", "__libc_read", "__read_nocancel", "pread", "pread64", "__libc_pread", "__pread64",
        "recv", "__libc_recv", "recvfrom", "__libc_recvfrom", "recvmsg", "__libc_recvmsg", "accept", "accept4",
        "nanosleep", "__nanosleep", "clock_nanosleep", "__clock_nanosleep", "__GI___clock_nanosleep", "usleep", "sleep",
        "wait4", "waitpid", "__waitpid", "waitid", "pause", "sigsuspend", "sigwaitinfo", "sigtimedwait", "__sigtimedwait",
        "fsync", "fdatasync", "msgrcv", "flock",
    ]

    /// `symbol` without a symbol version (`pthread_cond_wait@@GLIBC_2.3.2`) names a blocking call.
    static func isBlocking(_ symbol: String) -> Bool {
        if let at = symbol.firstIndex(of: "@") { return names.contains(String(symbol[..<at])) }
        return names.contains(symbol)
    }
}

/// Cumulative machine counters at one time (-1 = unavailable).
private struct MachinePoint: Sendable {
    var atNs: Int64
    var stealNs: Int64
    var pressureUs: Int64
    var throttledUs: Int64
    var cpus: Int64
}

/// The pass: machine readings over each hitch and the run, exact context switches of the main
/// thread, and the trace-level summary. Per-frame splits and causes come with the judged frames.
struct ThreadStatePass: AnalysisPass {
    static var reads: PayloadKinds { [.threadState, .machineState, .schedSwitch, .publishedFrames] }
    /// Bounds for a hostile trace: machine readings and switches kept per run, hitches kept per run.
    static let machineLimit = 1 << 20
    static let switchLimit = 1 << 21
    static let hitchLimit = 1 << 16

    private struct Hitch: Sendable {
        var frameID: UInt64
        var mainStart: Int64, mainEnd: Int64
        var frameEnd: Int64
        var states: FrameStates
    }
    /// Per-hitch figures the attribution is patched with, by (run, frameID).
    private struct HitchDetail: Sendable {
        var machine: MachineWindow?
        var switches: ThreadStateSplit?
    }

    // Per run.
    private var machine: [MachinePoint] = []
    /// The main threads' switches, as one thread (key 0): only the main role's are kept.
    private var mainSwitches = SwitchHistory(perThread: switchLimit)
    private var hitches: [Hitch] = []
    private var run = 0

    // Over every run.
    private var readings = 0
    private var contextSwitches = 0
    private var details: [Int: [UInt64: HitchDetail]] = [:]
    private var machineTotal = MachineAccumulator()
    private var machineInHitches = MachineAccumulator()
    private var mainInHitches = StateSplit()
    private var renderInHitches = StateSplit()
    private var source: ThreadStateSource?
    private var sourceReason = ""

    mutating func beginRun(_ context: inout PassContext) {
        run = context.run
        machine.removeAll(keepingCapacity: true)
        mainSwitches.removeAll()
        hitches.removeAll(keepingCapacity: true)
    }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        switch event.payload {
        case .threadState:
            readings += 1
        case .machineState(let m):
            guard machine.count < Self.machineLimit else { break }
            machine.append(MachinePoint(atNs: resolved.startNs, stealNs: m.stealNs ?? -1, pressureUs: m.cpuPressureSomeUs ?? -1,
                                        throttledUs: m.cgroupThrottledUs ?? -1, cpus: Int64(max(1, m.onlineCPUs))))
        case .schedSwitch(let s):
            contextSwitches += 1
            if resolved.role == .main {
                mainSwitches.add(.init(atNs: resolved.startNs, out: s.direction == .switchedOut, preempted: s.preempted), thread: 0)
            }
        default:
            break
        }
    }

    mutating func takePublished(_ context: inout PassContext) {
        for (frame, judged) in context.judgedFrames where hitches.count < Self.hitchLimit {
            let states = FrameStates(main: judged.mainStates, render: judged.renderStates)
            hitches.append(Hitch(frameID: frame.frameID, mainStart: min(frame.beganNs, judged.commitNs), mainEnd: judged.commitNs,
                                 frameEnd: max(judged.commitNs, judged.renderEndNs), states: states))
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        takePublished(&context)
        if source == nil, let word = context.runMetadata[MetadataKey.schedSource] {
            source = ThreadStateSource(rawValue: word) ?? ThreadStateSource.none
            sourceReason = context.runMetadata[MetadataKey.schedSourceReason] ?? ""
        }
        // File order is per-thread order only: sort by time (ties keep the file order: a stable sort).
        machine = machine.enumerated().sorted { ($0.element.atNs, $0.offset) < ($1.element.atNs, $1.offset) }.map(\.element)
        if let first = machine.first, let last = machine.last { machineTotal.add(window(first.atNs, last.atNs)) }
        var runDetails: [UInt64: HitchDetail] = [:]
        for hitch in hitches {
            if let main = hitch.states.main { mainInHitches.add(main) }
            if let render = hitch.states.render { renderInHitches.add(render) }
            var detail = HitchDetail()
            if machine.count >= 2 {
                let w = window(hitch.mainStart, hitch.frameEnd)
                machineInHitches.add(w)
                detail.machine = w.figures
            }
            detail.switches = switchSplit(hitch.mainStart, hitch.mainEnd)
            runDetails[hitch.frameID] = detail
        }
        details[run] = runDetails
    }

    /// Machine counters over [start, end): each reading interval's deltas prorated by its overlap.
    private func window(_ start: Int64, _ end: Int64) -> MachineAccumulator {
        var w = MachineAccumulator()
        guard end > start, machine.count >= 2 else { return w }
        // First interval that may overlap: binary search on the readings' times.
        var low = 0, high = machine.count - 1
        while low < high { let mid = (low + high) / 2; if machine[mid + 1].atNs <= start { low = mid + 1 } else { high = mid } }
        var i = max(0, low)
        while i + 1 < machine.count, machine[i].atNs < end {
            let a = machine[i], b = machine[i + 1]
            let span = b.atNs - a.atNs
            let overlap = min(end, b.atNs) - max(start, a.atNs)
            if span > 0 && overlap > 0 {
                func share(_ delta: Int64) -> Int64 {
                    Int64(truncatingIfNeeded: span.dividingFullWidth(overlap.multipliedFullWidth(by: max(0, delta))).quotient)
                }
                let cpus = max(1, b.cpus)
                if a.stealNs >= 0 && b.stealNs >= 0 { w.stealNs +|= share(b.stealNs - a.stealNs) / cpus }
                if a.pressureUs >= 0 && b.pressureUs >= 0 { w.pressureNs +|= share(b.pressureUs - a.pressureUs).multipliedSaturated(by: 1000) }
                if a.throttledUs >= 0 && b.throttledUs >= 0 { w.throttledNs +|= share(b.throttledUs - a.throttledUs).multipliedSaturated(by: 1000) / cpus }
            }
            i += 1
        }
        return w
    }

    /// The main thread's window split by exact switches: time switched out after a preempting
    /// switch-out is runnable, after any other switch-out blocked, the rest running. Nil without switches.
    private func switchSplit(_ start: Int64, _ end: Int64) -> ThreadStateSplit? {
        guard end > start, !mainSwitches.isEmpty,
              let out = mainSwitches.outTime(thread: 0, from: start, to: end, expectedOuts: 0) else { return nil }
        var split = StateSplit()
        split.runnableNs = out.runnableNs
        split.blockedNs = out.blockedNs
        split.runningNs = max(0, (end - start) - split.runnableNs - split.blockedNs)
        return split.figures
    }

    func contribute(to a: inout Analysis, _ context: PassContext) {
        let withReadings = a.recorded.framesWithThreadStates
        let hitchesUnknown = a.recorded.byCause.unknown.hitchCount
        guard readings > 0 || contextSwitches > 0 || source != nil else {
            if a.recorded.hitchCount > 0 {
                a.warnings.append("the trace has no thread-state records (an older trace or an import): the cause of every hitch is unknown")
            }
            return
        }
        var t = ThreadStateFigures()
        t.source = source ?? (readings > 0 ? .procfs : .none)
        t.sourceReason = sourceReason
        t.framesWithReadings = withReadings
        t.framesWithoutReadings = max(0, a.recorded.frameCount - withReadings)
        t.contextSwitches = contextSwitches
        t.mainThread = a.threadStates?.mainThread ?? ThreadStateSplit()
        t.mainThreadInHitches = mainInHitches.figures
        t.renderThreadInHitches = renderInHitches.figures
        t.machine = machineTotal.figures
        t.machineInHitches = machineInHitches.figures
        a.threadStates = t
        if hitchesUnknown > 0 {
            a.warnings.append("\(hitchesUnknown) hitching frames had no thread-state readings on the main thread: their cause is unknown")
        }
        for i in a.hitchAttributions.indices {
            guard let detail = details[a.hitchAttributions[i].run]?[a.hitchAttributions[i].frameID] else { continue }
            a.hitchAttributions[i].machine = detail.machine
            a.hitchAttributions[i].mainThreadSwitches = detail.switches
        }
    }
}

/// Machine counter deltas, in integer ns (order independent).
struct MachineAccumulator: Sendable {
    var stealNs: Int64 = 0
    var pressureNs: Int64 = 0
    var throttledNs: Int64 = 0

    mutating func add(_ other: MachineAccumulator) {
        stealNs +|= other.stealNs
        pressureNs +|= other.pressureNs
        throttledNs +|= other.throttledNs
    }

    var figures: MachineWindow {
        var m = MachineWindow()
        m.stealMs = milliseconds(stealNs)
        m.cpuPressureSomeMs = milliseconds(pressureNs)
        m.cgroupThrottledMs = milliseconds(throttledNs)
        return m
    }
}

/// Each recorded thread's exact context switches (perf source), kept sorted by time per thread
/// whatever the file order: the writer drains them after the fact, so they reach the file after
/// other events of the same time. Where a thread's readings lack the schedstat run delay (no
/// schedstat file), a window's runnable and blocked time come from here (`outTime`).
struct SwitchHistory: Sendable {
    struct Switch: Sendable, Equatable {
        var atNs: Int64
        var out: Bool
        var preempted: Bool
    }
    /// A reading is stamped just before its counters are read: a switch this soon after a window's
    /// end reading may already be in that reading's switch counts.
    static let readSlackNs: Int64 = 50_000
    static let threads = 16
    /// Switches kept per thread: the oldest half goes when full.
    let perThread: Int
    private var threads: [UInt32: [Switch]] = [:]

    init(perThread: Int = 1 << 16) { self.perThread = perThread }

    var isEmpty: Bool { threads.isEmpty }
    mutating func removeAll() { threads.removeAll(keepingCapacity: true) }

    mutating func add(_ s: Switch, thread: UInt32) {
        if threads[thread] == nil {
            guard threads.count < Self.threads else { return }
            threads[thread] = []
        }
        // Per-thread records arrive in time order: appending is the common case.
        if let last = threads[thread]!.last, s.atNs < last.atNs {
            let at = Self.firstIndex(threads[thread]!, atOrAfter: s.atNs)
            threads[thread]!.insert(s, at: at)
        } else {
            threads[thread]!.append(s)
        }
        // Bounded: the oldest go (frames are judged a bounded number of frames behind).
        if threads[thread]!.count > perThread { threads[thread]!.removeFirst(perThread / 2) }
    }

    private static func firstIndex(_ list: [Switch], atOrAfter t: Int64) -> Int {
        var low = 0, high = list.count
        while low < high { let mid = (low + high) / 2; if list[mid].atNs < t { low = mid + 1 } else { high = mid } }
        return low
    }

    /// Switch-outs of `thread` in [start, end + readSlackNs): at least `expectedOuts` (the readings' switch
    /// count over the window) means every switch of the window is in.
    func isComplete(thread: UInt32, from start: Int64, to end: Int64, expectedOuts: Int64) -> Bool {
        guard expectedOuts > 0 else { return true }
        guard let list = threads[thread] else { return false }
        var outs: Int64 = 0, i = Self.firstIndex(list, atOrAfter: start)
        let limit = end.addingSaturated(Self.readSlackNs)
        while i < list.count, list[i].atNs < limit, outs < expectedOuts { if list[i].out { outs += 1 }; i += 1 }
        return outs >= expectedOuts
    }

    /// The time `thread` spent switched out in [start, end): after a preempting switch-out runnable
    /// (it waited on a run queue until its next switch-in), after any other switch-out blocked.
    /// A thread switched out before `start` counts from `start`. Nil when the window's switches are
    /// not all in (fewer switch-outs than `expectedOuts`: records lost or not drained).
    func outTime(thread: UInt32, from start: Int64, to end: Int64, expectedOuts: Int64) -> (runnableNs: Int64, blockedNs: Int64)? {
        guard end > start else { return (0, 0) }
        guard isComplete(thread: thread, from: start, to: end, expectedOuts: expectedOuts) else { return nil }
        guard let list = threads[thread] else { return (0, 0) }
        let low = Self.firstIndex(list, atOrAfter: start)
        var outSince: Int64? = nil, preempted = false
        if low > 0, list[low - 1].out { outSince = start; preempted = list[low - 1].preempted }
        var runnable: Int64 = 0, blocked: Int64 = 0
        func close(_ t: Int64) {
            guard let since = outSince else { return }
            if preempted { runnable +|= t - since } else { blocked +|= t - since }
            outSince = nil
        }
        var i = low
        while i < list.count, list[i].atNs < end {
            let s = list[i]
            if s.out { if outSince == nil { outSince = s.atNs; preempted = s.preempted } } else { close(s.atNs) }
            i += 1
        }
        close(end)
        return (runnable, blocked)
    }
}
