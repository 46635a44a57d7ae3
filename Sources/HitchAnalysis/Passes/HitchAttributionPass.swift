import HitchTrace

// Hitch attribution (docs/METRICS.md "Hitch attribution"): why one hitching frame was late.
//
// A frame's windows come from its own timestamps: the main thread's from the frame's begin to its
// commit, the render thread's from the commit to the render end, other threads' from the begin to
// the later of the two. What ran in those windows is read from what the other passes publish:
// finished stage instances (StageCostPass), body evaluations and main-thread samples. Those reach the
// file in per-thread order only, so they may come before the frame is judged (kept in per-thread
// histories, each in its thread's own order) or after (added to the windows still open). Either
// way every instance overlapping a window is counted once, whatever the interleaving of threads.
// Times are summed in integer nanoseconds, weights in integer picoseconds: the same events in any
// order give bit-identical figures.

struct HitchAttributionPass: Sendable {
    /// Instances kept per thread for frames judged after their work reached the file.
    static let historyCapacity = 65_536
    /// A thread's instances are in its own finish order: nearly end-time order, out by at most the
    /// nesting of its stages. The scan stops after this many consecutive instances that ended before a window.
    static let scanSlack = 64

    private var stages = ThreadHistories<StageInstance>(capacity: historyCapacity)
    private var bodies = ThreadHistories<BodyInstance>(capacity: historyCapacity)
    private var samples = History<SampleInstance>()
    /// Windows kept open for late arrivals, oldest first; past the holder's limit the oldest
    /// retires (an instance's start is older than its emission by its length, which no bound
    /// limits: `EventOrder`'s one fallback), and a late instance that overlaps it is counted.
    private var open = BoundedHolder<OpenHitchWindow>()
    /// Instances starting before this may overlap an open window.
    private var lateBeforeNs: Int64 = .min
    /// Instances that ended before this are dropped from the histories (`PassContext.frameWindowsFromNs`).
    private var historyFromNs: Int64 = .min
    private var lastMainEndNs: Int64 = .min
    private var lastRenderEndNs: Int64 = .min
    private var lastOtherEndNs: Int64 = .min
    /// The span of the last window retired at the holder's limit (empty: none this run): the late
    /// instances that overlap it after it closed were let go, at least that many.
    private var retiredSpan: Range<Int64> = 0..<0
    private var run = 0

    // Published results, over every run.
    private(set) var inHitchNsByStage: [Int32: Int64] = [:]
    private(set) var stageOffenders: [Int32: WeightedHitch] = [:]
    private(set) var viewOffenders: [Int32: WeightedHitch] = [:]
    private(set) var functionOffenders: [String: WeightedHitch] = [:]
    /// Samples that caught the main thread asleep (`BlockingCalls`), by the function that waited.
    private(set) var waitingFunctions: [String: WeightedHitch] = [:]
    private(set) var samplesAsleepInHitches = 0
    private(set) var samplesInHitches = 0
    private(set) var foldedInHitches: [String: Int] = [:]
    /// Hitching frames whose windows began before the oldest instance a history still held.
    private(set) var framesWithShortHistory = 0
    private(set) var attributions: [HitchAttribution] = []
    // This run's in-hitch samples per stack (symbolized at the end of the run).
    private var runInHitches: [UInt32: Int] = [:]
    /// Weights per stack (no frame counts: a function's frames are counted by name, below): by
    /// samples over every hitch (where the main thread waited), and by on-CPU time over the hitches
    /// that weight offenders (`OpenHitchWindow.countsOffenders`).
    private var runStackWeights: [UInt32: WeightedHitch] = [:]
    private var runStackOnCPU: [UInt32: WeightedHitch] = [:]
    /// This run's hitching frames' distinct sampled stacks: at the end of the run each frame counts
    /// once for every innermost function among them, however many stacks and samples it had.
    private var runHitchStacks: [(stacks: [UInt32], countsOffenders: Bool)] = []
    private var pending: [(HitchAttribution, vsyncNs: Int64, stacks: [(UInt32, Int)])] = []

    mutating func beginRun(_ run: Int) {
        self.run = run
        stages.removeAll(); bodies.removeAll(); samples.removeAll()
        lastMainEndNs = .min; lastRenderEndNs = .min; lastOtherEndNs = .min
        lateBeforeNs = .min
        historyFromNs = .min
        retiredSpan = 0..<0
    }

    // MARK: What the other passes publish

    /// Finished stage instances, in publication order: into their threads' histories, and into
    /// the open windows they may overlap.
    mutating func stagesFinished(_ batch: UnsafeBufferPointer<StageInstance>, roles: FrameThreadRoles) {
        if stages.append(batch, droppingBefore: historyFromNs) < lateBeforeNs {
            addLate(batch, roles: roles) { $0.addStage($1, role: $2) }
        }
    }

    mutating func bodiesFinished(_ batch: UnsafeBufferPointer<BodyInstance>, roles: FrameThreadRoles) {
        if bodies.append(batch, droppingBefore: historyFromNs) < lateBeforeNs {
            addLate(batch, roles: roles) { $0.addBody($1, role: $2) }
        }
    }

    /// The instances of a batch that may overlap an open window, to those windows (rare: out of
    /// the per-batch path).
    @inline(never)
    private mutating func addLate<Instance: ThreadInstance>(_ batch: UnsafeBufferPointer<Instance>, roles: FrameThreadRoles,
                                                            _ add: (inout OpenHitchWindow, Instance, FrameThreadRole) -> Void) {
        for instance in batch where instance.startNs < lateBeforeNs {
            let role = roles[instance.thread]
            countIfRetired(instance.startNs, instance.historyEndNs)
            addToOpenWindows(reaching: instance.startNs) { add(&$0, instance, role) }
        }
    }

    /// Counts a late instance that overlaps the last window retired at the limit.
    private mutating func countIfRetired(_ startNs: Int64, _ endNs: Int64) {
        if OpenHitchWindow.overlap(retiredSpan, startNs, endNs) != nil { open.countLateForLetGo() }
    }

    /// Hands a late instance to the open windows, newest first, down to the first whose reach
    /// (and every older one's) ends before `startNs`.
    private mutating func addToOpenWindows(reaching startNs: Int64, _ add: (inout OpenHitchWindow) -> Void) {
        open.updateNewestFirst { window in
            guard window.reachNs >= startNs else { return false }
            add(&window)
            return true
        }
    }

    mutating func mainThreadSamples(_ batch: UnsafeBufferPointer<SampleInstance>) {
        samples.append(batch, capacity: Self.historyCapacity, droppingBefore: historyFromNs)
        for s in batch where s.atNs < lateBeforeNs { lateSample(s) }
    }

    /// A sample is an instant: a window whose reach ends at it does not contain it (clamped times: `+ 1` fits).
    @inline(never)
    private mutating func lateSample(_ s: SampleInstance) {
        countIfRetired(s.atNs, s.atNs)
        addToOpenWindows(reaching: s.atNs + 1) { $0.addSample(s) }
    }

    // MARK: A hitching frame

    /// Opens a hitching frame's windows and adds what already reached the file.
    mutating func hitch(_ frame: FrameRecord, _ judged: JudgedFrame, roles: FrameThreadRoles, names: NameTable) {
        let began = min(frame.beganNs, judged.commitNs)
        let frameEnd = max(judged.commitNs, judged.renderEndNs)
        let main = Self.range(max(began, lastMainEndNs), judged.commitNs)
        let render = Self.range(max(judged.commitNs, lastRenderEndNs), judged.renderEndNs)
        let other = Self.range(max(began, lastOtherEndNs), frameEnd)
        lastMainEndNs = max(lastMainEndNs, main.upperBound)
        lastRenderEndNs = max(lastRenderEndNs, render.upperBound)
        lastOtherEndNs = max(lastOtherEndNs, other.upperBound)
        var a = HitchAttribution()
        a.run = run
        a.frameID = frame.frameID
        a.hitchMs = milliseconds(judged.hitchNs)
        a.kind = judged.kind
        a.mainThreadMs = milliseconds(judged.mainWorkNs)
        a.renderMs = milliseconds(judged.renderNs)
        a.cause = judged.cause
        a.mainThreadStates = judged.mainStates?.figures
        a.renderThreadStates = judged.renderStates?.figures
        a.mainLateStartStates = judged.mainLateStartStates?.figures
        a.heldByEarlierFrames = judged.heldByEarlierFrames?.figures
        if judged.latePresentNs > 0 { a.latePresentMs = milliseconds(judged.latePresentNs) }
        a.queuedBehind = judged.queuedBehind
        let appCaused = judged.cause == .appWork || (judged.cause == .unknown && judged.mainStates == nil)
        let mainStates = judged.mainStates
        let reach = max(open.last?.reachNs ?? .min, main.upperBound, render.upperBound, other.upperBound)
        var window = OpenHitchWindow(main: main, render: render, other: other, reachNs: reach, hitchNs: judged.hitchNs,
                                countsOffenders: appCaused && judged.queuedBehind == nil,
                                mainRunningNs: mainStates?.runningNs ?? 1, mainWallNs: mainStates.map { max(1, $0.wallNs) } ?? 1,
                                attribution: a, vsyncNs: frame.vsyncNs)
        var short = false
        for (index, history) in stages.histories.enumerated() {
            let role = roles[ThreadHistories<StageInstance>.thread(ofHistory: index)]
            short = history.scan(from: window.window(for: role).lowerBound, capacity: Self.historyCapacity, scanSlack: Self.scanSlack) {
                window.addStage($0, role: role)
            } || short
        }
        for (index, history) in bodies.histories.enumerated() {
            let role = roles[ThreadHistories<BodyInstance>.thread(ofHistory: index)]
            short = history.scan(from: window.window(for: role == .render ? .render : .main).lowerBound, capacity: Self.historyCapacity,
                                 scanSlack: Self.scanSlack) { window.addBody($0, role: role) } || short
        }
        short = samples.scan(from: main.lowerBound, capacity: Self.historyCapacity, scanSlack: Self.scanSlack) { window.addSample($0) } || short
        if short { framesWithShortHistory += 1 }
        open.append(window)
        lateBeforeNs = reach
        if open.isOverLimit {
            let oldest = open.letGoFirst()
            retiredSpan = min(oldest.main.lowerBound, oldest.render.lowerBound, oldest.other.lowerBound)..<oldest.reachNs
            retire(oldest, names: names)
        }
    }

    private static func range(_ start: Int64, _ end: Int64) -> Range<Int64> { start..<max(start, end) }

    // MARK: Closing windows

    /// Folds a closed window into the figures (stage in-hitch time, offenders, the worst frames' detail).
    private mutating func retire(_ window: OpenHitchWindow, names: NameTable) {
        let hitchNs = window.hitchNs, mainWindowNs = window.main.upperBound - window.main.lowerBound
        for (name, value) in window.stageTimes { inHitchNsByStage[name, default: 0] +|= value.ns }
        // Offenders: on-CPU time inside the windows of hitches the app's work caused, never mere
        // presence. A main-thread stage's or view's time on a CPU is its time in the window times
        // the main thread's running share of it.
        func onCPU(_ ns: Int64) -> Int64 {
            Int64(truncatingIfNeeded: window.mainWallNs.dividingFullWidth(ns.multipliedFullWidth(by: min(window.mainRunningNs, window.mainWallNs))).quotient)
        }
        if window.countsOffenders {
            for (name, ns) in window.mainStageTimes where onCPU(ns) > 0 {
                stageOffenders[name, default: WeightedHitch()].add(hitchNs: hitchNs, part: onCPU(ns), whole: mainWindowNs)
            }
            for (name, value) in window.bodyTimes where onCPU(value.ns) > 0 {
                viewOffenders[name, default: WeightedHitch()].add(hitchNs: hitchNs, part: onCPU(value.ns), whole: mainWindowNs)
            }
        }
        let sampleCount = window.stackCounts.values.reduce(0, +)
        if sampleCount > 0 {
            samplesInHitches += sampleCount
            for (stack, count) in window.stackCounts {
                runInHitches[stack, default: 0] += count
                runStackWeights[stack, default: WeightedHitch()].addWeight(hitchNs: hitchNs, part: Int64(count), whole: Int64(sampleCount))
                guard window.countsOffenders else { continue }
                // A stack's share of the window's time on a CPU: the sampler runs on wall time.
                let share = onCPU(mainWindowNs)
                runStackOnCPU[stack, default: WeightedHitch()].addWeight(hitchNs: hitchNs, part: Int64(count) * share, whole: Int64(sampleCount) * max(1, mainWindowNs))
                runStackOnCPU[stack, default: WeightedHitch()].addOnCPU(share * Int64(count) / Int64(sampleCount))
            }
            runHitchStacks.append((Array(window.stackCounts.keys), window.countsOffenders))
        }

        // Keep the worst `limit` hitching frames in detail.
        let hitchMs = window.attribution.hitchMs
        let worstKept = pending.map(\.0.hitchMs).min() ?? .infinity
        guard attributions.count + pending.count < HitchAttribution.limit * 2 || hitchMs > worstKept else { return }
        var a = window.attribution
        a.stages = Self.topNamed(window.stageTimes, names: names, limit: 10)
        a.concurrentStages = Self.topNamed(window.concurrentStageTimes, names: names, limit: 5)
        a.bodies = Self.topNamed(window.bodyTimes, names: names, limit: 10)
        let topStacks = window.stackCounts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(5).map { ($0.key, $0.value) }
        pending.append((a, window.vsyncNs, Array(topStacks)))
        if pending.count > HitchAttribution.limit * 2 {
            pending.sort { ($0.0.hitchMs, $1.0.frameID) > ($1.0.hitchMs, $0.0.frameID) }
            pending.removeLast(pending.count - HitchAttribution.limit)
        }
    }

    private static func topNamed(_ times: [Int32: (count: Int, ns: Int64)], names: NameTable, limit: Int) -> [NamedDuration] {
        times.map { key, value -> NamedDuration in
            var d = NamedDuration(); d.name = names[key]; d.count = value.count; d.ms = milliseconds(value.ns); return d
        }
        .sorted { ($0.ms, $0.count, $1.name) > ($1.ms, $1.count, $0.name) }
        .prefix(limit).map { $0 }
    }

    /// Closes every window of the run and resolves its stacks and names.
    mutating func endRun(runStartNs: Int64, stacks: StackStore, names: NameTable) {
        while !open.isEmpty { retire(open.removeFirst(), names: names) }
        open.removeAll(keepingCapacity: false)
        lateBeforeNs = .min
        for (stack, count) in runInHitches {
            foldedInHitches[stacks.frames(stack, names: names).reversed().joined(separator: ";"), default: 0] += count
        }
        var innermost: [UInt32: String] = [:]
        var asleep: Set<UInt32> = []
        for (stack, weight) in runStackWeights {
            let frames = stacks.frames(stack, names: names)
            // A sample asleep in the kernel is the thread's blocked time, never a hot function:
            // it is kept apart under the first function above the blocking calls (the one that waited).
            if let leaf = frames.first, BlockingCalls.isBlocking(leaf) {
                let waiter = frames.first { !BlockingCalls.isBlocking($0) } ?? leaf
                innermost[stack] = waiter
                asleep.insert(stack)
                waitingFunctions[waiter, default: WeightedHitch()].merge(weight)
                samplesAsleepInHitches += runInHitches[stack] ?? 0
            } else {
                let function = frames.first ?? "?"
                innermost[stack] = function
                if let onCPU = runStackOnCPU[stack] { functionOffenders[function, default: WeightedHitch()].merge(onCPU) }
            }
        }
        for (frameStacks, countsOffenders) in runHitchStacks {
            if countsOffenders {
                for function in Set(frameStacks.filter { !asleep.contains($0) }.map { innermost[$0] ?? "?" }) { functionOffenders[function, default: WeightedHitch()].frames += 1 }
            }
            for waiter in Set(frameStacks.filter { asleep.contains($0) }.map { innermost[$0] ?? "?" }) { waitingFunctions[waiter, default: WeightedHitch()].frames += 1 }
        }
        runInHitches.removeAll(); runStackWeights.removeAll(); runStackOnCPU.removeAll(); runHitchStacks.removeAll()
        if foldedInHitches.count > 20_000 { foldedInHitches = SampleProfilePass.top(foldedInHitches, 10_000) }
        for (attribution, vsyncNs, stackCounts) in pending {
            var a = attribution
            a.startMs = milliseconds(vsyncNs.subtractingSaturated(runStartNs))
            a.stacks = stackCounts.map { stack, count in
                var s = SampledStack(); s.frames = stacks.frames(stack, names: names); s.samples = count; return s
            }
            attributions.append(a)
        }
        pending.removeAll()
        attributions.sort { ($0.hitchMs, $1.run, $1.startMs) > ($1.hitchMs, $0.run, $0.startMs) }
        if attributions.count > HitchAttribution.limit { attributions.removeLast(attributions.count - HitchAttribution.limit) }
    }

    /// Offenders: stages, views and sampled functions, weighted by the hitches they sat in; every
    /// one (`Offender.ranked` publishes the heaviest).
    func offenderTotals(names: NameTable) -> [OffenderTotals] {
        var offenders: [OffenderTotals] = []
        for (name, weight) in stageOffenders { offenders.append(OffenderTotals(kind: .stage, name: names[name], weight)) }
        for (name, weight) in viewOffenders { offenders.append(OffenderTotals(kind: .view, name: names[name], weight)) }
        for (name, weight) in functionOffenders { offenders.append(OffenderTotals(kind: .function, name: name, weight)) }
        return offenders
    }
}

extension HitchAttributionPass: AnalysisPass {
    /// No event of its own: only what StageCostPass, ViewUpdatesPass, SampleProfilePass and FramePass publish.
    static var reads: PayloadKinds { .published }

    mutating func beginRun(_ context: inout PassContext) { beginRun(context.run) }

    /// The instances published since the last batch, then the frames judged after them. `context`
    /// is inout only so it is passed by address (a by-value argument copied the whole context).
    mutating func takePublished(_ context: inout PassContext) {
        historyFromNs = context.frameWindowsFromNs
        let roles = context.roles
        context.finishedStages.withElements { stagesFinished($0, roles: roles) }
        context.bodies.withElements { bodiesFinished($0, roles: roles) }
        context.mainThreadSamples.withElements { mainThreadSamples($0) }
        for (frame, judged) in context.judgedFrames { hitch(frame, judged, roles: roles, names: context.names) }
    }

    mutating func endRun(_ context: inout PassContext) {
        takePublished(&context)
        open.report(.instancesAfterWindowClosed, to: &context.order)
        endRun(runStartNs: context.runStartNs == .max ? 0 : context.runStartNs, stacks: context.stacks, names: context.names)
    }

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        a.hitchAttributions = attributions
        let offenders = offenderTotals(names: context.names)
        context.mergeable.offenders = OffenderTotals.canonical(offenders)
        a.offenders = Offender.ranked(offenders.map(\.figures))
        a.samples.samplesInHitches = samplesInHitches
        a.samples.samplesAsleepInHitches = samplesAsleepInHitches
        a.samples.waitingInHitches = Array(waitingFunctions.map { name, weight -> Offender in
            var o = Offender(); o.kind = .function; o.name = name; o.weightedHitchMs = weight.ms; o.hitchingFrames = weight.frames; return o
        }.sorted { ($0.weightedHitchMs, $1.name) > ($1.weightedHitchMs, $0.name) }.prefix(10))
        a.samples.foldedInHitches = SampleProfilePass.list(foldedInHitches)
        for (i, name) in context.stageFigureNames.enumerated() { a.stages[i].inHitchingFramesMs = milliseconds(inHitchNsByStage[name] ?? 0) }
        if framesWithShortHistory > 0 {
            a.warnings.append("\(framesWithShortHistory) hitching frames were judged after part of their work left the attribution history (their attribution may be short)")
        }
    }
}
