import HitchTrace

/// Metadata keys and well-known names the analyzer reads (docs/METRICS.md "Trace inputs").
public enum MetadataKey {
    public static let peakBandwidthGBps = "peakBandwidthGBps"
    public static let peakGFLOPS = "peakGFLOPS"
    public static let promptTokens = "promptTokens"
    public static let weightsBytes = "weightsBytes"
    public static let kvCacheBytes = "kvCacheBytes"
    /// "false" when the bandwidth probe's arrays were below 4x the last-level cache.
    public static let bandwidthProbeMeetsCacheRule = "bandwidthProbeMeetsCacheRule"
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
    /// Sampled functions keep their full demangled names (default: simplified, `Symbol.displayName`).
    public var fullSymbolNames: Bool
    public init(refreshRatesHz: [Double] = [60, 120], deviceBudgetBytes: UInt64 = 1_200_000_000, fullSymbolNames: Bool = false) {
        self.refreshRatesHz = refreshRatesHz
        self.deviceBudgetBytes = deviceBudgetBytes
        self.fullSymbolNames = fullSymbolNames
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
    private var identityChurn = IdentityChurn()
    private var invalidations = InvalidationGraph()
    private var decode = DecodeBandwidth()
    private var tokens = TokenDelivery()
    private var samples = SampleProfile()
    private var stacks = StackStore()
    private var recorded = HitchAccumulator(source: "recorded", rateHz: 0)
    private var replays: [ReplayTimeline]
    private var recordedJudge = LatenessJudge()

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
    private var attributions: [HitchAttribution] = []
    private var stageOffenders: [Int32: (ms: Double, frames: Int)] = [:]
    private var viewOffenders: [Int32: (ms: Double, frames: Int)] = [:]
    private var peakResidentBytes: UInt64 = 0
    private var warnings: [String] = []

    // Per-run state.
    private var run = -1
    private var nameIndex = DenseIndex()
    private var threadKind: [UInt8] = []          // 0 unknown, 1 main, 2 other
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
    private var lastHitchWindowEndNs: Int64 = .min
    private var pendingAttributions: [(HitchAttribution, [(UInt32, Int)])] = []

    /// Attribution stops scanning a ring after this many consecutive instances older than the window.
    static let scanSlack = 256

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
        threadKind.removeAll(keepingCapacity: true)
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
        lastHitchWindowEndNs = .min
        recordedJudge.reset()
        stageCost.beginRun(); views.beginRun(); identityChurn.beginRun(run); samples.beginRun(); stacks.removeAll()
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

    /// 1 main, 2 other; resolves a thread's name the first time it is seen.
    @inline(__always)
    private mutating func kind<Input: AnalysisInput>(of thread: ThreadID, _ input: Input) -> UInt8 {
        let raw = Int(thread.rawValue)
        if raw < threadKind.count, threadKind[raw] != 0 { return threadKind[raw] }
        return classify(thread, input)
    }

    private mutating func classify<Input: AnalysisInput>(_ thread: ThreadID, _ input: Input) -> UInt8 {
        let raw = Int(thread.rawValue)
        if raw >= threadKind.count {
            threadKind.append(contentsOf: repeatElement(0, count: raw + 1 - threadKind.count))
            threadNameIndex.append(contentsOf: repeatElement(-1, count: raw + 1 - threadNameIndex.count))
        }
        let text = input.threadName(thread)
        let isMain = text == MetadataKey.mainThreadName && !hasMainThread
        if isMain { hasMainThread = true }
        threadKind[raw] = isMain ? 1 : 2
        threadNameIndex[raw] = threadNames.index(of: text)
        stageCost.setThread(thread, isMain: isMain, isRender: text == MetadataKey.renderThreadName, name: threadNameIndex[raw])
        return threadKind[raw]
    }

    /// Without a thread named "main", the first thread that begins a frame is the main thread.
    private mutating func adoptMainThread(_ thread: ThreadID) {
        let raw = Int(thread.rawValue)
        guard !hasMainThread, raw < threadKind.count else { return }
        hasMainThread = true
        threadKind[raw] = 1
        stageCost.setThread(thread, isMain: true, isRender: false, name: threadNameIndex[raw])
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
            _ = kind(of: event.thread, input)
            stageCost.complete(name: name(n, input), thread: event.thread, startNs: t, endNs: endNs)
            if !stageCost.late.isEmpty { takeLateArrivals() }
        case .intervalBegin(_, let n):
            noteTime(t, t)
            _ = kind(of: event.thread, input)
            stageCost.begin(name: name(n, input), thread: event.thread, atNs: t)
            if !stageCost.late.isEmpty { takeLateArrivals() }
        case .intervalEnd(_, let n):
            noteTime(t, t)
            _ = kind(of: event.thread, input)
            stageCost.end(name: name(n, input), thread: event.thread, atNs: t)
            if !stageCost.late.isEmpty { takeLateArrivals() }
        case .bodyEvaluation(let body):
            let endNs = clampedTime(body.endNs)
            noteTime(t, endNs)
            let isMain = kind(of: event.thread, input) == 1
            views.body(viewType: name(body.viewType, input), startNs: t, endNs: endNs, isMainThread: isMain)
            if !views.late.isEmpty { takeLateArrivals() }
        case .viewLifetime(let lifetime):
            noteTime(t, t)
            identityChurn.lifetime(lifetime, type: name(lifetime.viewType, input), thread: event.thread,
                                   atMs: milliseconds(t.subtractingSaturated(runStartNs)))
        case .inferenceOp(var op):
            op.endNs = clampedTime(op.endNs)
            noteTime(t, op.endNs)
            let opName = name(op.name, input)
            let unit = name(op.computeUnit, input)
            let names = self.names
            decode.op(op, name: opName, computeUnit: unit, startNs: t) { OpByteKind.of(names[$0]) }
        case .sample(let stack):
            noteTime(t, t)
            if kind(of: event.thread, input) == 1 {
                samples.sample(stack: stack, atNs: t)
                if t < stageCost.lateBeforeNs { lateSample(stack: stack, atNs: t) }
            }
        case .frameBegan(let began):
            noteTime(t, t)
            if kind(of: event.thread, input) != 1 { adoptMainThread(event.thread) }
            identityChurn.boundary(thread: event.thread)
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
            stageCost.markRenderThread(event.thread)
            frames.update(id) { $0.renderEndNs = t }
        case .framePresented(let id):
            noteTime(t, t)
            stageCost.markRenderThread(event.thread)
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
            identityChurn.boundary(thread: event.thread)
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
            let named = names.index(of: Symbol.displayName(function: input.string(symbol.function), image: input.string(symbol.image),
                                                           offset: symbol.offset, fullNames: options.fullSymbolNames))
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
        recorded.add(judged, runStartNs: runStartNs)
        let hz = (1e10 / Double(frame.periodNs)).rounded() / 10
        if hz == lastRateHz { lastRateRepeats += 1 } else { flushRateCount(); lastRateHz = hz; lastRateRepeats = 1 }
        if previousPeriodNs > 0, abs(Double(frame.periodNs - previousPeriodNs)) > periodTolerance * Double(previousPeriodNs) {
            if refreshChanges.count < 100 {
                var change = RefreshRateChange()
                change.run = run
                change.atMs = milliseconds(frame.vsyncNs.subtractingSaturated(runStartNs))
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
            s.startMs = milliseconds(frame.vsyncNs.subtractingSaturated(runStartNs))
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
                           mainWorkNs: judged.mainWorkNs, renderNs: judged.renderNs, runStartNs: runStartNs)
        }
        if judged.hitchNs > 0 { attribute(frame, judged) }
    }

    // MARK: Hitch attribution

    /// A hitching frame's attribution window, open to late arrivals: stage instances, body evaluations
    /// and samples that other threads' buffers bring to the file after the frame was judged.
    private struct OpenWindow: Sendable {
        var startNs: Int64
        var endNs: Int64
        var hitchMs: Double
        var attribution: HitchAttribution
        var stageTimes: [Int32: (count: Int, ns: Double)] = [:]          // main and render threads
        var concurrentStageTimes: [Int32: (count: Int, ns: Double)] = [:] // every other thread
        var mainStageTimes: [Int32: Double] = [:]
        var bodyTimes: [Int32: (count: Int, ns: Double)] = [:]
        var stackCounts: [UInt32: Int] = [:]
        var windowNs: Double { Double(max(1, endNs - startNs)) }

        mutating func addStage(_ s: StageInstance) {
            let overlap = min(endNs, s.endNs) - max(startNs, s.startNs)
            guard overlap > 0 || (s.startNs == s.endNs && s.startNs >= startNs && s.startNs < endNs) else { return }
            let duration = s.endNs - s.startNs
            let selfOverlap = duration > 0 ? Double(overlap) * Double(s.selfNs) / Double(duration) : 0
            if s.isUIThread {
                stageTimes[s.name, default: (0, 0)].count += 1
                stageTimes[s.name, default: (0, 0)].ns += selfOverlap
            } else {
                concurrentStageTimes[s.name, default: (0, 0)].count += 1
                concurrentStageTimes[s.name, default: (0, 0)].ns += selfOverlap
            }
            if s.isMainThread { mainStageTimes[s.name, default: 0] += selfOverlap }
        }

        mutating func addBody(_ b: BodyInstance) {
            let overlap = min(endNs, b.endNs) - max(startNs, b.startNs)
            guard overlap > 0 || (b.startNs == b.endNs && b.startNs >= startNs && b.startNs < endNs) else { return }
            bodyTimes[b.viewType, default: (0, 0)].count += 1
            bodyTimes[b.viewType, default: (0, 0)].ns += Double(max(0, overlap))
        }
    }
    /// Open windows, oldest first, disjoint and in time order; the oldest retire past `openWindowLimit`.
    private var openWindows: [OpenWindow] = []
    static let openWindowLimit = 256

    private mutating func attribute(_ frame: FrameRecord, _ judged: JudgedFrame) {
        let windowStart = max(frame.vsyncNs, lastHitchWindowEndNs)
        let windowEnd = max(windowStart, judged.kind == .commit ? judged.commitNs : max(judged.commitNs, judged.renderEndNs))
        lastHitchWindowEndNs = windowEnd
        var a = HitchAttribution()
        a.run = run
        a.frameID = frame.frameID
        a.startMs = milliseconds(frame.vsyncNs.subtractingSaturated(runStartNs))
        a.hitchMs = milliseconds(judged.hitchNs)
        a.kind = judged.kind.rawValue
        a.mainThreadMs = milliseconds(judged.mainWorkNs)
        a.renderMs = milliseconds(judged.renderNs)
        var window = OpenWindow(startNs: windowStart, endNs: windowEnd, hitchMs: a.hitchMs, attribution: a)
        // What already arrived: rings are in file order (per thread, in end-time order), so walk back
        // from the newest and stop after `Self.scanSlack` consecutive instances that ended before the window.
        var before = 0
        stageCost.recent.forEachNewestFirst { s in
            if s.endNs < windowStart { before += 1; return before < Self.scanSlack }
            before = 0
            window.addStage(s)
            return true
        }
        before = 0
        views.recent.forEachNewestFirst { b in
            if b.endNs < windowStart { before += 1; return before < Self.scanSlack }
            before = 0
            window.addBody(b)
            return true
        }
        window.stackCounts = samples.countInWindow(startNs: windowStart, endNs: windowEnd)
        openWindows.append(window)
        if openWindows.count > Self.openWindowLimit { retire(openWindows.removeFirst()) }
        setLateLimit()
    }

    /// Instances that start before the newest open window ends may belong to one: the passes hand them over.
    private mutating func setLateLimit() {
        let limit = openWindows.last?.endNs ?? .min
        stageCost.lateBeforeNs = limit
        views.lateBeforeNs = limit
    }

    /// Adds late arrivals (instances finished after their window opened) to the windows they overlap.
    private mutating func takeLateArrivals() {
        for s in stageCost.late {
            for i in openWindows.indices.reversed() {
                if openWindows[i].endNs < s.startNs { break }
                openWindows[i].addStage(s)
            }
        }
        stageCost.late.removeAll(keepingCapacity: true)
        for b in views.late {
            for i in openWindows.indices.reversed() {
                if openWindows[i].endNs < b.startNs { break }
                openWindows[i].addBody(b)
            }
        }
        views.late.removeAll(keepingCapacity: true)
    }

    private mutating func lateSample(stack: StackID, atNs: Int64) {
        for i in openWindows.indices.reversed() {
            if openWindows[i].endNs <= atNs { continue }
            if openWindows[i].startNs <= atNs { openWindows[i].stackCounts[stack.rawValue, default: 0] += 1; return }
        }
    }

    /// Folds a closed window into the figures (stage in-hitch time, offenders, the worst frames' detail).
    private mutating func retire(_ window: OpenWindow) {
        let hitchMs = window.hitchMs, windowNs = window.windowNs
        for (name, value) in window.stageTimes { stageCost.addInHitch(name: name, ns: Int64(clampingDouble: value.ns)) }
        for (name, ns) in window.mainStageTimes where ns > 0 {
            stageOffenders[name, default: (0, 0)].ms += hitchMs * ns / windowNs
            stageOffenders[name, default: (0, 0)].frames += 1
        }
        for (name, value) in window.bodyTimes where value.ns > 0 {
            viewOffenders[name, default: (0, 0)].ms += hitchMs * value.ns / windowNs
            viewOffenders[name, default: (0, 0)].frames += 1
        }
        samples.addHitchWindow(window.stackCounts, hitchMs: hitchMs)

        // Keep the worst `limit` hitching frames in detail.
        let worstKept = pendingAttributions.map(\.0.hitchMs).min() ?? .infinity
        guard attributions.count + pendingAttributions.count < HitchAttribution.limit * 2 || hitchMs > worstKept else { return }
        var a = window.attribution
        a.stages = Self.topNamed(window.stageTimes, names: names, limit: 10)
        a.concurrentStages = Self.topNamed(window.concurrentStageTimes, names: names, limit: 5)
        a.bodies = Self.topNamed(window.bodyTimes, names: names, limit: 10)
        let topStacks = window.stackCounts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(5).map { ($0.key, $0.value) }
        pendingAttributions.append((a, Array(topStacks)))
        if pendingAttributions.count > HitchAttribution.limit * 2 {
            pendingAttributions.sort { $0.0.hitchMs > $1.0.hitchMs }
            pendingAttributions.removeLast(pendingAttributions.count - HitchAttribution.limit)
        }
    }

    private static func topNamed(_ times: [Int32: (count: Int, ns: Double)], names: NameTable, limit: Int) -> [NamedDuration] {
        times.map { key, value -> NamedDuration in
            var d = NamedDuration(); d.name = names[key]; d.count = value.count; d.ms = value.ns / 1e6; return d
        }
        .sorted { ($0.ms, $0.count, $1.name) > ($1.ms, $1.count, $0.name) }
        .prefix(limit).map { $0 }
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
        takeLateArrivals()
        for window in openWindows { retire(window) }
        openWindows.removeAll()
        setLateLimit()
        let union = interactions.unionNs(runEndNs: runLastNs)
        recorded.endRun(interactionUnionNs: union)
        for i in replays.indices { replays[i].endRun(interactionUnionNs: union) }
        tokens.endRun()
        identityChurn.endRun()
        stacks.prepare()
        let names = self.names
        let stacks = self.stacks
        invalidations.endRun { raw in
            guard let writer = stacks.writer(raw, names: names) else { return -1 }
            return self.names.index(of: writer)
        }
        samples.endRun(stacks: stacks, names: self.names)
        for (attribution, stackCounts) in pendingAttributions {
            var a = attribution
            a.stacks = stackCounts.map { stack, count in
                var s = SampledStack(); s.frames = stacks.frames(stack, names: self.names); s.samples = count; return s
            }
            attributions.append(a)
        }
        pendingAttributions.removeAll()
        attributions.sort { ($0.hitchMs, $1.run, $1.startMs) > ($1.hitchMs, $0.run, $0.startMs) }
        if attributions.count > HitchAttribution.limit { attributions.removeLast(attributions.count - HitchAttribution.limit) }
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
        a.stages = stageCost.figures(names: names, threadNames: threadNames)
        a.views = views.figures(names: names, frameCount: recorded.frames)
        a.layout = views.layoutFigures()
        a.identityChurn = identityChurn.figures(names: names)
        let graph = invalidations.figures(names: names)
        a.invalidations = graph.edges
        a.invalidationSources = graph.sources
        a.hitchAttributions = attributions
        var offenders: [Offender] = []
        for (name, value) in stageOffenders {
            var o = Offender(); o.kind = "stage"; o.name = names[name]; o.weightedHitchMs = value.ms; o.hitchingFrames = value.frames
            offenders.append(o)
        }
        for (name, value) in viewOffenders {
            var o = Offender(); o.kind = "view"; o.name = names[name]; o.weightedHitchMs = value.ms; o.hitchingFrames = value.frames
            offenders.append(o)
        }
        for (name, value) in samples.functionOffenders {
            var o = Offender(); o.kind = "function"; o.name = name; o.weightedHitchMs = value.ms; o.hitchingFrames = value.frames
            offenders.append(o)
        }
        a.offenders = Array(offenders.sorted { ($0.weightedHitchMs, $1.kind, $1.name) > ($1.weightedHitchMs, $0.kind, $0.name) }.prefix(30))
        a.samples = samples.figures()
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
        if invalidations.droppedEdges > 0 { warnings.append("\(invalidations.droppedEdges) invalidations beyond the edge limit were not graphed") }
        a.warnings = warnings
        return a
    }

    /// "60", "120", "59.94": the JSON key of a refresh rate.
    public static func rateKey(_ rateHz: Double) -> String {
        rateHz == rateHz.rounded() && abs(rateHz) < 1e15 ? String(Int(rateHz)) : String(rateHz)
    }
}
