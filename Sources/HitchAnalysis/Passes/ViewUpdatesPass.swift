import HitchReader

/// Per view type: body evaluations, total and max time, long updates (> 500 us, > 1 ms).
struct ViewUpdatesPass: Sendable {
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

extension ViewUpdatesPass: AnalysisPass {
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

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        a.views = figures(names: context.names, frameCount: a.recorded.frameCount)
        a.layout = layoutFigures()
    }
}
