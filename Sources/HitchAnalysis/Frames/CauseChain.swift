import HitchTrace

// Hitch causes over the whole recorded timeline (docs/METRICS.md "Hitch causes").
//
// A frame may be late for its own sake, or because an earlier frame was late and still held what
// this one needed: the main thread (its late start), a slot the main thread waited for inside its
// frame (a swap chain's back-pressure: asleep until an earlier render ended or an earlier frame was
// shown), the render thread, or the display. Android's FrameTimeline calls the second buffer
// stuffing. Every frame waits for earlier ones in a pipeline with few frames in flight, so a wait
// says nothing by itself; what matters is whether the earlier frame's lateness made this one miss.
//
// So each frame is replayed once more, in the timeline where the frames before it were on time:
// the frame keeps its own work and its own waits, and only the part of a wait that an earlier
// frame's late release held (from when that release was due on time to when it came) goes. A frame
// that is on time there was queued behind the frame whose late release held it: it carries the
// cause of that frame's root, and names it. Otherwise it is judged by its own thread states: app
// work when its on-CPU work alone misses the deadline, else the largest part of its time not running.

/// One recorded frame as the chain reads it.
struct ChainFrame: Sendable {
    var frameID: UInt64
    var vsyncNs: Int64
    var periodNs: Int64
    var beganNs: Int64
    var commitNs: Int64
    /// When the render thread began this frame's render (its renderBegan reading), else .min.
    var renderBeganNs: Int64
    var renderEndNs: Int64
    var expectedNs: Int64
    var actualNs: Int64
    /// The recorded present time (.min: none; the actual present is then judged from the render end).
    var presentNs: Int64 = .min
    var hitchNs: Int64
    /// Lateness minus hitch, at least 0: the triple-buffering allowance the recorded frame was judged with.
    var allowanceNs: Int64
    /// The judged render duration (from the first vsync after the commit).
    var renderNs: Int64
    var states: FrameStates
    /// The main thread's sleeps inside its frame (begin to commit) from its switch records; nil
    /// without complete records (then the window's blocked time stands for them).
    var mainSleeps: [(startNs: Int64, endNs: Int64)]? = nil
    /// The main thread's time asleep from the vsync to its begin (before the app's usual phase is
    /// taken out of its late start).
    var lateStartAsleepNs: Int64 = 0
    /// How long the main thread may have waited for a CPU after a wake-up in its late start and in
    /// its frame, and the render thread in its render's late start (`FrameReadings.wokenWaitNs`):
    /// how long after the release it waited for a woken thread may have begun running. Nil: its
    /// whole run delay there.
    var wokenWaitNs: (mainLateStart: Int64?, main: Int64?, renderLateStart: Int64?) = (nil, nil, nil)
    /// The threads that made its commit (the main thread) and its render's end (the render thread),
    /// where its readings name them: a later frame's wait may have ended when they ran again.
    var releasers: (commit: UInt32, renderEnd: UInt32)? = nil
}

/// What the chain decided for one frame.
struct ChainVerdict: Sendable, Equatable {
    var cause: HitchCause
    /// The earlier frame whose lateness made this one late (nil: late for its own sake, or on time).
    var queuedBehind: UInt64?
    /// The part of a hitching frame's shown time not running that earlier late frames held (nil: none).
    var heldByEarlierFrames: StateSplit? = nil
    /// How much later than its pipeline allowed a hitching frame was shown (0: not later).
    var latePresentNs: Int64 = 0
}

struct CauseChain: Sendable {
    /// The recent frames' releases, as recorded and as they would have been had every frame before
    /// them been on time (and, for a frame late for its own sake, had it been on time itself).
    private struct Releases: Sendable {
        var commitNs: Int64, commitOnTimeNs: Int64
        var renderEndNs: Int64, renderEndOnTimeNs: Int64
        var actualNs: Int64, actualOnTimeNs: Int64
        /// The recorded present (the clock read after the wait for the display), else the actual present.
        var presentNs: Int64
        var expectedNs: Int64
        /// The frame whose lateness moved these releases, and its cause (nil: none did).
        var root: UInt64?
        var rootCause: HitchCause
        var frameID: UInt64
        var releasers: (commit: UInt32, renderEnd: UInt32)? = nil

        /// When `release` came, and when it was due had the earlier frames been on time.
        func release(_ release: Release) -> (atNs: Int64, dueNs: Int64) {
            switch release {
            case .commit: (commitNs, commitOnTimeNs)
            case .renderEnd: (renderEndNs, renderEndOnTimeNs)
            case .present: (presentNs, presentNs - (actualNs - actualOnTimeNs))
            }
        }

        /// The thread that made `release`, where known.
        func releaser(_ release: Release) -> UInt32? {
            switch release {
            case .commit: releasers?.commit
            case .renderEnd: releasers?.renderEnd
            case .present: nil
            }
        }
    }
    /// How soon after the release it waited for a woken thread runs, beyond its recorded wait for a
    /// CPU (a wake-up takes tens of µs).
    static let wakeNs: Int64 = 1_000_000
    /// Enough for the frames a pipeline keeps in flight.
    private static let recentLimit = 8
    private var recent: [Releases] = []
    /// How much later than the pipeline's first chance the app shows its frames by design (a loop
    /// that presents a period after it renders): from the last frame shown on time.
    private var presentDelayNs: Int64 = 0
    /// How long after its vsync the app's main thread usually sleeps before it begins a frame: the
    /// least among the last 8 frames shown on time (a display link that calls the app a little
    /// after the vsync, by design). That much of a frame's late start asleep is the app's phase,
    /// not a late wake-up (`FramePass`), and its on-CPU work alone starts after it.
    private(set) var usualPhaseNs: Int64 = 0
    private var onTimeBegins = [Int64](repeating: 0, count: 8)
    private var onTimeBeginCount = 0
    /// When the last frame shown on time committed, ended its render and was shown, after its vsync.
    private var onTimeOffsets: (commitNs: Int64, renderEndNs: Int64, actualNs: Int64)? = nil
    /// Whether the app renders on the vsync grid, as the last frame that could tell showed it.
    private var toldRendersOnGrid: Bool? = nil

    /// Whether `f` rendered on the grid: a render that began (without a renderBegan reading: ended)
    /// before the first vsync after the commit was rendered at once; one that began at or after it
    /// waited for that vsync, unless the commit came within a quarter period of it. A render begun
    /// at once crosses that vsync too then, so the frame cannot tell and takes what the last frame
    /// that could showed (the recorded mode when none has yet).
    private mutating func rendersOnGrid(_ f: ChainFrame, renderGrid: Int64, period: Int64) -> Bool {
        let renderMark = f.renderBeganNs == .min ? f.renderEndNs : f.renderBeganNs
        let told: Bool? = renderMark < renderGrid ? false : (renderGrid - f.commitNs >= period / 4 ? true : nil)
        if let told { toldRendersOnGrid = told }
        return told ?? toldRendersOnGrid ?? (f.renderEndNs >= renderGrid)
    }

    mutating func reset() { self = CauseChain() }

    /// A part of a wait that an earlier frame's late release held, and that frame's root.
    private struct Held: Sendable {
        var ns: Int64 = 0
        var root: UInt64? = nil
        var cause = HitchCause.unknown

        mutating func keepLarger(_ other: Held) { if other.ns > ns { self = other } }
    }

    /// Which of an earlier frame's releases a wait may have waited for.
    private enum Release: CaseIterable { case commit, renderEnd, present }

    /// The part of a wait [from, to) that an earlier frame's late release held.
    /// - A thread busy with the previous frame is freed by that frame's release (`busyUntil`: its
    ///   commit for the main thread, its render end for the render thread) whatever its state: if
    ///   that release came at r in the wait, due on time at r' < r, it held min(to, r) − max(from, r').
    /// - The rest of the wait, if the thread slept through it and was woken at its end (`wakeSlackNs`
    ///   set: how long after the release the woken thread may take to run), ended with a release of
    ///   a recent frame (commit, render end or present) at most that long before its end. If the
    ///   latest such release was on time, nothing held the wait (a release on time explains it as
    ///   well as a late one before it); else the late release among them that held the most did,
    ///   its part as above, at most `sleptNs`. A thread a release woke slept from the wait's start to
    ///   that release and waited for a CPU from it to its end: a release later in the wait than
    ///   `asleepNs` (how long the thread slept in all, with the readings' 1 ms margin) came when the
    ///   thread was already awake, and ended nothing.
    /// - A window that holds the waiter's own work after the wait (`wakeSlackNs` nil) takes the late
    ///   release inside it that held it longest, at most `sleptNs`.
    private func held(from start: Int64, to end: Int64, wakeSlackNs: Int64?, busyUntil: Release?, sleptNs: Int64,
                      asleepNs: Int64 = .max, switches: SwitchHistory? = nil) -> Held {
        guard end > start else { return Held() }
        func part(_ at: Int64, _ due: Int64, _ r: Releases, from start: Int64) -> Held {
            guard let root = r.root, due < at else { return Held() }
            return Held(ns: max(0, min(end, at) - max(start, due)), root: root, cause: r.rootCause)
        }
        var busy = Held(), waitFrom = start
        if let busyUntil, let previous = recent.last {
            let (at, due) = previous.release(busyUntil)
            if at > start && at <= end.addingSaturated(SwitchHistory.readSlackNs) {
                busy = part(at, due, previous, from: start)
                waitFrom = max(start, at)
            }
        }
        // The latest release in reach, and the largest hold of a late release in reach.
        var latest: (at: Int64, late: Bool)? = nil
        var best = Held()
        for r in recent {
            for release in Release.allCases where release != busyUntil || r.frameID != recent.last?.frameID {
                let (at, due) = r.release(release)
                guard at > waitFrom, at <= end.addingSaturated(SwitchHistory.readSlackNs) else { continue }
                // The releaser wakes its waiter once it runs again after the release (its switch
                // records, which are in once the waiter's window is): a late release held the wait
                // until then.
                var wokeBy = at
                if wakeSlackNs != nil, let switches, let thread = r.releaser(release) {
                    wokeBy +|= switches.preemptedAfter(thread: thread, from: at, runningNs: Self.wakeNs)
                }
                if let wakeSlackNs, end - wokeBy > wakeSlackNs || at - waitFrom > asleepNs.addingSaturated(Self.wakeNs) { continue }
                var h = part(wokeBy, due, r, from: waitFrom)
                h.ns = min(h.ns, sleptNs)
                best.keepLarger(h)
                if at > latest?.at ?? .min { latest = (at, r.root != nil && due < at) }
            }
        }
        // A wait that ended with a release on time was not held, whatever came late before it.
        var total = wakeSlackNs != nil && latest?.late != true ? Held() : best
        if busy.ns > total.ns { swap(&busy, &total) }
        total.ns +|= busy.ns
        return total
    }

    /// Judges `frame` (frames in the order they began) and moves the timeline on.
    /// `switches`: the recorded context switches, for when an earlier frame's releaser ran again.
    mutating func judge(_ f: ChainFrame, switches: SwitchHistory = SwitchHistory()) -> ChainVerdict {
        let p = max(1, f.periodNs)
        func gridAtOrAfter(_ t: Int64) -> Int64 { vsyncAtOrAfter(t, anchor: f.vsyncNs, period: p) }
        let main = f.states.main
        let renderGrid = gridAtOrAfter(f.commitNs)
        let renderStartsOnGrid = rendersOnGrid(f, renderGrid: renderGrid, period: p)
        func renderReady(_ commit: Int64) -> Int64 { renderStartsOnGrid ? gridAtOrAfter(commit) : commit }
        // When a frame whose render ends at `end` is shown: the recorded present moved as much earlier
        // as the render end did, but no later than the pipeline shows it (the first vsync after the
        // render, a period after an on-grid render start): a present recorded late for reasons outside
        // both threads' windows is not carried into the timeline where earlier frames were on time.
        func pipelineShown(renderReady ready: Int64, renderEnd end: Int64) -> Int64 {
            renderStartsOnGrid ? max(gridAtOrAfter(end), ready + p) : gridAtOrAfter(end)
        }
        func shown(renderReady ready: Int64, renderEnd end: Int64) -> Int64 {
            let moved = gridAtOrAfter(f.actualNs - max(0, f.renderEndNs - end))
            return min(moved, pipelineShown(renderReady: ready, renderEnd: end) + presentDelayNs)
        }
        let previous = recent.last
        // One frame per vsync: shown no sooner after the previous frame than it was recorded (at most
        // a period: a loop that presents faster than the display, like `FrameMarker`'s, keeps its pace).
        let recordedGap = previous.map { min(p, max(0, f.actualNs - $0.actualNs)) } ?? p

        // What earlier frames' late releases held: the main thread's late start (the main thread
        // still busy with an earlier frame, or asleep until an earlier frame let go of a slot before
        // this one began), its sleeps inside the frame (back-pressure), the render's late start (the
        // render thread busy with, or presenting, an earlier frame), and the display.
        var root = Held()
        let lateStart = held(from: f.vsyncNs, to: f.beganNs,
                             wakeSlackNs: Self.wakeNs + (f.wokenWaitNs.mainLateStart ?? f.states.lateStart?.runnableNs ?? 0),
                             busyUntil: .commit, sleptNs: f.states.lateStart?.blockedNs ?? 0, switches: switches)
        root.keepLarger(lateStart)
        var inFrameNs: Int64 = 0
        if let sleeps = f.mainSleeps {
            let wokenWait = f.wokenWaitNs.main ?? main?.runnableNs ?? 0
            for sleep in sleeps {
                // A sleep that reaches past the watchdog's first capture may be several, each
                // interruption a wake-up and a wait for a CPU inside it: those waits are not asleep.
                let interrupted = sleep.endNs - f.beganNs > FrameReadings.watchdogFirstCaptureNs
                let h = held(from: max(f.beganNs, sleep.startNs), to: min(f.commitNs, sleep.endNs),
                             wakeSlackNs: Self.wakeNs + wokenWait, busyUntil: nil, sleptNs: .max,
                             asleepNs: (main?.blockedNs ?? .max).addingSaturated(interrupted ? wokenWait : 0), switches: switches)
                inFrameNs +|= h.ns
                root.keepLarger(h)
            }
        } else if let blocked = main?.blockedNs, blocked > 0 {
            // Without the sleeps' times, the window's time asleep bounds what a release inside it held.
            let h = held(from: f.beganNs, to: f.commitNs, wakeSlackNs: nil, busyUntil: nil, sleptNs: blocked)
            inFrameNs = h.ns
            root.keepLarger(h)
        }
        let renderStart = f.renderBeganNs == .min ? renderGrid : max(renderGrid, f.renderBeganNs)
        let renderSlept = f.states.renderLateStart?.blockedNs ?? 0
        let renderHeld = f.renderBeganNs == .min
            ? held(from: renderGrid, to: f.renderEndNs, wakeSlackNs: nil, busyUntil: .renderEnd, sleptNs: .max)
            : held(from: renderGrid, to: renderStart, wakeSlackNs: Self.wakeNs + (f.wokenWaitNs.renderLateStart ?? f.states.renderLateStart?.runnableNs ?? 0),
                   busyUntil: .renderEnd, sleptNs: renderSlept, switches: switches)
        root.keepLarger(renderHeld)

        // The frame with the earlier frames on time: its own work and waits, less what they held.
        let commitOnTime = f.commitNs - lateStart.ns - inFrameNs
        let readyOnTime = renderReady(commitOnTime)
        let renderStartOnTime = readyOnTime + max(0, renderStart - renderGrid - renderHeld.ns)
        let renderEndOnTime = renderStartOnTime + max(0, f.renderEndNs - renderStart)
        let shownOnTime = shown(renderReady: readyOnTime, renderEnd: renderEndOnTime)
        var actualOnTime = shownOnTime
        if let previous { actualOnTime = max(actualOnTime, previous.actualOnTimeNs + recordedGap) }
        let pipelineActual = pipelineShown(renderReady: renderReady(f.commitNs), renderEnd: f.renderEndNs) + presentDelayNs
        // The display: a frame shown right behind a late previous frame, later than its own render allowed.
        if let previous, let previousRoot = previous.root, previous.actualOnTimeNs < previous.actualNs,
           f.actualNs <= previous.actualNs + p {
            let displayHeld = f.actualNs - max(pipelineActual, previous.actualOnTimeNs + recordedGap)
            root.keepLarger(Held(ns: displayHeld, root: previousRoot, cause: previous.rootCause))
        }
        // The triple-buffering allowance there: a period when the previous frame was one period late
        // there (`LatenessJudge`), else none.
        let tolerance = Int64(Double(p) * tripleBufferTolerance)
        let allowanceOnTime = previous.map { abs($0.actualOnTimeNs - $0.expectedNs - p) <= tolerance ? p : 0 } ?? f.allowanceNs
        let hitchOnTime = actualOnTime - f.expectedNs - allowanceOnTime

        // The parts of the frame's shown states those holds were: its sleeps in the frame, and in its
        // late starts the waiting and the sleeping the cause counts (a thread busy with an earlier
        // frame's work in a late start shows no state here).
        var heldStates = StateSplit()
        if var mainSplit = main { heldStates.add(mainSplit.take(inFrameNs, from: [\.blockedNs])) }
        let notRunning: [WritableKeyPath<StateSplit, Int64>] = [\.machineNs, \.runnableNs, \.unknownNs]
        if var late = f.states.lateStart?.countedAsLateStart(wokeLateNs: f.states.lateStartWokeLateNs) {
            heldStates.add(late.take(lateStart.ns, from: notRunning))
        }
        if var render = f.states.render { heldStates.add(render.take(renderHeld.ns, from: notRunning)) }

        // A present later than the pipeline shows the frame's render (and than the vsync after the
        // previous frame's): the wait for the present vsync woke late, outside every window.
        let latePresent = max(0, f.actualNs - max(pipelineActual, (previous?.actualNs ?? .min).addingSaturated(p)))

        var verdict = ChainVerdict(cause: .unknown, queuedBehind: nil)
        if f.hitchNs > 0, heldStates.notRunningNs > 0 { verdict.heldByEarlierFrames = heldStates }
        if f.hitchNs > 0, latePresent > 0 { verdict.latePresentNs = latePresent }
        if f.hitchNs > 0, main != nil {
            if hitchOnTime <= 0, root.ns > 0, let behind = root.root {
                verdict.cause = root.cause
                verdict.queuedBehind = behind
            } else {
                // Late for its own sake, judged on two counterfactual frames after the earlier frames'
                // on-time releases: its on-CPU work alone (the main thread's running time in the frame,
                // plus what it ran between the previous commit, or the vsync, and the frame's begin;
                // the render thread's running time in its render), and that work with its own sleeps
                // (the main thread's in the frame less what earlier frames held; the render thread's
                // in its render).
                let lateStartFrom = max(f.vsyncNs, previous?.commitNs ?? .min)
                let lateStartRunning = min(f.states.lateStart?.runningNs ?? 0, max(0, f.beganNs - lateStartFrom))
                let mainCPU = main.map { $0.runningNs.addingSaturated(lateStartRunning) } ?? 0
                let renderCPU = f.states.render.map(\.runningNs) ?? f.renderNs
                let cpuStart = max(f.vsyncNs + usualPhaseNs, previous?.commitOnTimeNs ?? .min)
                func hitchIfOnly(mainNs: Int64, renderNs: Int64) -> Int64 {
                    let ready = renderReady(cpuStart.addingSaturated(mainNs))
                    let renderEnd = max(ready, previous?.renderEndOnTimeNs ?? .min).addingSaturated(renderNs)
                    var actual = shown(renderReady: ready, renderEnd: renderEnd)
                    if let previous { actual = max(actual, previous.actualOnTimeNs + recordedGap) }
                    return actual - f.expectedNs - allowanceOnTime
                }
                let ownMainSleepNs = max(0, (main?.blockedNs ?? 0) - heldStates.blockedNs)
                let renderSleepNs = f.states.render?.blockedNs ?? 0
                let counterfactuals = HitchCauseRule.Counterfactuals(
                    onCPUHitchNs: hitchIfOnly(mainNs: mainCPU, renderNs: renderCPU),
                    withOwnSleepsHitchNs: hitchIfOnly(mainNs: mainCPU.addingSaturated(ownMainSleepNs),
                                                      renderNs: renderCPU.addingSaturated(renderSleepNs)))
                verdict.cause = HitchCauseRule.cause(counterfactuals, f.states, less: heldStates, latePresentNs: latePresent)
            }
        }

        // What this frame's releases would have been on time, for the frames after it.
        var releases = Releases(commitNs: f.commitNs, commitOnTimeNs: commitOnTime, renderEndNs: f.renderEndNs,
                                renderEndOnTimeNs: renderEndOnTime, actualNs: f.actualNs, actualOnTimeNs: actualOnTime,
                                presentNs: f.presentNs == .min ? f.actualNs : f.presentNs, expectedNs: f.expectedNs,
                                root: nil, rootCause: .unknown, frameID: f.frameID, releasers: f.releasers)
        if let behind = verdict.queuedBehind {
            releases.root = behind
            releases.rootCause = verdict.cause
        } else if f.hitchNs > 0 && main != nil {
            // Late for its own sake: on time, its releases come as much earlier as it was late there,
            // and no later after its vsync than the last frame shown on time let go of them (a
            // render that would only just have made its vsync is not how the app's frames end on time).
            let late = max(0, hitchOnTime)
            let usual = onTimeOffsets.map { (f.vsyncNs + $0.commitNs, f.vsyncNs + $0.renderEndNs, f.vsyncNs + $0.actualNs) }
            releases.commitOnTimeNs = min(releases.commitOnTimeNs - late, usual?.0 ?? .max)
            releases.renderEndOnTimeNs = min(releases.renderEndOnTimeNs - late, usual?.1 ?? .max)
            releases.actualOnTimeNs = min(releases.actualOnTimeNs - late, usual?.2 ?? .max)
            releases.root = f.frameID
            releases.rootCause = verdict.cause
        } else if root.ns > 0 && f.actualNs > f.expectedNs {
            // Late only by added latency (steady triple buffering), with what an earlier late frame
            // held: its releases carry that frame's lateness on.
            releases.root = root.root
            releases.rootCause = root.cause
        } else {
            // Shown on time: the chain of lateness ends here, and its releases came when they were due.
            releases.commitOnTimeNs = f.commitNs
            releases.renderEndOnTimeNs = f.renderEndNs
            releases.actualOnTimeNs = f.actualNs
        }
        recent.append(releases)
        if recent.count > Self.recentLimit { recent.removeFirst() }
        if f.hitchNs == 0 && f.actualNs <= f.expectedNs {
            presentDelayNs = max(0, f.actualNs - (pipelineActual - presentDelayNs))
            onTimeOffsets = (f.commitNs - f.vsyncNs, f.renderEndNs - f.vsyncNs, f.actualNs - f.vsyncNs)
            onTimeBegins[onTimeBeginCount % onTimeBegins.count] = f.lateStartAsleepNs
            onTimeBeginCount += 1
            usualPhaseNs = onTimeBegins.prefix(min(onTimeBeginCount, onTimeBegins.count)).min() ?? 0
        }
        return verdict
    }
}
