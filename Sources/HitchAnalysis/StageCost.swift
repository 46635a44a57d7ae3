import HitchTrace

// Per-stage pipeline cost: every duration event (category `stage` and generic durations from other
// producers) is a stage, keyed by name. Stages nest per thread; self time excludes the time of
// stages nested inside. Producers write either begin/end pairs, complete events in start order
// (parent first) or complete events in end order (children first): all three nest correctly.

/// A finished stage instance, published for hitch attribution.
struct StageInstance: Sendable {
    var name: Int32          // NameTable index
    var thread: UInt32
    var startNs: Int64
    var endNs: Int64
    var selfNs: Int64
}

struct StageCost: Sendable {
    private struct Open: Sendable {
        var name: Int32
        var startNs: Int64
        var endNs: Int64          // .max while a begin awaits its end
        var childNs: Int64 = 0
    }
    private struct ThreadState: Sendable {
        var thread: UInt32 = 0
        var open: [Open] = []
        /// Finished top-level intervals an end-ordered parent may still adopt (bounded).
        var orphans: [(startNs: Int64, endNs: Int64)] = []
        var isMain = false
        var threadName: Int32 = -1
        var lastNs: Int64 = .min
    }
    struct Totals: Sendable {
        var count = 0
        var totalNs: Int64 = 0
        var selfNs: Int64 = 0
        var mainSelfNs: Int64 = 0
        var mainTotalNs: Int64 = 0
        var durations = QuantileSketch()
        var threads: [Int32] = []
    }

    private var threads: [ThreadState] = []
    private(set) var totals: [Totals] = []          // by NameTable index
    private(set) var mainThreadSelfNs: Int64 = 0
    private(set) var unmatchedEnds = 0
    private(set) var unclosedBegins = 0
    /// Instances finished: the context's published list while the pass works (`withPublished`).
    private var finished = EventScratch<StageInstance>()

    mutating func beginRun() {
        threads.removeAll(keepingCapacity: true)
        finished.removeAll()
    }

    @inline(__always)
    private mutating func ensureThread(_ raw: Int) {
        if raw >= threads.count { threads.append(contentsOf: repeatElement(ThreadState(), count: raw + 1 - threads.count)) }
    }

    /// Keeps a thread's role and name as the dispatcher knows them (a thread may become the main
    /// thread when it begins the first frame).
    @inline(__always)
    mutating func noteThread(_ thread: ThreadID, isMain: Bool, name: Int32) {
        let raw = Int(thread.rawValue)
        ensureThread(raw)
        if threads[raw].isMain != isMain || threads[raw].threadName != name {
            threads[raw].isMain = isMain
            threads[raw].threadName = name
        }
    }

    /// A thread's role and name as the dispatcher knows them now, applied before an event's work.
    typealias ThreadNote = (isMain: Bool, name: Int32)

    /// Runs `body` on a thread's state in place, with `threads` moved out of self meanwhile (`body`
    /// changes the rest of self): one uniqueness check on `threads`, no copy of the state. `note`,
    /// when given, updates the thread's role and name first (what `noteThread` does, without a
    /// second access).
    @inline(__always)
    private mutating func withThread(_ thread: ThreadID, note: ThreadNote?, _ body: (inout StageCost, inout ThreadState) -> Void) {
        let raw = Int(thread.rawValue)
        ensureThread(raw)
        var states: [ThreadState] = []
        swap(&states, &threads)
        states.withUnsafeMutableBufferPointer { states in
            states[raw].thread = UInt32(raw)
            if let note { states[raw].isMain = note.isMain; states[raw].threadName = note.name }
            body(&self, &states[raw])
        }
        swap(&states, &threads)
    }

    mutating func begin(name: Int32, thread: ThreadID, atNs: Int64, note: ThreadNote? = nil) {
        withThread(thread, note: note) { cost, state in
            cost.closeFinished(&state, before: atNs)
            state.open.append(Open(name: name, startNs: atNs, endNs: .max))
            state.lastNs = max(state.lastNs, atNs)
        }
    }

    mutating func end(name: Int32, thread: ThreadID, atNs: Int64, note: ThreadNote? = nil) {
        withThread(thread, note: note) { cost, state in
            cost.closeFinished(&state, before: atNs)
            state.lastNs = max(state.lastNs, atNs)
            guard let index = state.open.lastIndex(where: { $0.endNs == .max && $0.name == name }) else {
                cost.unmatchedEnds += 1
                return
            }
            // Begins above the match never got their end: they end here.
            while state.open.count > index + 1 {
                var dangling = state.open.removeLast()
                if dangling.endNs == .max { dangling.endNs = atNs; cost.unclosedBegins += 1 }
                cost.finish(dangling, &state)
            }
            var entry = state.open.removeLast()
            entry.endNs = max(atNs, entry.startNs)
            cost.finish(entry, &state)
        }
    }

    mutating func complete(name: Int32, thread: ThreadID, startNs: Int64, endNs: Int64, note: ThreadNote? = nil) {
        withThread(thread, note: note) { cost, state in
            let end = max(startNs, endNs)
            cost.closeFinished(&state, before: startNs)
            var entry = Open(name: name, startNs: startNs, endNs: end)
            // Children that arrived first (end-ordered producers): finished entries inside [start, end].
            while let top = state.open.last, top.endNs != .max, top.startNs >= startNs, top.endNs <= end,
                  !(top.startNs == startNs && top.endNs == end) {
                let child = state.open.removeLast()
                cost.finish(child, &state, adoptedByNext: true)
                entry.childNs +|= child.endNs - child.startNs
            }
            while let orphan = state.orphans.last, orphan.startNs >= startNs, orphan.endNs <= end {
                state.orphans.removeLast()
                entry.childNs +|= orphan.endNs - orphan.startNs
            }
            state.open.append(entry)
            state.lastNs = max(state.lastNs, end)
        }
    }

    /// Pops entries with a known end at or before `t` (nothing that starts at t can be inside them).
    @inline(__always)
    private mutating func closeFinished(_ state: inout ThreadState, before t: Int64) {
        while let top = state.open.last, top.endNs != .max, top.endNs <= t {
            finish(state.open.removeLast(), &state)
        }
    }

    private mutating func finish(_ entry: Open, _ state: inout ThreadState, adoptedByNext: Bool = false) {
        let duration = entry.endNs - entry.startNs
        let selfNs = max(0, duration - entry.childNs)
        if !adoptedByNext {
            if let parentIndex = state.open.indices.last,
               state.open[parentIndex].startNs <= entry.startNs,
               state.open[parentIndex].endNs >= entry.endNs {
                state.open[parentIndex].childNs +|= duration
            } else {
                state.orphans.append((entry.startNs, entry.endNs))
                if state.orphans.count > 256 { state.orphans.removeFirst(128) }
            }
        }
        let index = Int(entry.name)
        if index >= totals.count { totals.append(contentsOf: repeatElement(Totals(), count: index + 1 - totals.count)) }
        let isMain = state.isMain
        if isMain { mainThreadSelfNs +|= selfNs }
        Self.account(&totals[index], durationNs: duration, selfNs: selfNs, isMain: isMain, threadName: state.threadName)
        finished.append(StageInstance(name: entry.name, thread: state.thread, startNs: entry.startNs, endNs: entry.endNs, selfNs: selfNs))
    }

    /// One finished instance into its stage's totals (one access to the totals array, not one per field).
    @inline(__always)
    private static func account(_ t: inout Totals, durationNs: Int64, selfNs: Int64, isMain: Bool, threadName: Int32) {
        t.count += 1
        t.totalNs +|= durationNs
        t.selfNs +|= selfNs
        t.durations.add(durationNs)
        if isMain {
            t.mainSelfNs +|= selfNs
            t.mainTotalNs +|= durationNs
        }
        if threadName >= 0, t.threads.count < 64, !t.threads.contains(threadName) { t.threads.append(threadName) }
    }

    /// An async interval (`Trace.interval` with an `async` body): it may have begun on another
    /// thread, so it does not nest with this thread's stages; its self time was measured per task
    /// by the recorder (docs/METRICS.md "Stages").
    mutating func asyncInterval(name: Int32, thread: ThreadID, startNs: Int64, endNs: Int64, selfNs: Int64, note: ThreadNote? = nil) {
        withThread(thread, note: note) { cost, state in
            let index = Int(name)
            if index >= cost.totals.count { cost.totals.append(contentsOf: repeatElement(Totals(), count: index + 1 - cost.totals.count)) }
            if state.isMain { cost.mainThreadSelfNs +|= selfNs }
            Self.account(&cost.totals[index], durationNs: endNs - startNs, selfNs: selfNs, isMain: state.isMain, threadName: state.threadName)
            cost.finished.append(StageInstance(name: name, thread: state.thread, startNs: startNs, endNs: endNs, selfNs: selfNs))
        }
    }

    /// Closes everything still open at the end of a run (begins without an end end at the thread's last event).
    mutating func endRun() {
        for raw in threads.indices {
            withThread(ThreadID(rawValue: UInt32(raw)), note: nil) { cost, state in
                while var entry = state.open.popLast() {
                    if entry.endNs == .max { entry.endNs = max(entry.startNs, state.lastNs); cost.unclosedBegins += 1 }
                    cost.finish(entry, &state)
                }
            }
        }
    }

    /// The stages' figures (time in hitching frames is added by hitch attribution).
    func figures(names: NameTable, threadNames: NameTable) -> [StageFigures] {
        var result: [StageFigures] = []
        for (index, t) in totals.enumerated() where t.count > 0 {
            var f = StageFigures()
            f.name = names[Int32(index)]
            f.count = t.count
            f.totalMs = milliseconds(t.totalNs)
            f.selfMs = milliseconds(t.selfNs)
            f.meanMs = milliseconds(Double(t.totalNs) / Double(t.count))
            let q = t.durations.quantiles([0.5, 0.95, 0.99])
            f.p50Ms = q[0] / 1e6
            f.p95Ms = q[1] / 1e6
            f.p99Ms = q[2] / 1e6
            f.maxMs = milliseconds(t.durations.maximum)
            f.threads = t.threads.map { threadNames[$0] }.sorted()
            f.mainThreadShare = mainThreadSelfNs > 0 ? Double(t.mainSelfNs) / Double(mainThreadSelfNs) : 0
            f.onMainThreadFraction = t.totalNs > 0 ? Double(t.mainTotalNs) / Double(t.totalNs) : 0
            f.mainThreadMs = milliseconds(t.mainTotalNs)
            result.append(f)
        }
        return result.sorted { ($0.totalMs, $1.name) > ($1.totalMs, $0.name) }
    }
}

extension StageCost: AnalysisPass {
    static var reads: PayloadKinds { .intervals }

    mutating func beginRun(_ context: inout PassContext) { beginRun() }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        let raw = Int(resolved.thread.rawValue)
        // The thread's role and name are applied inside the operation's one access to its state.
        let note: ThreadNote = (resolved.role == .main, raw < context.threadNameIndex.count ? context.threadNameIndex[raw] : -1)
        swap(&finished, &context.finishedStages)
        defer { swap(&finished, &context.finishedStages) }
        switch event.payload {
        case .intervalComplete: complete(name: resolved.name, thread: resolved.thread, startNs: resolved.startNs, endNs: resolved.endNs, note: note)
        case .intervalBegin: begin(name: resolved.name, thread: resolved.thread, atNs: resolved.startNs, note: note)
        case .intervalEnd: end(name: resolved.name, thread: resolved.thread, atNs: resolved.startNs, note: note)
        case .asyncIntervalEnd(let interval) where interval.durationNs >= 0:
            // Only the recorder's async intervals carry their duration and per-task self time.
            asyncInterval(name: resolved.name, thread: resolved.thread, startNs: resolved.startNs, endNs: resolved.endNs,
                          selfNs: min(max(0, interval.selfNs), resolved.endNs - resolved.startNs), note: note)
        default:
            noteThread(resolved.thread, isMain: note.isMain, name: note.name)
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        for raw in threads.indices {
            threads[raw].isMain = context.roles[UInt32(raw)] == .main
        }
        swap(&finished, &context.finishedStages)
        endRun()
        swap(&finished, &context.finishedStages)
    }

    func contribute(to a: inout Analysis, _ context: PassContext) {
        a.stages = figures(names: context.names, threadNames: context.threadNames)
        if unmatchedEnds > 0 { a.warnings.append("\(unmatchedEnds) interval ends had no matching begin") }
        if unclosedBegins > 0 { a.warnings.append("\(unclosedBegins) interval begins had no end (closed at the thread's last event)") }
    }
}
