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
    /// begin order, for their windows' switches: the writer drains them a flush interval late. A
    /// frame waits until its switches are in, or the trace's order bound has passed its windows
    /// (`EventOrder`: the switches not in by then are beyond the bound), or, in a trace without a
    /// bound, `EventOrder.holdLimit` frames wait; then it is judged with what is in (windows whose
    /// switch records fall short of their switch counts are unknown, which is how a window let go
    /// too soon shows).
    private var switchHistory = SwitchHistory()
    private var waiting: [FrameRecord] = []
    private var waitingHead = 0
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
        waiting.removeAll(keepingCapacity: true)
        waitingHead = 0
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
            if waitingHead < waiting.count { drainFrames(&context) }
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
        let oldest = waitingHead < waiting.count ? waiting[waitingHead].beganNs : frames.oldestPendingBeganNs ?? lastBeganNs
        context.frameWindowsFromNs = oldest == .min ? .min : oldest.subtractingSaturated(Self.historySlackNs)
    }

    /// Judges every frame that is final, in the order frames began.
    private mutating func drainFrames(_ context: inout PassContext, all: Bool = false) {
        while var frame = frames.nextReady(all: all) {
            if frame.hasBegan { frame.inputArrivalNs = inputs.take(beganNs: frame.beganNs) }
            // Nothing waiting and nothing to wait for: judged at once, without a trip through the
            // queue (copying each record in and out of it cost more than judging it).
            if waitingHead == waiting.count && (all || !frame.hasReadings || switchesAreIn(frame.readings)) {
                finalize(&frame, &context)
                continue
            }
            waiting.append(frame)
        }
        while waitingHead < waiting.count {
            guard all || waiting.count - waitingHead > EventOrder.holdLimit || !waiting[waitingHead].hasReadings
                    || switchesAreIn(waiting[waitingHead].readings)
                    || switchWindowsEndNs(waiting[waitingHead].readings) < context.order.orderedThroughNs else { break }
            var frame = waiting[waitingHead]
            waitingHead += 1
            finalize(&frame, &context)
        }
        // Emptied only when it held frames: emptying an empty array still replaced its storage.
        if waitingHead == waiting.count { if waitingHead > 0 { waiting.removeAll(keepingCapacity: true); waitingHead = 0 } }
        else if waitingHead > 1024 && waitingHead * 2 > waiting.count { waiting.removeFirst(waitingHead); waitingHead = 0 }
    }

    /// The end of the frame's switch windows, with the reading slack (`switchesAreIn`).
    private func switchWindowsEndNs(_ r: FrameReadings) -> Int64 {
        max(r.mainCommitted.atNs, r.renderEnded.atNs).addingSaturated(SwitchHistory.readSlackNs)
    }

    /// The frame's windows need no switches (their readings have the run delay, or the thread did
    /// not switch), or every switch-out their switch counts announce is in.
    private func switchesAreIn(_ r: FrameReadings) -> Bool {
        func windowIn(_ a: PhaseReading, _ b: PhaseReading, _ thread: UInt32) -> Bool {
            guard a.isPresent, b.isPresent, a.runnableWaitNs < 0 || b.runnableWaitNs < 0,
                  a.voluntarySwitches >= 0, b.voluntarySwitches >= 0, a.involuntarySwitches >= 0, b.involuntarySwitches >= 0
            else { return true }
            let outs = b.voluntarySwitches - a.voluntarySwitches + b.involuntarySwitches - a.involuntarySwitches
            return switchHistory.isComplete(thread: thread, from: a.atNs, to: b.atNs, expectedOuts: outs)
        }
        return windowIn(r.mainBegan.isPresent ? r.mainBegan : r.beforeCommit, r.mainCommitted, r.mainThread)
            && windowIn(r.renderBegan, r.renderEnded, r.renderThread)
    }

    /// `frame` is inout so the record is not copied again; its late starts are filled here.
    private mutating func finalize(_ frame: inout FrameRecord, _ context: inout PassContext) {
        guard frame.hasBegan else { return }   // events of a frame whose begin is not in this trace
        // Late starts: what the main thread did from the vsync to its begin, the render thread from
        // the first vsync after the commit to its render began (their readings before are in).
        let hasReadings = frame.hasReadings
        if hasReadings && frame.readings.mainBegan.isPresent {
            frame.readings.mainLateStart = readingHistory.lateStart(thread: frame.readings.mainThread, from: frame.vsyncNs, to: frame.beganNs,
                                                                    switches: switchHistory)
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
        recorded.add(judged)
        let verdict = verdicts.take(frame.frameID, context)
        if let verdict { verdicts.judged(verdict: verdict, hitch: judged.hitchNs > 0) }
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
            if judged.hitchNs > 0 { s.cause = judged.cause; s.queuedBehind = judged.queuedBehind; s.mainLateStartStates = judged.mainLateStartStates?.figures }
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
            renderBeganNs: renderBegan, renderEndNs: judged.renderEndNs, expectedNs: judged.expectedNs, actualNs: judged.actualNs,
            hitchNs: judged.hitchNs, allowanceNs: max(0, lateness - judged.hitchNs), renderNs: judged.renderNs,
            states: judged.states))
        judged.cause = verdict.cause
        judged.queuedBehind = verdict.queuedBehind
    }

    private mutating func flushRateCount() {
        if lastRateRepeats > 0 { rateCounts[lastRateHz, default: 0] += lastRateRepeats }
        lastRateRepeats = 0
    }

    mutating func endRun(_ context: inout PassContext) {
        drainFrames(&context, all: true)
        context.order.countLetGo(frames.lateEventsOfLetGoFrames, .frameEventsAfterJudging)
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
        a.recordedRates = rateCounts.map { rate, count in var r = RecordedRate(); r.rateHz = rate; r.frameCount = count; return r }
            .sorted { ($0.frameCount, $1.rateHz) > ($1.frameCount, $0.rateHz) }
        let dominantPeriodMs = a.recordedRates.first.map { 1000 / $0.rateHz } ?? 0
        a.recorded = recorded.figures(periodMs: a.recordedRates.count == 1 ? dominantPeriodMs : 0)
        if a.recordedRates.count == 1 { a.recorded.rateHz = a.recordedRates[0].rateHz }
        a.refreshRateChanges = refreshChanges
        for (i, rate) in refreshRatesHz.enumerated() {
            let key = Analyzer.rateKey(rate)
            let everyFrameAtRate = !rateCounts.isEmpty && rateCounts.keys.allSatisfy { abs($0 - rate) <= periodTolerance * rate }
            if everyFrameAtRate {
                var figures = a.recorded
                figures.rateHz = rate
                figures.periodMs = 1000 / rate
                a.hitches[key] = figures
            } else {
                a.hitches[key] = replays[i].figures(periodMs: 1000 / rate)
            }
        }
        // The recorded rate is always judged, whatever --refresh lists (`analyze --refresh 90` of a
        // 120 Hz trace keeps the recorded 120 Hz row beside the 90 Hz replay).
        if a.recordedRates.count == 1, let recordedRate = a.recordedRates.first?.rateHz,
           !refreshRatesHz.contains(where: { abs($0 - recordedRate) <= periodTolerance * recordedRate }) {
            var figures = a.recorded
            figures.periodMs = 1000 / recordedRate
            a.hitches[Analyzer.rateKey(recordedRate)] = figures
        }
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
