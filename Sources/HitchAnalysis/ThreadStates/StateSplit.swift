import HitchTrace

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

    /// A late start as a cause counts it (docs/METRICS.md "Hitch causes", "Blocked or machine"):
    /// asleep past the last vsync before the thread began (`wokeLateNs` after it) is a timed wait
    /// that woke late, the machine's; asleep before that vsync is a wait for that vsync, which the
    /// thread met on time: not counted.
    func countedAsLateStart(wokeLateNs: Int64) -> StateSplit {
        var split = self
        split.machineNs +|= min(split.blockedNs, max(0, wokeLateNs))
        split.blockedNs = 0
        return split
    }

    /// Takes up to `ns` out of the listed parts, in order; returns what was taken, by part.
    mutating func take(_ ns: Int64, from parts: [WritableKeyPath<StateSplit, Int64>]) -> StateSplit {
        var taken = StateSplit(), left = max(0, ns)
        for part in parts where left > 0 {
            let share = min(left, self[keyPath: part])
            self[keyPath: part] -= share
            taken[keyPath: part] += share
            left -= share
        }
        return taken
    }

    mutating func add(_ other: StateSplit) {
        runningNs +|= other.runningNs
        runnableNs +|= other.runnableNs
        blockedNs +|= other.blockedNs
        machineNs +|= other.machineNs
        unknownNs +|= other.unknownNs
    }

    /// The non-running cause with the most time; ties go to the machine, then waiting, then blocked.
    /// (Whose threads a wait for a CPU was behind is decided at the end of the run, when every
    /// thread's switches are in: `ThreadStatePass`.)
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
    /// How long after the last vsync before it the main thread began: the most of its late start
    /// asleep that counts as a late wake-up.
    var lateStartWokeLateNs: Int64 = .max
    /// The render thread's late start (the first vsync after the commit to its render began) by
    /// state, as recorded (it is inside `render` too, as the cause counts it).
    var renderLateStart: StateSplit? = nil

    static let unknown = FrameStates(main: nil, render: nil)

}
