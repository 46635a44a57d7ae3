import HitchReader
import HitchTrace

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
        var hitchNs: Int64
        var cause: HitchCause
        var queuedBehind: UInt64?
        /// The frame threads' windows (their readings) and the waits for a CPU in them: where the
        /// app's other threads may have held the CPU (`SwitchHistory.cpuTakers`, at the end of the run).
        var mainThread: UInt32, mainWindow: (Int64, Int64), mainRunnableNs: Int64
        var renderThread: UInt32, renderWindow: (Int64, Int64), renderRunnableNs: Int64
    }
    /// Per-hitch figures the attribution is patched with, by (run, frameID).
    fileprivate struct HitchDetail: Sendable {
        var machine: MachineWindow?
        var switches: ThreadStateSplit?
        /// The app's threads on the main and render threads' CPUs while they waited, most first.
        var cpuTakenBy: [NamedDuration] = []
        var mainBehindAppNs: Int64 = 0
        var renderBehindAppNs: Int64 = 0
        /// A wait for a CPU that the app's own threads held for most of it (or the frame queued
        /// behind such a wait): moved from `waitingForCPU` to `waitingForAppThreads`.
        var behindAppThreads = false
        var hitchNs: Int64 = 0
    }

    // Per run.
    private var machine: [MachinePoint] = []
    /// The main threads' switches, as one thread (key 0): only the main role's are kept.
    private var mainSwitches = SwitchHistory(perThread: switchLimit)
    /// Every thread's switches, by thread: who held the CPU a frame thread waited for.
    private var allSwitches = SwitchHistory(perThread: switchLimit / 2)
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
    /// The part of their runnable time the app's other threads held the CPU for (`runnableBehindAppThreadsMs`).
    private var mainBehindAppInHitchesNs: Int64 = 0
    private var renderBehindAppInHitchesNs: Int64 = 0
    private var source: ThreadStateSource?
    private var sourceReason = ""
    private var appThreadSplit = false
    /// The app's threads on the frame threads' CPUs in hitching recorded frames, by name.
    private var cpuTakenInHitches: [String: Int64] = [:]
    /// Offenders of the hitches the app's threads caused by taking the frame threads' CPUs (roots
    /// only, as for app work): each taking thread's on-CPU time inside the waits, by name.
    private var threadOffenders: [String: WeightedHitch] = [:]

    mutating func beginRun(_ context: inout PassContext) {
        run = context.run
        machine.removeAll(keepingCapacity: true)
        mainSwitches.removeAll()
        allSwitches.removeAll()
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
            allSwitches.add(.init(atNs: resolved.startNs, out: s.direction == .switchedOut, preempted: s.preempted, cpu: s.cpu),
                            thread: resolved.thread.rawValue)
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
            let r = frame.hasReadings ? frame.readings : FrameReadings.none
            let mainBegan = r.mainBegan.isPresent ? r.mainBegan : r.beforeCommit
            hitches.append(Hitch(frameID: frame.frameID, mainStart: min(frame.beganNs, judged.commitNs), mainEnd: judged.commitNs,
                                 frameEnd: max(judged.commitNs, judged.renderEndNs), states: states,
                                 hitchNs: judged.hitchNs, cause: judged.cause, queuedBehind: judged.queuedBehind,
                                 mainThread: r.mainThread, mainWindow: (mainBegan.atNs, r.mainCommitted.atNs),
                                 mainRunnableNs: mainBegan.isPresent && r.mainCommitted.isPresent ? judged.mainStates?.runnableNs ?? 0 : 0,
                                 renderThread: r.renderThread, renderWindow: (r.renderBegan.atNs, r.renderEnded.atNs),
                                 renderRunnableNs: r.renderBegan.isPresent && r.renderEnded.isPresent
                                    ? max(0, (judged.renderStates?.runnableNs ?? 0) - (r.renderLateStart?.runnableNs ?? 0)) : 0))
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        takePublished(&context)
        if source == nil, let word = context.runMetadata[MetadataKey.schedSource] {
            source = ThreadStateSource(rawValue: word) ?? ThreadStateSource.none
            sourceReason = context.runMetadata[MetadataKey.schedSourceReason] ?? ""
            appThreadSplit = context.runMetadata[MetadataKey.schedSwitchThreads] == MetadataKey.everyRecordingThread
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
            detail.hitchNs = hitch.hitchNs
            // Who held the CPU while the frame threads waited for one: every thread's switches are in now.
            var taken: [UInt32: Int64] = [:]
            for (thread, window, runnable, isMain) in [(hitch.mainThread, hitch.mainWindow, hitch.mainRunnableNs, true),
                                                        (hitch.renderThread, hitch.renderWindow, hitch.renderRunnableNs, false)] where runnable > 0 {
                var behind: Int64 = 0
                for taker in allSwitches.cpuTakers(thread: thread, from: window.0, to: window.1, runnableNs: runnable) {
                    taken[taker.thread, default: 0] +|= taker.ns
                    behind +|= taker.ns
                }
                if isMain { detail.mainBehindAppNs = min(runnable, behind); mainBehindAppInHitchesNs +|= detail.mainBehindAppNs }
                else { detail.renderBehindAppNs = min(runnable, behind); renderBehindAppInHitchesNs +|= detail.renderBehindAppNs }
            }
            for (thread, ns) in taken { cpuTakenInHitches[context.threadName(thread), default: 0] +|= ns }
            detail.cpuTakenBy = taken.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(5).map { thread, ns in
                var d = NamedDuration(); d.name = context.threadName(thread); d.count = 1; d.ms = milliseconds(ns); return d
            }
            let waited = hitch.mainRunnableNs.addingSaturated(hitch.renderRunnableNs)
            let behind = detail.mainBehindAppNs.addingSaturated(detail.renderBehindAppNs)
            detail.behindAppThreads = hitch.cause == .waitingForCPU && hitch.queuedBehind == nil && behind > waited - behind
            if detail.behindAppThreads {
                for (thread, ns) in taken { threadOffenders[context.threadName(thread), default: WeightedHitch()].add(hitchNs: hitch.hitchNs, part: ns, whole: waited) }
            }
            runDetails[hitch.frameID] = detail
        }
        // A frame queued behind a wait that the app's threads caused carries that cause too.
        for hitch in hitches where hitch.cause == .waitingForCPU {
            if let root = hitch.queuedBehind, runDetails[root]?.behindAppThreads == true { runDetails[hitch.frameID]?.behindAppThreads = true }
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

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
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
        t.mainThreadInHitches.runnableBehindAppThreadsMs = milliseconds(mainBehindAppInHitchesNs)
        t.renderThreadInHitches = renderInHitches.figures
        t.renderThreadInHitches.runnableBehindAppThreadsMs = milliseconds(renderBehindAppInHitchesNs)
        t.machine = machineTotal.figures
        t.machineInHitches = machineInHitches.figures
        t.appThreadSplit = appThreadSplit
        t.cpuTakenByAppThreadsInHitches = cpuTakenInHitches.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(10).map { name, ns in
            var d = NamedDuration(); d.name = name; d.count = 1; d.ms = milliseconds(ns); return d
        }
        a.threadStates = t
        if !appThreadSplit && a.recorded.hitchCount > 0 {
            a.warnings.append("the trace does not record every thread's context switches (metadata schedSwitchThreads): waits for a CPU behind the app's own threads cannot be told from waits behind other processes")
        }
        if hitchesUnknown > 0 {
            a.warnings.append("\(hitchesUnknown) hitching frames had no thread-state readings on the main thread: their cause is unknown")
        }
        for i in a.hitchAttributions.indices {
            guard let detail = details[a.hitchAttributions[i].run]?[a.hitchAttributions[i].frameID] else { continue }
            a.hitchAttributions[i].machine = detail.machine
            a.hitchAttributions[i].mainThreadSwitches = detail.switches
            a.hitchAttributions[i].cpuTakenBy = detail.cpuTakenBy
            a.hitchAttributions[i].mainThreadStates?.runnableBehindAppThreadsMs = milliseconds(detail.mainBehindAppNs)
            a.hitchAttributions[i].renderThreadStates?.runnableBehindAppThreadsMs = milliseconds(detail.renderBehindAppNs)
            if detail.behindAppThreads { a.hitchAttributions[i].cause = .waitingForAppThreads }
        }
        Self.moveWaitsBehindAppThreads(&a, details)
        if !threadOffenders.isEmpty {
            for (name, weight) in threadOffenders {
                var o = Offender(); o.kind = .thread; o.name = name; o.weightedHitchMs = weight.ms; o.onCPUMs = milliseconds(weight.onCPUNs)
                o.hitchingFrames = weight.frames
                a.offenders.append(o)
            }
            a.offenders = Offender.ranked(a.offenders)
        }
    }
}

extension ThreadStatePass {
    /// The recorded hitches judged `waitingForCPU` whose wait the app's own threads held the CPU for
    /// (decided at the end of the run, when every thread's switches are in) move to
    /// `waitingForAppThreads`: in the recorded figures and every rate reported from them, and in `frames[]`.
    fileprivate static func moveWaitsBehindAppThreads(_ a: inout Analysis, _ details: [Int: [UInt64: HitchDetail]]) {
        var movedCount = 0, movedNs: Int64 = 0
        for run in details.values { for detail in run.values where detail.behindAppThreads { movedCount += 1; movedNs +|= detail.hitchNs } }
        for i in a.frames.indices {
            guard let detail = details[a.frames[i].run]?[a.frames[i].frameID] else { continue }
            a.frames[i].mainThreadStates?.runnableBehindAppThreadsMs = milliseconds(detail.mainBehindAppNs)
            if detail.behindAppThreads { a.frames[i].cause = .waitingForAppThreads }
        }
        guard movedCount > 0 else { return }
        func move(_ f: inout HitchFigures) {
            func ns(_ ms: Double) -> Int64 { Int64((ms * 1e6).rounded()) }
            f.byCause.waitingForCPU.hitchCount -= movedCount
            f.byCause.waitingForCPU.totalHitchMs = milliseconds(max(0, ns(f.byCause.waitingForCPU.totalHitchMs) - movedNs))
            f.byCause.waitingForAppThreads.hitchCount += movedCount
            f.byCause.waitingForAppThreads.totalHitchMs = milliseconds(ns(f.byCause.waitingForAppThreads.totalHitchMs).addingSaturated(movedNs))
            for cause in [HitchCause.waitingForCPU, .waitingForAppThreads] {
                f.byCause[cause].hitchTimeRatioMsPerS = f.animatingSeconds > 0 ? f.byCause[cause].totalHitchMs / f.animatingSeconds : 0
            }
            if f.appHitchTimeRatioMsPerS != nil {
                f.appHitchTimeRatioMsPerS = f.byCause.appWork.hitchTimeRatioMsPerS + f.byCause.waitingForAppThreads.hitchTimeRatioMsPerS
            }
        }
        move(&a.recorded)
        for key in a.hitches.keys where a.hitches[key]?.source == .recorded { move(&a.hitches[key]!) }
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
