import HitchReader
import HitchTrace

/// The invalidation cause -> effect graph: written property (or the writer's function from its
/// backtrace) -> invalidated view type, with counts.
struct InvalidationGraphPass: Sendable {
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

extension InvalidationGraphPass: AnalysisPass {
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

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        let graph = figures(names: context.names)
        a.invalidations = graph.edges
        a.invalidationSources = graph.sources
        if droppedEdges > 0 { a.warnings.append("\(droppedEdges) invalidations beyond the edge limit were not graphed") }
    }
}
