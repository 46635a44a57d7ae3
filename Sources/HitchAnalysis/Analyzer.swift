import HitchTrace

/// Metadata keys and well-known names the analyzer reads (docs/METRICS.md "Trace inputs").
public enum MetadataKey {
    public static let peakBandwidthGBps = "peakBandwidthGBps"
    public static let peakGFLOPS = "peakGFLOPS"
    public static let promptTokens = "promptTokens"
    public static let weightsBytes = "weightsBytes"
    public static let kvCacheBytes = "kvCacheBytes"
    /// The counter whose maximum is the peak resident memory.
    public static let residentBytesCounter = ProcessMemory.residentCounterName.string
    /// Instants in this category are input arrivals (keystrokes, scroll deltas) for the replay.
    public static let inputCategory = "input"
    /// A thread with this name renders frames (as does any thread that ends or presents one).
    public static let renderThreadName = "render"
    /// The thread with this name is the main thread.
    public static let mainThreadName = "main"
}

public struct AnalyzerOptions: Sendable, Equatable {
    /// Refresh rates to judge/replay at (Hz), in the order they are reported.
    public var refreshRatesHz: [Double]
    /// The device memory budget the LLM memory figures are compared with.
    public var deviceBudgetBytes: UInt64
    public init(refreshRatesHz: [Double] = [60, 120], deviceBudgetBytes: UInt64 = 1_200_000_000) {
        self.refreshRatesHz = refreshRatesHz
        self.deviceBudgetBytes = deviceBudgetBytes
    }
}

/// Drives one streaming pass over one or more traces (runs) and produces `Analysis`.
/// Figures aggregate over runs; frames never join across runs. Memory is bounded: per-event data
/// is folded into fixed-size aggregates, sketches and rings as it streams past.
public struct Analyzer: Sendable {
    public let options: AnalyzerOptions

    // Shared tables.
    private var names = NameTable()
    private var threadNames = NameTable()
    // Passes.
    private var stageCost = StageCost()
    private var views = ViewUpdates()
    private var invalidations = InvalidationGraph()
    private var decode = DecodeBandwidth()
    private var tokens = TokenDelivery()
    private var samples = SampleProfile()
    private var stacks = StackStore()
    private var recorded = HitchAccumulator(source: "recorded", rateHz: 0)
    private var replays: [ReplayTimeline]
    private var recordedJudge = LatenessJudge()
    private var attribution = HitchAttributionPass()

    // Results gathered across runs.
    private var runs: [RunSummary] = []
    private var metadata: [String: String] = [:]
    private var droppedEvents: UInt64 = 0
    private var eventCount: UInt64 = 0
    private var rateCounts: [Double: Int] = [:]
    /// Frames at the same rate as the previous one, not yet in `rateCounts` (no hashing per frame).
    private var lastRateHz: Double = .nan
    private var lastRateRepeats = 0
    private var refreshChanges: [RefreshRateChange] = []
    private var frameSamples: [FrameSample] = []
    private var framesTruncated = false
    private var peakResidentBytes: UInt64 = 0
    private var warnings: [String] = []

    // Per-run state.
    private var run = -1
    private var nameIndex = DenseIndex()
    private var roles = ThreadRoles()
    private var threadNameIndex: [Int32] = []
    private var hasMainThread = false
    private var runStartNs: Int64 = .max
    private var runLastNs: Int64 = .min
    private var runEvents: UInt64 = 0
    private var runDropped: UInt64 = 0
    private var runFrames = 0
    private var runMetadata: [String: String] = [:]
    private var inputCategory: Int32 = -1
    private var residentCounter: Int32 = -1
    private var interactions = InteractionUnion()
    private var inputs = InputArrivals()
    /// Frames being assembled from events in per-thread (not global) time order.
    private var frames = FrameAssembler()
    private var previousPeriodNs: Int64 = 0
    /// This run's frame samples and refresh-rate changes (from these indexes on) hold absolute times
    /// until the run's first event is known, at its end.
    private var runFirstFrameSample = 0
    private var runFirstRefreshChange = 0

    public init(options: AnalyzerOptions = AnalyzerOptions()) {
        self.options = options
        replays = options.refreshRatesHz.map { ReplayTimeline(rateHz: $0) }
    }

    /// Analyzes events in memory (tests, generators).
    public static func analyze(_ lists: [TraceEventList], options: AnalyzerOptions = AnalyzerOptions()) throws -> Analysis {
        var analyzer = Analyzer(options: options)
        for (index, list) in lists.enumerated() {
            var input = list
            try analyzer.add(&input, path: "run \(index + 1)")
        }
        return analyzer.finish()
    }

    // MARK: One run

    /// Streams one trace (one run) through every pass.
    public mutating func add<Input: AnalysisInput>(_ input: inout Input, path: String,
                                                   progress: ((Double) -> Void)? = nil) throws {
        beginRun()
        var sinceProgress = 0
        // One event value, decoded into in place: no per-event copy of the payload enum.
        var event = TraceEvent(timestampNs: 0, thread: ThreadID(rawValue: 0), payload: .droppedEvents(count: 0))
        do {
            while try input.nextEvent(into: &event) {
                consume(&event, input)
                sinceProgress &+= 1
                if sinceProgress & 0xFFFFF == 0, let progress, let fraction = input.progress { progress(fraction) }
            }
        } catch {
            endRun(path: path)
            throw error
        }
        endRun(path: path)
    }

    private mutating func beginRun() {
        run += 1
        nameIndex.removeAll()
        roles.removeAll()
        threadNameIndex.removeAll(keepingCapacity: true)
        hasMainThread = false
        runStartNs = .max; runLastNs = .min
        runEvents = 0; runDropped = 0; runFrames = 0
        runMetadata = [:]
        inputCategory = -1; residentCounter = -1
        interactions.reset()
        inputs.reset()
        frames.reset()
        previousPeriodNs = 0
        runFirstFrameSample = frameSamples.count
        runFirstRefreshChange = refreshChanges.count
        recordedJudge.reset()
        stageCost.beginRun(); stacks.removeAll()
        attribution.beginRun(run)
        recorded.beginRun(run)
        for i in replays.indices { replays[i].beginRun(run) }
    }

    @inline(__always)
    private mutating func name<Input: AnalysisInput>(_ id: StringID, _ input: Input) -> Int32 {
        let known = nameIndex.lookup(id.rawValue)
        if known >= 0 { return known }
        let index = names.index(of: input.string(id))
        nameIndex.set(id.rawValue, index)
        return index
    }

    /// The thread's role; resolves its name the first time it is seen.
    @inline(__always)
    private mutating func role<Input: AnalysisInput>(of thread: ThreadID, _ input: Input) -> ThreadRole {
        let known = roles[thread.rawValue]
        return known != .unknown ? known : classify(thread, input)
    }

    private mutating func classify<Input: AnalysisInput>(_ thread: ThreadID, _ input: Input) -> ThreadRole {
        let raw = Int(thread.rawValue)
        if raw >= threadNameIndex.count {
            threadNameIndex.append(contentsOf: repeatElement(-1, count: raw + 1 - threadNameIndex.count))
        }
        let text = input.threadName(thread)
        let isMain = text == MetadataKey.mainThreadName && !hasMainThread
        if isMain { hasMainThread = true }
        let isRender = !isMain && text == MetadataKey.renderThreadName
        roles[thread.rawValue] = isMain ? .main : (isRender ? .render : .other)
        threadNameIndex[raw] = threadNames.index(of: text)
        stageCost.setThread(thread, isMain: isMain, isRender: isRender, name: threadNameIndex[raw])
        return roles[thread.rawValue]
    }

    /// Without a thread named "main", the first thread that begins a frame is the main thread.
    private mutating func adoptMainThread(_ thread: ThreadID) {
        let raw = Int(thread.rawValue)
        guard !hasMainThread, raw < threadNameIndex.count else { return }
        hasMainThread = true
        roles[thread.rawValue] = .main
        stageCost.setThread(thread, isMain: true, isRender: false, name: threadNameIndex[raw])
    }

    /// A thread that ends or presents frames renders them (unless it is the main thread).
    private mutating func markRenderThread<Input: AnalysisInput>(_ thread: ThreadID, _ input: Input) {
        guard role(of: thread, input) != .main else { return }
        roles[thread.rawValue] = .render
        stageCost.markRenderThread(thread)
    }

    /// Hands the stage instances the last event finished to hitch attribution.
    @inline(__always)
    private mutating func publishFinishedStages() {
        guard !stageCost.finished.isEmpty else { return }
        for instance in stageCost.finished { attribution.stageFinished(instance, roles: roles) }
        stageCost.finished.removeAll(keepingCapacity: true)
    }

    /// `event` is inout only so it is passed by address: read, never changed (a by-value argument
    /// made the caller copy the 64-byte event per call).
    private mutating func consume<Input: AnalysisInput>(_ event: inout TraceEvent, _ input: Input) {
        runEvents += 1
        // Hostile timestamps are clamped once here; see `clampedTime`.
        let t = clampedTime(event.timestampNs)
        switch event.payload {
        case .intervalComplete(_, let n, let rawEndNs):
            let endNs = clampedTime(rawEndNs)
            noteTime(t, endNs)
            _ = role(of: event.thread, input)
            stageCost.complete(name: name(n, input), thread: event.thread, startNs: t, endNs: endNs)
            publishFinishedStages()
        case .intervalBegin(_, let n):
            noteTime(t, t)
            _ = role(of: event.thread, input)
            stageCost.begin(name: name(n, input), thread: event.thread, atNs: t)
            publishFinishedStages()
        case .intervalEnd(_, let n):
            noteTime(t, t)
            _ = role(of: event.thread, input)
            stageCost.end(name: name(n, input), thread: event.thread, atNs: t)
            publishFinishedStages()
        case .bodyEvaluation(let body):
            let endNs = clampedTime(body.endNs)
            noteTime(t, endNs)
            _ = role(of: event.thread, input)
            let viewType = name(body.viewType, input)
            views.body(viewType: viewType, startNs: t, endNs: endNs)
            attribution.bodyFinished(BodyInstance(viewType: viewType, thread: event.thread.rawValue, startNs: t, endNs: max(t, endNs)),
                                     roles: roles)
        case .inferenceOp(var op):
            op.endNs = clampedTime(op.endNs)
            noteTime(t, op.endNs)
            let opName = name(op.name, input)
            let unit = name(op.computeUnit, input)
            let names = self.names
            decode.op(op, name: opName, computeUnit: unit, startNs: t) { OpByteKind.of(names[$0]) }
        case .sample(let stack):
            noteTime(t, t)
            if role(of: event.thread, input) == .main {
                samples.sample(stack: stack, atNs: t)
                attribution.mainThreadSample(SampleInstance(atNs: t, stack: stack.rawValue))
            }
        case .frameBegan(let began):
            noteTime(t, t)
            if role(of: event.thread, input) != .main { adoptMainThread(event.thread) }
            frames.update(began.frameID, began: true) { frame in
                frame.beganNs = t
                frame.vsyncNs = clampedTime(began.vsyncNs)
                frame.targetNs = clampedTime(began.targetNs)
                frame.periodNs = sanePeriod(began.periodNs)
            }
            drainFrames()
        case .frameCommitted(let id):
            noteTime(t, t)
            frames.update(id) { $0.commitNs = t }
        case .frameRenderEnded(let id):
            noteTime(t, t)
            markRenderThread(event.thread, input)
            frames.update(id) { $0.renderEndNs = t }
        case .framePresented(let id):
            noteTime(t, t)
            markRenderThread(event.thread, input)
            frames.update(id) { $0.presentNs = t }
            drainFrames()
        case .instant(let category, _):
            noteTime(t, t)
            if inputCategory < 0 { inputCategory = names.index(of: MetadataKey.inputCategory) }
            if name(category, input) == inputCategory { inputs.add(t) }
        case .counter(let n, let value):
            noteTime(t, t)
            if residentCounter < 0 { residentCounter = names.index(of: MetadataKey.residentBytesCounter) }
            if name(n, input) == residentCounter, value.isFinite, value > 0, value < 1.8e19 {
                peakResidentBytes = max(peakResidentBytes, UInt64(value))
            }
        case .invalidation(let inv):
            noteTime(t, t)
            invalidations.add(source: name(inv.source, input), target: name(inv.target, input), stack: inv.stack)
        case .layoutPass(let rawEndNs, let viewCount):
            let endNs = clampedTime(rawEndNs)
            noteTime(t, endNs)
            views.layoutPass(startNs: t, endNs: endNs, viewCount: viewCount)
        case .token(let token):
            noteTime(t, t)
            tokens.token(token, atNs: t)
            if token.stage == .produced { decode.tokenProduced(atNs: t) }
        case .interactionBegin:
            noteTime(t, t)
            interactions.add(t, isBegin: true)
        case .interactionEnd:
            noteTime(t, t)
            interactions.add(t, isBegin: false)
        case .stackDefinition(let stack, let addresses):
            stacks.define(stack, addresses: addresses)
        case .symbol(let symbol):
            let function = input.string(symbol.function)
            let named = function.isEmpty
                ? names.index(of: Symbol.displayName(function: function, image: input.string(symbol.image), offset: symbol.offset))
                : name(symbol.function, input)
            stacks.symbol(address: symbol.address, size: symbol.size, function: named)
        case .metadata(let key, let value):
            let k = input.string(key)
            if runMetadata[k] == nil { runMetadata[k] = input.string(value) }
        case .droppedEvents(let count):
            runDropped &+= count
        }
    }

    @inline(__always)
    private mutating func noteTime(_ start: Int64, _ end: Int64) {
        if start < runStartNs { runStartNs = start }
        if end > runLastNs { runLastNs = end }
    }

    // MARK: Frames

    /// Judges every frame that is final, in the order frames began.
    private mutating func drainFrames(all: Bool = false) {
        while var frame = frames.nextReady(all: all) {
            if frame.hasBegan { frame.inputArrivalNs = inputs.take(beganNs: frame.beganNs) }
            finalize(frame)
        }
    }

    private mutating func finalize(_ frame: FrameRecord) {
        guard frame.hasBegan else { return }   // events of a frame whose begin is not in this trace
        runFrames += 1
        guard let judged = judgeRecorded(frame, judge: &recordedJudge) else {
            recorded.addUnjudged()
            return
        }
        recorded.add(judged)
        let hz = (1e10 / Double(frame.periodNs)).rounded() / 10
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
            s.kind = judged.kind.rawValue
            frameSamples.append(s)
        } else {
            framesTruncated = true
        }
        // Replay: input frames are released when their input arrived (never later than their vsync).
        let isInput = frame.inputArrivalNs != .min
        let release = isInput ? min(frame.inputArrivalNs, frame.vsyncNs) : frame.vsyncNs
        for i in replays.indices {
            replays[i].add(frameID: frame.frameID, releaseNs: release, isInput: isInput,
                           mainWorkNs: judged.mainWorkNs, renderNs: judged.renderNs)
        }
        if judged.hitchNs > 0 { attribution.hitch(frame, judged, roles: roles, names: names) }
    }

    /// A warning shown with the analysis (e.g. the reader's skipped records).
    public mutating func addWarning(_ warning: String) {
        if warnings.count < 100 { warnings.append(warning) }
    }

    // MARK: End of a run, end of the analysis

    private mutating func flushRateCount() {
        if lastRateRepeats > 0 { rateCounts[lastRateHz, default: 0] += lastRateRepeats }
        lastRateRepeats = 0
    }

    private mutating func endRun(path: String) {
        drainFrames(all: true)
        flushRateCount()
        lastRateHz = .nan
        stageCost.endRun()
        publishFinishedStages()
        resolveRunTimes()
        let union = interactions.unionNs(runEndNs: runLastNs)
        recorded.endRun(interactionUnionNs: union)
        for i in replays.indices { replays[i].endRun(interactionUnionNs: union) }
        tokens.endRun()
        stacks.prepare()
        let names = self.names
        let stacks = self.stacks
        invalidations.endRun { raw in
            guard let writer = stacks.writer(raw, names: names) else { return -1 }
            return self.names.index(of: writer)
        }
        samples.endRun(stacks: stacks, names: self.names)
        attribution.endRun(runStartNs: runStartNs, stacks: stacks, names: self.names)
        let promptTokens = runMetadata[MetadataKey.promptTokens].flatMap { Int($0) }
        decode.endRun(promptTokensFromMetadata: promptTokens)
        for (key, value) in runMetadata where metadata[key] == nil { metadata[key] = value }

        var summary = RunSummary()
        summary.path = path
        summary.eventCount = runEvents
        summary.droppedEvents = runDropped
        summary.durationMs = runLastNs > runStartNs ? milliseconds(runLastNs - runStartNs) : 0
        summary.frameCount = runFrames
        runs.append(summary)
        eventCount &+= runEvents
        droppedEvents &+= runDropped
    }

    /// Makes this run's frame times relative to its first event, which is known only now: an
    /// earlier event may reach the file after any frame (per-thread order).
    private mutating func resolveRunTimes() {
        let start = runStartNs == .max ? 0 : runStartNs
        func relative(_ absolute: Double) -> Double { milliseconds(Int64(clampingDouble: absolute).subtractingSaturated(start)) }
        for i in runFirstFrameSample..<frameSamples.count { frameSamples[i].startMs = relative(frameSamples[i].startMs) }
        for i in runFirstRefreshChange..<refreshChanges.count { refreshChanges[i].atMs = relative(refreshChanges[i].atMs) }
        recorded.resolveRunStart(run, runStartNs: start)
        for i in replays.indices { replays[i].resolveRunStart(run, runStartNs: start) }
    }

    /// The analysis of every run added so far.
    public func finish() -> Analysis {
        var a = Analysis()
        a.runs = runs
        a.metadata = metadata
        a.droppedEvents = droppedEvents
        a.eventCount = eventCount
        a.refreshRatesHz = options.refreshRatesHz
        a.recordedRates = rateCounts.map { rate, count in var r = RecordedRate(); r.rateHz = rate; r.frameCount = count; return r }
            .sorted { ($0.frameCount, $1.rateHz) > ($1.frameCount, $0.rateHz) }
        let dominantPeriodMs = a.recordedRates.first.map { 1000 / $0.rateHz } ?? 0
        a.recorded = recorded.figures(periodMs: a.recordedRates.count == 1 ? dominantPeriodMs : 0)
        if a.recordedRates.count == 1 { a.recorded.rateHz = a.recordedRates[0].rateHz }
        a.refreshRateChanges = refreshChanges
        for (i, rate) in options.refreshRatesHz.enumerated() {
            let key = Self.rateKey(rate)
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
        a.frames = frameSamples
        a.framesTruncated = framesTruncated
        a.stages = stageCost.figures(names: names, threadNames: threadNames, inHitchNs: attribution.inHitchNsByStage)
        a.views = views.figures(names: names, frameCount: recorded.frames)
        a.layout = views.layoutFigures()
        let graph = invalidations.figures(names: names)
        a.invalidations = graph.edges
        a.invalidationSources = graph.sources
        a.hitchAttributions = attribution.attributions
        a.offenders = attribution.offenders(names: names)
        a.samples = samples.figures()
        a.samples.samplesInHitches = attribution.samplesInHitches
        a.samples.foldedInHitches = SampleProfile.list(attribution.foldedInHitches)
        a.decode = decode.figures(names: names, metadata: metadata, peakResidentBytes: peakResidentBytes,
                                  deviceBudgetBytes: options.deviceBudgetBytes)
        let dominantPeriodNs = Int64(clampingDouble: dominantPeriodMs * 1e6)
        a.tokens = tokens.figures(periodNs: dominantPeriodNs)
        var warnings = self.warnings
        if stageCost.unmatchedEnds > 0 { warnings.append("\(stageCost.unmatchedEnds) interval ends had no matching begin") }
        if stageCost.unclosedBegins > 0 { warnings.append("\(stageCost.unclosedBegins) interval begins had no end (closed at the thread's last event)") }
        if recorded.figures(periodMs: 0).unjudgedFrames > 0 {
            warnings.append("\(recorded.figures(periodMs: 0).unjudgedFrames) frames had no commit and were not judged")
        }
        if attribution.framesWithShortHistory > 0 {
            warnings.append("\(attribution.framesWithShortHistory) hitching frames were judged after part of their work left the attribution history (their attribution may be short)")
        }
        if invalidations.droppedEdges > 0 { warnings.append("\(invalidations.droppedEdges) invalidations beyond the edge limit were not graphed") }
        a.warnings = warnings
        return a
    }

    /// "60", "120", "59.94": the JSON key of a refresh rate.
    public static func rateKey(_ rateHz: Double) -> String {
        rateHz == rateHz.rounded() && abs(rateHz) < 1e15 ? String(Int(rateHz)) : String(rateHz)
    }
}
