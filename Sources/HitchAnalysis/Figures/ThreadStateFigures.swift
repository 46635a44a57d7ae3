import HitchTrace

/// Where one thread's time in a window went (docs/METRICS.md "Thread states"); the parts sum to
/// the window's wall time.
public struct ThreadStateSplit: Codable, Sendable, Equatable {
    /// On a CPU (the thread's CPU clock).
    public var runningMs: Double = 0
    /// Runnable, waiting for a CPU (schedstat run delay, or preempted switch-out to switch-in).
    public var runnableMs: Double = 0
    /// Asleep: a lock, I/O, a wait on another thread (voluntary switches, or a not-preempted switch-out).
    public var blockedMs: Double = 0
    /// Neither running, waiting nor asleep by the thread's own counters: the machine took the CPU
    /// (steal in a VM with steal accounting).
    public var machineMs: Double = 0
    /// Not told apart (a counter unavailable on this machine).
    public var unknownMs: Double = 0
    /// The part of `runnableMs` the app's own other threads held the CPU for (docs/METRICS.md
    /// "Hitch causes"): filled for hitching recorded frames and their sums; 0 elsewhere and when the
    /// trace cannot tell (`threadStates.appThreadSplit`).
    public var runnableBehindAppThreadsMs: Double = 0
    public init() {}
}

/// Machine-wide counters over a window (deltas of the `machineState` readings, prorated to the window).
public struct MachineWindow: Codable, Sendable, Equatable {
    /// Steal time summed over CPUs, divided by the online CPUs: the average CPU's stolen time.
    public var stealMs = 0.0
    /// /proc/pressure/cpu "some": time at least one runnable task waited for a CPU.
    public var cpuPressureSomeMs = 0.0
    /// cgroup CPU throttling, divided by the online CPUs.
    public var cgroupThrottledMs = 0.0
    public init() {}
}

/// The trace's thread states as a whole (docs/METRICS.md "Thread states").
public struct ThreadStateFigures: Codable, Sendable, Equatable {
    /// Where the thread states came from (metadata `schedSource`); `none` when unsaid.
    public var source: SchedSource = .none
    /// Why perf was refused or reads were unavailable (metadata `schedSourceReason`).
    public var sourceReason = ""
    /// Recorded frames whose main thread had readings at begin and commit, and those without.
    public var framesWithReadings = 0, framesWithoutReadings = 0
    /// Exact context switches recorded (perf_event_open).
    public var contextSwitches = 0
    /// The main thread's frame windows (begin to commit), summed over every recorded frame with readings.
    public var mainThread = ThreadStateSplit()
    /// ... over the hitching recorded frames only; the render thread's render windows of those frames.
    public var mainThreadInHitches = ThreadStateSplit(), renderThreadInHitches = ThreadStateSplit()
    /// Machine counters over the whole recording (first to last reading), and over the hitching frames.
    public var machine = MachineWindow(), machineInHitches = MachineWindow()
    /// Whether every thread that recorded events had its context switches recorded (metadata
    /// `schedSwitchThreads` = `recording`), so a wait for a CPU can be split into behind the app's
    /// own threads and behind other processes; without it every wait is `waitingForCPU`.
    public var appThreadSplit = false
    /// The app's threads that held the CPU a frame thread waited for, summed over the hitching
    /// recorded frames (most first, top 10).
    public var cpuTakenByAppThreadsInHitches: [NamedDuration] = []
    public init() {}
}
