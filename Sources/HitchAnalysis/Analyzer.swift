import HitchReader
import HitchTrace

/// Drives one streaming pass over one or more traces (runs) and produces `Analysis`: resolves each
/// event (clamped times, thread role, interned names) and hands it to the passes that read its kind
/// (`AnalysisPasses`, in registration order). Figures aggregate over runs; frames never join across
/// runs. Memory is bounded: passes fold per-event data into fixed-size aggregates, sketches and rings.
public struct Analyzer: Sendable {
    public let options: AnalyzerOptions
    private var context: PassContext
    private var passes: AnalysisPasses

    // Results gathered across runs.
    /// The analysis' own part, filled as runs are added: their summaries, the metadata (each key as
    /// the first run that had it gave it), the event counts and the warnings. The passes contribute
    /// the rest when it finishes.
    private var gathered = Analysis()
    /// Runs whose frames carry no work times (metadata `frameWorkTimes` `none`), with where they came from.
    private var runsWithoutFrameWork: [(path: String, source: String?)] = []

    // Per-run state of the dispatcher itself.
    private var nameIndex = DenseIndex()
    private var hasMainThread = false
    private var mainThreads = MainThreadChoice()
    /// Set at the end of a read whose main-thread guess was not the rule's choice (`MainThreadChoice`).
    private var rereadMainThreads: Set<UInt32>?
    private var runEvents: UInt64 = 0
    private var runDropped: UInt64 = 0

    public init(options: AnalyzerOptions = AnalyzerOptions()) {
        self.options = options
        context = PassContext(options: options)
        passes = AnalysisPasses(options: options)
    }

    /// A warning shown with the analysis (e.g. the reader's skipped records).
    public mutating func addWarning(_ warning: String) {
        if gathered.warnings.count < 100 { gathered.warnings.append(warning) }
    }

    // MARK: One run

    /// Streams one trace (one run) through every pass. A run whose main thread is known only at
    /// its end (docs/METRICS.md "Choosing the main thread") is read a second time with it fixed.
    public mutating func add<Input: TraceInput>(_ input: inout Input, path: String,
                                                   progress: ((Double) -> Void)? = nil) throws {
        let beforeRun = self
        try read(&input, path: path, progress: progress, mainThreads: nil)
        guard let chosen = rereadMainThreads else { return }
        guard try input.rewind() else {
            addWarning("\(path): the main thread was guessed while reading (the input cannot be read twice); main-thread figures may depend on file order")
            return
        }
        self = beforeRun
        try read(&input, path: path, progress: progress, mainThreads: chosen)
    }

    private mutating func read<Input: TraceInput>(_ input: inout Input, path: String, progress: ((Double) -> Void)?,
                                                     mainThreads forced: Set<UInt32>?) throws {
        beginRun(mainThreads: forced)
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
            nameThreadsAsTheTraceLastDoes(input)
            endRun(path: path, cutShortAtOffset: input.cutShortAtOffset)
            throw error
        }
        nameThreadsAsTheTraceLastDoes(input)
        endRun(path: path, cutShortAtOffset: input.cutShortAtOffset)
    }

    /// A thread's first record can come before the record that names it (a context switch of a
    /// thread flushed ahead of its own events): the passes' end of run names threads by the trace's
    /// last word on them, so figures never say `thread <tid>` for a thread the trace does name.
    private mutating func nameThreadsAsTheTraceLastDoes<Input: TraceInput>(_ input: Input) {
        for raw in context.threadNameIndex.indices where context.threadNameIndex[raw] >= 0 {
            context.threadNameIndex[raw] = context.threadNames.index(of: input.threadName(ThreadID(rawValue: UInt32(raw))))
        }
    }

    private mutating func beginRun(mainThreads forced: Set<UInt32>?) {
        context.run += 1
        nameIndex.removeAll()
        context.roles.removeAll()
        context.threadNameIndex.removeAll(keepingCapacity: true)
        context.stacks.removeAll()
        context.runStartNs = .max; context.order = EventOrder()
        context.runMetadata = [:]
        hasMainThread = false
        mainThreads = MainThreadChoice(forced: forced)
        rereadMainThreads = nil
        runEvents = 0; runDropped = 0
        var visitor = BeginRun(context: context)
        passes.visit(&visitor)
        context = visitor.context
    }

    @inline(__always)
    private mutating func name<Input: TraceInput>(_ id: StringID, _ input: Input) -> Int32 {
        let known = nameIndex.lookup(id.rawValue)
        if known >= 0 { return known }
        let index = context.names.index(of: input.string(id))
        nameIndex.set(id.rawValue, index)
        return index
    }

    /// The thread's role; resolves its name the first time it is seen.
    @inline(__always)
    private mutating func role<Input: TraceInput>(of thread: ThreadID, _ input: Input) -> FrameThreadRole {
        let known = context.roles[thread.rawValue]
        return known != .unknown ? known : classify(thread, input)
    }

    private mutating func classify<Input: TraceInput>(_ thread: ThreadID, _ input: Input) -> FrameThreadRole {
        let raw = Int(thread.rawValue)
        if raw >= context.threadNameIndex.count {
            context.threadNameIndex.append(contentsOf: repeatElement(-1, count: raw + 1 - context.threadNameIndex.count))
        }
        let text = input.threadName(thread)
        // A role (Trace.setThreadRole) decides; a thread without one falls back to its name. Both
        // are known before the thread's first event; whether another thread has the role is known
        // only at the end of the run (`MainThreadChoice` checks the guess made here).
        let recordedRole = input.threadRole(thread)
        mainThreads.saw(thread.rawValue, key: input.threadKoids(thread) ?? (0, UInt64(thread.rawValue)), role: recordedRole, name: text)
        let isMain = mainThreads.forced.map { $0.contains(thread.rawValue) }
            ?? (recordedRole == ThreadRole.main.rawValue || (recordedRole == nil && text == ThreadRole.main.rawValue && !hasMainThread))
        if isMain {
            hasMainThread = true
            mainThreads.becameMain(thread.rawValue, fromFirstEvent: true)
        }
        let isRender = recordedRole.map { $0 == ThreadRole.render.rawValue } ?? (text == ThreadRole.render.rawValue)
        let role: FrameThreadRole = isMain ? .main : (isRender ? .render : .other)
        context.roles[thread.rawValue] = role
        context.threadNameIndex[raw] = context.threadNames.index(of: text)
        return role
    }

    /// `event` is inout only so it is passed by address: read, never changed (a by-value argument
    /// made the caller copy the 64-byte event per call).
    private mutating func consume<Input: TraceInput>(_ event: inout TraceEvent, _ input: Input) {
        runEvents += 1
        // Hostile timestamps are clamped once here; see `clampedTime`.
        let t = clampedTime(event.timestampNs)
        var resolved = PassEvent(startNs: t, endNs: t, thread: event.thread, role: .unknown, name: -1, secondName: -1)
        switch event.payload {
        case .intervalBegin(_, let n), .intervalEnd(_, let n), .counter(let n, _):
            resolved.name = name(n, input)
        case .intervalComplete(_, let n, let endNs):
            resolved.name = name(n, input); resolved.endNs = clampedTime(endNs)
        case .instant(let category, let instantName):
            resolved.name = name(category, input); resolved.secondName = name(instantName, input)
        case .bodyEvaluation(let body):
            resolved.name = name(body.viewType, input); resolved.endNs = clampedTime(body.endNs)
        case .viewLifetime(let lifetime):
            resolved.name = name(lifetime.viewType, input)
        case .inferenceOp(let op):
            resolved.name = name(op.name, input); resolved.secondName = name(op.computeUnit, input); resolved.endNs = clampedTime(op.endNs)
        case .invalidation(let invalidation):
            resolved.name = name(invalidation.source, input); resolved.secondName = name(invalidation.target, input)
        case .layoutPass(let endNs, _):
            resolved.endNs = clampedTime(endNs)
        case .frameBegan:
            let firstEvent = context.roles[event.thread.rawValue] == .unknown
            let role = role(of: event.thread, input)
            mainThreads.frameBegan(on: event.thread.rawValue)
            // The guess without a main role or name: the first thread that begins a frame.
            if role != .main && !hasMainThread && mainThreads.forced == nil {
                hasMainThread = true
                context.roles[event.thread.rawValue] = .main
                mainThreads.becameMain(event.thread.rawValue, fromFirstEvent: firstEvent)
            }
        case .frameRenderEnded, .framePresented:
            // A thread that ends or presents frames renders them.
            if role(of: event.thread, input) != .main { context.roles[event.thread.rawValue] = .render }
        case .asyncIntervalBegin(_, let n, _):
            resolved.name = name(n, input)
        case .asyncIntervalEnd(let interval):
            // The recorder writes an async interval's duration on its end: the pass sees [start, end].
            resolved.name = name(interval.name, input)
            if interval.durationNs >= 0 { resolved.startNs = clampedTime(t - min(interval.durationNs, 1 << 60)) }
        case .token, .interactionBegin, .interactionEnd, .frameCommitted, .sample:
            break
        case .threadState, .machineState, .schedSwitch:
            break   // read by FramePass (readings) and ThreadStatePass
        case .hang(let hang):
            resolved.name = name(hang.source, input); resolved.secondName = name(hang.type, input); resolved.endNs = clampedTime(hang.endNs)
        case .hangStack(let capture):
            resolved.name = name(capture.systemCall, input); resolved.secondName = name(capture.waitChannel, input)
        case .stackDefinition(let stack, let addresses):
            context.stacks.define(stack, addresses: addresses)
            return
        case .symbol(let symbol):
            let named = context.names.index(of: Symbol.displayName(function: input.string(symbol.function), image: input.string(symbol.image),
                                                                   offset: symbol.offset, fullNames: options.fullSymbolNames))
            context.stacks.symbol(address: symbol.address, size: symbol.size, function: named)
            return
        case .metadata(let key, let value):
            let k = input.string(key)
            if context.runMetadata[k] == nil {
                let text = input.string(value)
                context.runMetadata[k] = text
                if k == MetadataKey.flushIntervalMs.name { context.order.takeFlushInterval(milliseconds: text) }
            }
            return
        case .droppedEvents(let count):
            runDropped &+= count
            return
        }
        if resolved.startNs < context.runStartNs { context.runStartNs = resolved.startNs }
        context.order.admit(emittedAtNs: resolved.endNs)
        resolved.role = role(of: event.thread, input)
        passes.consume(&event, resolved, &context)
    }

    // MARK: End of a run, end of the analysis

    private mutating func endRun(path: String, cutShortAtOffset: UInt64?) {
        rereadMainThreads = mainThreads.reread()
        context.stacks.prepare()   // every symbol is in: passes resolve stacks at their end of run
        var visitor = EndRun(context: context)
        passes.visit(&visitor)
        context = visitor.context
        context.clearPublished()
        for (key, value) in context.runMetadata where gathered.metadata[key] == nil { gathered.metadata[key] = value }
        if context.runMetadata[MetadataKey.frameWorkTimes.name] == "none" {
            runsWithoutFrameWork.append((path, context.runMetadata[MetadataKey.importedFrom.name]))
        }
        for warning in context.order.warnings { addWarning("\(path): \(warning)") }
        var summary = RunSummary()
        summary.path = path
        summary.eventCount = runEvents
        summary.droppedEvents = runDropped
        let runLastNs = context.order.latestNs
        summary.durationMs = runLastNs > context.runStartNs ? milliseconds(runLastNs - context.runStartNs) : 0
        summary.frameCount = passes.frames.runFrames
        summary.endedCleanly = cutShortAtOffset == nil
        summary.cutShortAtByte = cutShortAtOffset
        summary.endedBy = context.runMetadata[MetadataKey.recordingEnded.name]
        summary.endMarker = summary.endedBy != nil ? .present : context.runMetadata[MetadataKey.endMarker.name] != nil ? .missing : .notPromised
        gathered.runs.append(summary)
        gathered.eventCount &+= runEvents
        gathered.droppedEvents &+= runDropped
    }

    /// The analysis of every run added so far.
    public func finish() -> Analysis { finishWithTotals().analysis }

    /// The analysis, and the mergeable totals its figures come from (a trace's summary).
    func finishWithTotals() -> (analysis: Analysis, totals: FigureTotals) {
        var passes = self.passes
        var visitor = Contribute(analysis: gathered, context: context)
        passes.visit(&visitor)
        withholdReplays(&visitor.analysis)
        visitor.analysis.evidence = Evidence(of: visitor.analysis)
        visitor.analysis.headline = Headline(of: visitor.analysis)
        var totals = visitor.context.mergeable
        totals.hitches.rates = totals.hitches.rates.filter { visitor.analysis.hitches[$0.key] != nil }   // the replays withheld
        totals.runs = gathered.runs.count
        totals.runsCutShort = visitor.analysis.evidence.runsCutShort
        totals.runsWithoutEndMarker = visitor.analysis.evidence.runsWithoutEndMarker
        totals.eventCount = gathered.eventCount
        totals.droppedEvents = gathered.droppedEvents
        return (visitor.analysis, totals)
    }
}

extension Analyzer {
    /// A replay stands on each frame's own work; frames without work times (an import of a tool that
    /// records only when frames were shown) would replay the importer's placeholder as the app's
    /// work. So such an analysis keeps only its recorded rates, and says why.
    private func withholdReplays(_ analysis: inout Analysis) {
        guard let first = runsWithoutFrameWork.first else { return }
        let replayed = analysis.hitches.filter { $0.value.source == .replay }.keys.sorted { (Double($0) ?? 0) < (Double($1) ?? 0) }
        guard !replayed.isEmpty else { return }
        analysis.hitches = analysis.hitches.filter { $0.value.source != .replay }
        let source = first.source.map { " (imported from \($0))" } ?? ""
        analysis.replayUnavailable = "the frames of '\(first.path)'\(source) carry no work times, only when they were shown: "
            + "there is no work to replay at \(replayed.map { $0 + " Hz" }.joined(separator: ", ")); only the recorded rate is judged"
    }

    /// "60", "120", "59.94": the JSON key of a refresh rate.
    public static func rateKey(_ rateHz: Double) -> String {
        rateHz == rateHz.rounded() && abs(rateHz) < 1e15 ? String(Int(rateHz)) : String(rateHz)
    }
}
