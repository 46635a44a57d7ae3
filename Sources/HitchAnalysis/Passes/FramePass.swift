import HitchReader
import HitchTrace

/// Frames and hitches as a pass: assembles frames from their events (any thread interleaving),
/// judges each on its recorded grid and on every replayed refresh rate, and publishes the hitching
/// ones (`PassContext.judgedFrames`) for attribution. Inputs and interactions are read here: they
/// release replayed frames and measure the animating time.
struct FramePass: AnalysisPass {
    static var reads: PayloadKinds { [.frames, .instant, .interaction, .threadState, .schedSwitch] }

    private let refreshRatesHz: [Double]
    private var recorded = HitchAccumulator(source: .recorded, rateHz: 0)
    private var replays: [ReplayTimeline]
    private var recordedJudge = LatenessJudge()
    /// The recorded frames' causes over the whole timeline.
    private var causeChain = CauseChain()
    private var rateCounts: [Double: Int] = [:]
    /// Frames at the same rate as the previous one, not yet in `rateCounts` (no hashing per frame).
    private var lastRateHz: Double = .nan
    /// The last frame's period and its rate in Hz (rounded to 0.1): periods repeat frame after
    /// frame, and the rounding is a libm call.
    private var lastRatePeriodNs: Int64 = 0
    private var lastRatePeriodHz: Double = .nan
    private var lastRateRepeats = 0
    private var refreshChanges: [RefreshRateChange] = []
    private var frameSamples: [FrameSample] = []
    private var framesTruncated = false
    /// The main thread's frame windows by state, over every judged recorded frame with readings.
    private var mainStates = StateSplit()
    private var framesWithStates = 0

    // Per run.
    private var run = 0
    private var interactions = InteractionUnion()
    private var inputs = InputArrivals()
    private var inputCategory: Int32 = -1
    private var verdicts = PlatformVerdicts()
    /// The frame threads' recent thread-state readings.
    private var readingHistory = ReadingHistory()
    /// Frames being assembled from events in per-thread (not global) time order.
    private var frames = FrameAssembler()
    /// The frame threads' exact context switches (perf source), and the final frames waiting, in
    /// begin order, for the switches their thread-state splits read: the writer drains them a flush
    /// interval late. A frame waits until those switches are known to be in (`switchesAreIn`), or
    /// the trace's order bound has passed its windows (`EventOrder`: the switches not in by then are
    /// beyond the bound), or, in a trace without a bound, more than `EventOrder.holdLimit` frames
    /// wait; then it is judged with what is in (windows whose switch records fall short of their
    /// switch counts are unknown, which is how a window let go too soon shows).
    private var switchHistory = SwitchHistory()
    private var waiting = BoundedHolder<FrameRecord>()
    private var previousPeriodNs: Int64 = 0
    /// The latest frame begin of this run (.min before the first).
    private var lastBeganNs: Int64 = .min
    /// How far before the oldest frame still to judge attribution keeps its history: frames that
    /// begin out of time order, or commit before they begin, by less than this still find all their work.
    static let historySlackNs: Int64 = 1_000_000_000
    /// This run's frame samples and refresh-rate changes (from these indexes on) hold absolute times
    /// until the run's first event is known, at its end.
    private var runFirstFrameSample = 0
    private var runFirstRefreshChange = 0
    private(set) var runFrames = 0

    init(options: AnalyzerOptions) {
        refreshRatesHz = options.refreshRatesHz
        replays = options.refreshRatesHz.map { ReplayTimeline(rateHz: $0) }
    }

    mutating func beginRun(_ context: inout PassContext) {
        run = context.run
        interactions.reset()
        inputs.reset()
        frames.reset()
        readingHistory.removeAll()
        verdicts.reset()
        switchHistory.removeAll()
        waiting.removeAll()
        previousPeriodNs = 0
        lastBeganNs = .min
        context.frameWindowsFromNs = .min
        runFrames = 0
        runFirstFrameSample = frameSamples.count
        runFirstRefreshChange = refreshChanges.count
        recordedJudge.reset()
        causeChain.reset()
        recorded.beginRun(run)
        for i in replays.indices { replays[i].beginRun(run) }
    }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        let t = resolved.startNs
        if event.payload.passKind == .frames { publishHorizon(&context) }
        switch event.payload {
        case .frameBegan(let began):
            lastBeganNs = max(lastBeganNs, t)
            verdicts.frameBegan(began.frameID, thread: resolved.thread.rawValue)
            frames.update(began.frameID, began: true) { frame in
                frame.beganNs = t
                frame.vsyncNs = clampedTime(began.vsyncNs)
                frame.targetNs = clampedTime(began.targetNs)
                frame.periodNs = sanePeriod(began.periodNs)
                frame.statedExpectedPresentNs = began.expectedPresentNs.map(clampedTime) ?? .min
            }
            drainFrames(&context)
        case .frameCommitted(let id):
            frames.update(id) { $0.commitNs = t }
        case .frameRenderEnded(let id):
            frames.update(id) { $0.renderEndNs = t }
        case .framePresented(let id):
            frames.update(id) { $0.presentNs = t }
            drainFrames(&context)
        case .threadState(let reading):
            // Kept with the frame: the main thread's readings precede its next frame's begin, the
            // render thread's its present, so they are in before the frame is judged.
            let phase = PhaseReading(atNs: t, reading)
            let thread = resolved.thread.rawValue
            let before = readingHistory.add(phase, thread: thread)
            frames.update(reading.frameID) { frame in
                frame.readings.set(reading.phase, phase)
                if reading.phase == .committed, let before { frame.readings.beforeCommit = before }
                if reading.phase == .frameBegan || reading.phase == .committed { frame.readings.mainThread = thread }
                if reading.phase == .renderBegan { frame.readings.renderThread = thread }
            }
        case .schedSwitch(let change):
            switchHistory.add(SwitchHistory.Switch(atNs: t, out: change.direction == .switchedOut, preempted: change.preempted, cpu: change.cpu),
                              thread: resolved.thread.rawValue)
            if !waiting.isEmpty { drainFrames(&context) }
        case .instant:
            if inputCategory < 0 { inputCategory = context.names.index(of: HitchCategory.input.string) }
            if resolved.name == inputCategory { inputs.add(t) }
            else { _ = verdicts.instant(category: resolved.name, verdict: resolved.secondName, thread: resolved.thread.rawValue, &context) }
        case .interactionBegin:
            interactions.add(t, isBegin: true)
        case .interactionEnd:
            interactions.add(t, isBegin: false)
        default:
            break
        }
    }

    /// Publishes how early the windows of frames still to judge may start: before the oldest frame
    /// begun and not judged (or, with none, the latest begin: later frames begin after it), less the
    /// slack. Taken before the event's frames are judged, so it covers them too.
    @inline(__always)
    private func publishHorizon(_ context: inout PassContext) {
        let oldest = waiting.first?.beganNs ?? frames.oldestPendingBeganNs ?? lastBeganNs
        context.frameWindowsFromNs = oldest == .min ? .min : oldest.subtractingSaturated(Self.historySlackNs)
    }

    /// Judges every frame that is final, in the order frames began.
    private mutating func drainFrames(_ context: inout PassContext, all: Bool = false) {
        while var frame = frames.nextReady(all: all) {
            if frame.hasBegan { frame.inputArrivalNs = inputs.take(beganNs: frame.beganNs) }
            // Nothing waiting and nothing to wait for: judged at once, without a trip through the
            // queue (copying each record in and out of it cost more than judging it).
            if waiting.isEmpty && (all || !frame.hasReadings || switchesAreIn(frame.readings)) {
                finalize(&frame, &context)
                continue
            }
            waiting.append(frame)
        }
        while let oldest = waiting.first {
            let ready = all || !oldest.hasReadings || switchesAreIn(oldest.readings)
            guard var frame = waiting.releaseFirst(ready: ready, emittedNs: switchWindowsEndNs(oldest.readings),
                                                   watermarkNs: context.order.orderedThroughNs) else { break }
            finalize(&frame, &context)
        }
    }

    /// The end of the frame's switch windows, with the reading slack (`switchesAreIn`).
    private func switchWindowsEndNs(_ r: FrameReadings) -> Int64 {
        max(r.mainCommitted.atNs, r.renderEnded.atNs).addingSaturated(SwitchHistory.readSlackNs)
    }

    /// Every switch record the frame's splits read is in: the frame's windows, and its late starts
    /// before them, are split by switches only where their readings lack the run delay (no
    /// schedstat file), and then need each frame thread's records through the end of its window
    /// (and the read slack). A thread's records reach the file in time order, so one at or past
    /// that time proves the earlier ones in (`SwitchHistory.inThroughNs`). Counting the window's
    /// switch-outs proves less: the switch-in after the last of them, and the records of the late
    /// start before the window, may still be on their way, and a frame judged without them would
    /// depend on how the threads' buffers interleave.
    private func switchesAreIn(_ r: FrameReadings) -> Bool {
        func threadIn(_ a: PhaseReading, _ b: PhaseReading, _ thread: UInt32) -> Bool {
            guard b.isPresent, (a.isPresent && a.runnableWaitNs < 0) || b.runnableWaitNs < 0, b.voluntarySwitches >= 0, b.involuntarySwitches >= 0
            else { return true }
            return switchHistory.inThroughNs(thread: thread) >= b.atNs.addingSaturated(SwitchHistory.readSlackNs)
        }
        return threadIn(r.mainBegan.isPresent ? r.mainBegan : r.beforeCommit, r.mainCommitted, r.mainThread)
            && threadIn(r.renderBegan, r.renderEnded, r.renderThread)
    }

    /// `frame` is inout so the record is not copied again; its late starts are filled here.
    private mutating func finalize(_ frame: inout FrameRecord, _ context: inout PassContext) {
        guard frame.hasBegan else { return }   // events of a frame whose begin is not in this trace
        // Late starts: what the main thread did from the vsync to its begin, the render thread from
        // the first vsync after the commit to its render began (their readings before are in).
        let hasReadings = frame.hasReadings
        if hasReadings && frame.readings.mainBegan.isPresent {
            // Less the app's usual phase asleep after the vsync (`CauseChain.usualPhaseNs`).
            if var late = readingHistory.lateStart(thread: frame.readings.mainThread, from: frame.vsyncNs, to: frame.beganNs,
                                                   switches: switchHistory) {
                frame.readings.mainLateStartAsleepNs = late.blockedNs
                late.blockedNs -= min(late.blockedNs, causeChain.usualPhaseNs)
                frame.readings.mainLateStart = late.wallNs > 0 ? late : nil
            }
        }
        if hasReadings, frame.readings.renderBegan.isPresent, frame.hasCommit, frame.periodNs > 0 {
            let renderStart = vsyncAtOrAfter(frame.commitNs, anchor: frame.vsyncNs, period: frame.periodNs)
            frame.readings.renderLateStart = readingHistory.lateStart(thread: frame.readings.renderThread, from: renderStart,
                                                                      to: frame.readings.renderBegan.atNs, switches: switchHistory)
        }
        runFrames += 1
        guard frame.isJudgeable else {
            verdicts.unjudged(frame.frameID)
            recorded.addUnjudged()
            return
        }
        var judged = judgeRecorded(frame, judge: &recordedJudge, switches: switchHistory)
        judgeCause(&judged, frame)
        let verdict = verdicts.take(frame.frameID, context)
        if let verdict {
            PlatformCause.apply(verdict: verdict, to: &judged)
            verdicts.judged(verdict: verdict, hitch: judged.hitchNs > 0)
        }
        recorded.add(judged)
        if frame.periodNs != lastRatePeriodNs {
            lastRatePeriodNs = frame.periodNs
            lastRatePeriodHz = (1e10 / Double(frame.periodNs)).rounded() / 10
        }
        let hz = lastRatePeriodHz
        if hz == lastRateHz { lastRateRepeats += 1 } else { flushRateCount(); lastRateHz = hz; lastRateRepeats = 1 }
        if previousPeriodNs > 0, abs(Double(frame.periodNs - previousPeriodNs)) > periodTolerance * Double(previousPeriodNs) {
            if refreshChanges.count < 100 {
                var change = RefreshRateChange()
                change.run = run
                change.atMs = Double(frame.vsyncNs)   // absolute until the run ends (`resolveRunTimes`)
                change.fromHz = (1e10 / Double(previousPeriodNs)).rounded() / 10
                change.toHz = hz
                refreshChanges.append(change)
            }
        }
        previousPeriodNs = frame.periodNs
        if let main = judged.mainStates { mainStates.add(main); framesWithStates += 1 }
        if frameSamples.count < FrameSample.limit {
            var s = FrameSample()
            s.run = run
            s.frameID = frame.frameID
            s.startMs = Double(frame.vsyncNs)   // absolute until the run ends (`resolveRunTimes`)
            s.periodMs = milliseconds(frame.periodNs)
            s.mainThreadMs = milliseconds(judged.mainWorkNs)
            s.renderMs = milliseconds(judged.renderNs)
            s.frameTimeMs = milliseconds(judged.frameTimeNs)
            s.overrunMs = milliseconds(judged.overrunNs)
            s.hitchMs = milliseconds(judged.hitchNs)
            s.kind = judged.kind
            if judged.hitchNs > 0 {
                s.cause = judged.cause; s.queuedBehind = judged.queuedBehind; s.mainLateStartStates = judged.mainLateStartStates?.figures
                s.heldByEarlierFrames = judged.heldByEarlierFrames?.figures
                if judged.latePresentNs > 0 { s.latePresentMs = milliseconds(judged.latePresentNs) }
            }
            s.mainThreadStates = judged.mainStates?.figures
            s.platformVerdict = verdict
            frameSamples.append(s)
        } else {
            framesTruncated = true
        }
        // Replay: input frames are released when their input arrived (never later than their vsync).
        let isInput = frame.inputArrivalNs != .min
        let release = isInput ? min(frame.inputArrivalNs, frame.vsyncNs) : frame.vsyncNs
        // The replay's render duration is the render thread's own (from its renderBegan reading when
        // recorded): a renderer still busy with earlier frames must not bring that queue along, or the
        // replay queues it a second time and one stall keeps every later replayed frame late.
        let began = hasReadings ? frame.readings.renderBegan : PhaseReading()
        let replayRenderNs = began.isPresent && began.atNs <= judged.renderEndNs
            ? min(judged.renderNs, judged.renderEndNs - max(began.atNs, frame.commitNs)) : judged.renderNs
        for i in replays.indices {
            replays[i].add(frameID: frame.frameID, releaseNs: release, isInput: isInput,
                           mainWorkNs: judged.mainWorkNs, renderNs: replayRenderNs,
                           states: judged.states)   // the replay reads only the main and render splits: it starts on its grid, no late start
        }
        if judged.hitchNs > 0 { context.judgedFrames.append((frame, judged)) }
    }

    /// The frame's cause over the whole timeline.
    private mutating func judgeCause(_ judged: inout JudgedFrame, _ frame: FrameRecord) {
        let readings = frame.hasReadings ? frame.readings : FrameReadings.none
        let renderBegan = readings.renderBegan.isPresent ? readings.renderBegan.atNs : Int64.min
        let lateness = judged.actualNs - judged.expectedNs
        let verdict = causeChain.judge(ChainFrame(
            frameID: frame.frameID, vsyncNs: frame.vsyncNs, periodNs: frame.periodNs, beganNs: frame.beganNs, commitNs: frame.commitNs,
            renderBeganNs: renderBegan, renderEndNs: judged.renderEndNs, expectedNs: judged.expectedNs, actualNs: judged.actualNs, presentNs: frame.presentNs,
            hitchNs: judged.hitchNs, allowanceNs: max(0, lateness - judged.hitchNs), renderNs: judged.renderNs,
            states: judged.states, mainSleeps: frame.hasReadings ? readings.mainSleeps(switches: switchHistory) : nil,
            lateStartAsleepNs: readings.mainLateStartAsleepNs,
            wokenWaitNs: wokenWaits(judged, frame, readings),
            releasers: frame.hasReadings ? (readings.mainThread, readings.renderThread) : nil), switches: switchHistory)
        judged.cause = verdict.cause
        judged.queuedBehind = verdict.queuedBehind
        judged.heldByEarlierFrames = verdict.heldByEarlierFrames
        judged.latePresentNs = verdict.latePresentNs
    }

    /// The main thread's and render thread's waits for a CPU after wake-ups (`ChainFrame.wokenWaitNs`),
    /// where their switches are recorded.
    private func wokenWaits(_ judged: JudgedFrame, _ frame: FrameRecord, _ r: FrameReadings) -> (Int64?, Int64?, Int64?) {
        guard !switchHistory.isEmpty else { return (nil, nil, nil) }
        func woken(_ runnable: Int64?, _ thread: UInt32, _ start: Int64, _ end: Int64) -> Int64? {
            guard let runnable, switchHistory.threads[thread] != nil else { return nil }
            return FrameReadings.wokenWaitNs(runnableNs: runnable, thread: thread, from: start, to: end, switches: switchHistory)
        }
        let renderGrid = vsyncAtOrAfter(frame.commitNs, anchor: frame.vsyncNs, period: frame.periodNs)
        return (woken(judged.states.lateStart?.runnableNs, r.mainThread, frame.vsyncNs, frame.beganNs),
                woken(judged.mainStates?.runnableNs, r.mainThread, r.mainBegan.isPresent ? r.mainBegan.atNs : r.beforeCommit.atNs, r.mainCommitted.atNs),
                woken(judged.states.renderLateStart?.runnableNs, r.renderThread, renderGrid, r.renderBegan.atNs))
    }

    private mutating func flushRateCount() {
        if lastRateRepeats > 0 { rateCounts[lastRateHz, default: 0] += lastRateRepeats }
        lastRateRepeats = 0
    }

    mutating func endRun(_ context: inout PassContext) {
        drainFrames(&context, all: true)
        frames.reportLetGo(to: &context.order)
        flushRateCount()
        lastRateHz = .nan
        resolveRunTimes(runStartNs: context.runStartNs == .max ? 0 : context.runStartNs)
        let union = interactions.unionNs(runEndNs: context.order.latestNs)
        recorded.endRun(interactionUnionNs: union)
        for i in replays.indices { replays[i].endRun(interactionUnionNs: union) }
    }

    /// Makes this run's frame times relative to its first event, which is known only now: an
    /// earlier event may reach the file after any frame (per-thread order).
    private mutating func resolveRunTimes(runStartNs start: Int64) {
        func relative(_ absolute: Double) -> Double { milliseconds(Int64(clampingDouble: absolute).subtractingSaturated(start)) }
        for i in runFirstFrameSample..<frameSamples.count { frameSamples[i].startMs = relative(frameSamples[i].startMs) }
        for i in runFirstRefreshChange..<refreshChanges.count { refreshChanges[i].atMs = relative(refreshChanges[i].atMs) }
        recorded.resolveRunStart(run, runStartNs: start)
        for i in replays.indices { replays[i].resolveRunStart(run, runStartNs: start) }
    }

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        a.refreshRatesHz = refreshRatesHz
        let totals = RateTotals(recorded: recorded.totals, rateCounts: rateCounts, refreshRatesHz: refreshRatesHz) { replays[$0].totals }
        totals.contribute(to: &a)
        context.mergeable.hitches = totals
        a.refreshRateChanges = refreshChanges
        if framesWithStates > 0 {
            // The rest of the thread-state figures are the ThreadStatePass's (registered later).
            var t = ThreadStateFigures()
            t.mainThread = mainStates.figures
            a.threadStates = t
        }
        a.frames = frameSamples
        a.framesTruncated = framesTruncated
        if verdicts.agreement.frames + verdicts.agreement.unjudged > 0 { a.platformAgreement = verdicts.agreement }
        if a.recorded.unjudgedFrames > 0 { a.warnings.append("\(a.recorded.unjudgedFrames) frames had no commit and were not judged") }
    }
}
