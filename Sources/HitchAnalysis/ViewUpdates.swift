import HitchTrace

/// Per view type: body evaluations, total and max time, long updates (> 500 us, > 1 ms).
struct ViewUpdates: Sendable {
    struct Totals: Sendable {
        var count = 0
        var totalNs: Int64 = 0
        var maxNs: Int64 = 0
        var long = 0
        var veryLong = 0
    }
    private(set) var totals: [Totals] = []
    private(set) var layout = LayoutFigures()
    private var layoutNs: Int64 = 0
    private var layoutMaxNs: Int64 = 0

    /// Body evaluations into their view types' totals. Done in batches, over the evaluations this
    /// pass published: one uniqueness check on the totals per batch, not one per evaluation.
    mutating func account(_ bodies: UnsafeBufferPointer<BodyInstance>) {
        guard !bodies.isEmpty else { return }
        var typeCount = totals.count
        for b in bodies where Int(b.viewType) >= typeCount { typeCount = Int(b.viewType) + 1 }
        if typeCount > totals.count { totals.append(contentsOf: repeatElement(Totals(), count: typeCount - totals.count)) }
        totals.withUnsafeMutableBufferPointer { totals in
            // Published bodies end no earlier than they start; view types are NameTable indexes (>= 0).
            for b in bodies { Self.account(&totals[Int(b.viewType)], durationNs: b.endNs - b.startNs) }
        }
    }

    @inline(__always)
    private static func account(_ t: inout Totals, durationNs: Int64) {
        t.count += 1
        t.totalNs +|= durationNs
        if durationNs > t.maxNs { t.maxNs = durationNs }
        if durationNs > longUpdateThresholdNs { t.long += 1 }
        if durationNs > veryLongUpdateThresholdNs { t.veryLong += 1 }
    }

    mutating func layoutPass(startNs: Int64, endNs: Int64, viewCount: UInt32) {
        let duration = max(0, endNs - startNs)
        layout.passes += 1
        layoutNs +|= duration
        layoutMaxNs = max(layoutMaxNs, duration)
        layout.viewsLaidOut +|= UInt64(viewCount)
    }

    func layoutFigures() -> LayoutFigures {
        var result = layout
        result.totalMs = milliseconds(layoutNs)
        result.maxMs = milliseconds(layoutMaxNs)
        return result
    }

    func figures(names: NameTable, frameCount: Int) -> [ViewFigures] {
        var result: [ViewFigures] = []
        for (index, t) in totals.enumerated() where t.count > 0 {
            var f = ViewFigures()
            f.type = names[Int32(index)]
            f.bodyEvaluations = t.count
            f.totalMs = milliseconds(t.totalNs)
            f.maxMs = milliseconds(t.maxNs)
            f.longUpdates = t.long
            f.longUpdatesOver1ms = t.veryLong
            f.evaluationsPerFrame = frameCount > 0 ? Double(t.count) / Double(frameCount) : 0
            result.append(f)
        }
        return result.sorted { ($0.totalMs, $1.type) > ($1.totalMs, $0.type) }
    }
}

extension ViewUpdates: AnalysisPass {
    /// Its own published bodies (`account`), besides the events.
    static var reads: PayloadKinds { [.body, .layoutPass, .publishedBody] }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        switch event.payload {
        case .bodyEvaluation:
            // Counted when handed over (`takePublished`), with the batch.
            context.bodies.append(BodyInstance(viewType: resolved.name, thread: resolved.thread.rawValue,
                                               startNs: resolved.startNs, endNs: max(resolved.startNs, resolved.endNs)))
        case .layoutPass(_, let viewCount):
            layoutPass(startNs: resolved.startNs, endNs: resolved.endNs, viewCount: viewCount)
        default:
            break
        }
    }

    mutating func takePublished(_ context: inout PassContext) {
        context.bodies.withElements { account($0) }
    }

    /// The bodies published since the last batch.
    mutating func endRun(_ context: inout PassContext) {
        takePublished(&context)
    }

    func contribute(to a: inout Analysis, _ context: PassContext) {
        a.views = figures(names: context.names, frameCount: a.recorded.frameCount)
        a.layout = layoutFigures()
    }
}

/// The invalidation cause -> effect graph: written property (or the writer's function from its
/// backtrace) -> invalidated view type, with counts.
struct InvalidationGraph: Sendable {
    struct RunEdge: Hashable, Sendable { var source: Int32; var target: Int32; var stack: UInt32 }
    struct Edge: Hashable, Sendable { var source: Int32; var target: Int32; var writer: Int32 }
    static let noStack = UInt32.max
    static let edgeLimit = 100_000

    private var runEdges: [RunEdge: Int] = [:]
    /// The last edge and its uncounted repeats (writers repeat one edge in bursts: no hashing for those).
    private var lastEdge: RunEdge?
    private var lastEdgeRepeats = 0
    private(set) var edges: [Edge: Int] = [:]
    private(set) var droppedEdges = 0

    mutating func add(source: Int32, target: Int32, stack: StackID?) {
        let key = RunEdge(source: source, target: target, stack: stack?.rawValue ?? Self.noStack)
        if key == lastEdge { lastEdgeRepeats += 1; return }
        flushLastEdge()
        lastEdge = key
        if let count = runEdges[key] { runEdges[key] = count + 1 }
        else if runEdges.count < Self.edgeLimit { runEdges[key] = 1 }
        else { droppedEdges += 1 }
    }

    /// Adds the last edge's repeats (only when the edge is in the table: beyond the limit they were dropped).
    private mutating func flushLastEdge() {
        guard let key = lastEdge, lastEdgeRepeats > 0 else { return }
        if let count = runEdges[key] { runEdges[key] = count + lastEdgeRepeats } else { droppedEdges += lastEdgeRepeats }
        lastEdgeRepeats = 0
    }

    /// Resolves this run's stacks to writer names (`writer(stackRaw)` -> NameTable index or -1).
    mutating func endRun(writer: (UInt32) -> Int32) {
        flushLastEdge()
        lastEdge = nil
        for (key, count) in runEdges {
            let writerIndex = key.stack == Self.noStack ? -1 : writer(key.stack)
            edges[Edge(source: key.source, target: key.target, writer: writerIndex), default: 0] += count
        }
        runEdges.removeAll()
    }

    func figures(names: NameTable) -> (edges: [InvalidationEdge], sources: [InvalidationSource]) {
        // Edges with the same source and target but different writers stay apart (writer is part of the cause).
        var result: [InvalidationEdge] = []
        var bySource: [Int32: (count: Int, targets: Set<Int32>)] = [:]
        for (key, count) in edges {
            var e = InvalidationEdge()
            e.source = names[key.source]
            e.target = names[key.target]
            e.count = count
            e.writer = key.writer >= 0 ? names[key.writer] : nil
            // No property named by the event: the writer's function is the cause.
            let sourceIndex = e.source.isEmpty && key.writer >= 0 ? key.writer : key.source
            e.source = names[sourceIndex]
            result.append(e)
            bySource[sourceIndex, default: (0, [])].count += count
            bySource[sourceIndex, default: (0, [])].targets.insert(key.target)
        }
        result.sort { ($0.count, $1.source, $1.target, $1.writer ?? "") > ($1.count, $0.source, $0.target, $0.writer ?? "") }
        var sources = bySource.map { (key, value) -> InvalidationSource in
            var s = InvalidationSource()
            s.source = names[key]
            s.invalidations = value.count
            s.targetTypes = value.targets.count
            return s
        }
        sources.sort { ($0.invalidations, $0.targetTypes, $1.source) > ($1.invalidations, $1.targetTypes, $0.source) }
        return (result, Array(sources.prefix(20)))
    }
}

extension InvalidationGraph: AnalysisPass {
    static var reads: PayloadKinds { .invalidation }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        if case .invalidation(let invalidation) = event.payload {
            add(source: resolved.name, target: resolved.secondName, stack: invalidation.stack)
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        let stacks = context.stacks, names = context.names
        var resolved = context.names
        endRun { raw in
            guard let writer = stacks.writer(raw, names: names) else { return -1 }
            return resolved.index(of: writer)
        }
        context.names = resolved
    }

    func contribute(to a: inout Analysis, _ context: PassContext) {
        let graph = figures(names: context.names)
        a.invalidations = graph.edges
        a.invalidationSources = graph.sources
        if droppedEdges > 0 { a.warnings.append("\(droppedEdges) invalidations beyond the edge limit were not graphed") }
    }
}
