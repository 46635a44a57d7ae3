import HitchReader

// Per-stage pipeline cost: every duration event (category `stage` and generic durations from other
// producers) is a stage, keyed by name. Stages nest per thread; self time excludes the time of
// stages nested inside. Producers write either begin/end pairs, complete events in start order
// (parent first) or complete events in end order (children first): all three nest correctly.

struct StageCostPass: Sendable {
    fileprivate struct Open: Sendable {
        var name: Int32
        var startNs: Int64
        var endNs: Int64          // .max while a begin awaits its end
        var childNs: Int64 = 0
    }
    /// A thread's open stages, innermost last. The innermost is held inline: a stage usually
    /// finishes before the thread's next one starts, so the array is touched only where stages nest.
    fileprivate struct OpenStack: Sendable {
        private var innermost = Open(name: -1, startNs: 0, endNs: 0)   // meaningful while count > 0
        private var outer: [Open] = []
        private(set) var count = 0

        var last: Open? { count > 0 ? innermost : nil }

        @inline(__always)
        mutating func append(_ entry: Open) {
            if count > 0 { outer.append(innermost) }
            innermost = entry
            count += 1
        }

        @inline(__always)
        mutating func removeLast() -> Open {
            let entry = innermost
            count -= 1
            if count > 0 { innermost = outer.removeLast() }
            return entry
        }

        mutating func popLast() -> Open? { count > 0 ? removeLast() : nil }

        /// Adds a finished stage's time to the innermost open stage when that one encloses it.
        @inline(__always)
        mutating func addChild(startNs: Int64, endNs: Int64, durationNs: Int64) -> Bool {
            guard count > 0, innermost.startNs <= startNs, innermost.endNs >= endNs else { return false }
            innermost.childNs +|= durationNs
            return true
        }

        /// The depth (0 = outermost) of the innermost begin of `name` still awaiting its end.
        func depthOfOpenBegin(named name: Int32) -> Int? {
            guard count > 0 else { return nil }
            if innermost.endNs == .max && innermost.name == name { return count - 1 }
            return outer.lastIndex(where: { $0.endNs == .max && $0.name == name })
        }
    }
    fileprivate struct ThreadState: Sendable {
        var thread: UInt32 = 0
        var open = OpenStack()
        /// Finished top-level intervals a parent written after them may still enclose, at most
        /// `EventOrder.holdLimit` (`orphanLimit`): a parent's start is older than its emission by
        /// its length, which no bound limits.
        var orphans: [(startNs: Int64, endNs: Int64)] = []
        /// The latest orphan let go at the limit (`.min`: none; clamped times are never `.min`), which a later parent may still enclose.
        var letGoOrphan: (startNs: Int64, endNs: Int64) = (.min, .min)
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
        /// The thread name `threads` was last checked for: the same again changes nothing (the list
        /// only grows, up to its bound), so most instances skip the search.
        var lastThreadName: Int32 = -1
    }
    /// What finishing a stage adds to, apart from its thread: kept beside `threads` so an operation
    /// can hold a thread's state in place (inside `threads`) and change these at once.
    fileprivate struct Tally: Sendable {
        var totals: [Totals] = []          // by NameTable index
        var mainThreadSelfNs: Int64 = 0
        var unmatchedEnds = 0
        var unclosedBegins = 0
        /// Intervals that enclose an orphan let go at the limit: their self time counts its time.
        var parentsOfLetGoOrphans = 0
    }
    /// Orphans kept per thread; past it the older half is let go at once (one move per half).
    static let orphanLimit = EventOrder.holdLimit

    private var threads: [ThreadState] = []
    private var tally = Tally()
    var totals: [Totals] { tally.totals }
    var mainThreadSelfNs: Int64 { tally.mainThreadSelfNs }
    var unmatchedEnds: Int { tally.unmatchedEnds }
    var unclosedBegins: Int { tally.unclosedBegins }

    mutating func beginRun() {
        threads.removeAll(keepingCapacity: true)
    }

    /// A thread's role and name as the dispatcher knows them now, applied before an event's work
    /// (a thread may become the main thread when it begins the first frame).
    typealias ThreadNote = (isMain: Bool, name: Int32)

    @inline(never)
    private mutating func addThreads(through raw: Int) {
        for next in threads.count...raw {
            var state = ThreadState()
            state.thread = UInt32(next)
            threads.append(state)
        }
    }

    /// Runs `body` on a thread's state in place, with the tally beside it: one uniqueness check on
    /// `threads`, no copy of the state. `note`, when given, updates the thread's role and name first.
    @inline(__always)
    private mutating func withThread(_ thread: ThreadID, note: ThreadNote?, _ body: (inout Tally, inout ThreadState) -> Void) {
        let raw = Int(thread.rawValue)
        if raw >= threads.count { addThreads(through: raw) }
        threads.withUnsafeMutableBufferPointer { states in
            if let note { states[raw].isMain = note.isMain; states[raw].threadName = note.name }
            body(&tally, &states[raw])
        }
    }

    mutating func begin(name: Int32, thread: ThreadID, atNs: Int64, note: ThreadNote? = nil, into finished: inout EventScratch<StageInstance>) {
        withThread(thread, note: note) { tally, state in
            tally.closeFinished(&state, before: atNs, into: &finished)
            state.open.append(Open(name: name, startNs: atNs, endNs: .max))
            state.lastNs = max(state.lastNs, atNs)
        }
    }

    mutating func end(name: Int32, thread: ThreadID, atNs: Int64, note: ThreadNote? = nil, into finished: inout EventScratch<StageInstance>) {
        withThread(thread, note: note) { tally, state in
            tally.closeFinished(&state, before: atNs, into: &finished)
            state.lastNs = max(state.lastNs, atNs)
            guard let depth = state.open.depthOfOpenBegin(named: name) else {
                tally.unmatchedEnds += 1
                return
            }
            // Begins above the match never got their end: they end here.
            while state.open.count > depth + 1 {
                var dangling = state.open.removeLast()
                if dangling.endNs == .max { dangling.endNs = atNs; tally.unclosedBegins += 1 }
                tally.finish(dangling, &state, into: &finished)
            }
            var entry = state.open.removeLast()
            entry.endNs = max(atNs, entry.startNs)
            tally.finish(entry, &state, into: &finished)
        }
    }

    /// Inlined into `consume`, its one caller: most events are complete events.
    @inline(__always)
    mutating func complete(name: Int32, thread: ThreadID, startNs: Int64, endNs: Int64, note: ThreadNote? = nil,
                           into finished: inout EventScratch<StageInstance>) {
        withThread(thread, note: note) { tally, state in
            let end = max(startNs, endNs)
            tally.closeFinished(&state, before: startNs, into: &finished)
            var entry = Open(name: name, startNs: startNs, endNs: end)
            // Children that arrived first (end-ordered producers): finished entries inside [start, end].
            while let top = state.open.last, top.endNs != .max, top.startNs >= startNs, top.endNs <= end,
                  !(top.startNs == startNs && top.endNs == end) {
                let child = state.open.removeLast()
                tally.finish(child, &state, adoptedByNext: true, into: &finished)
                entry.childNs +|= child.endNs - child.startNs
            }
            while let orphan = state.orphans.last, orphan.startNs >= startNs, orphan.endNs <= end {
                state.orphans.removeLast()
                entry.childNs +|= orphan.endNs - orphan.startNs
            }
            if state.orphans.isEmpty, state.letGoOrphan.startNs >= startNs, state.letGoOrphan.endNs <= end {
                tally.parentsOfLetGoOrphans += 1
                state.letGoOrphan = (.min, .min)
            }
            state.open.append(entry)
            state.lastNs = max(state.lastNs, end)
        }
    }

    /// An async interval (`Trace.interval` with an `async` body): it may have begun on another
    /// thread, so it does not nest with this thread's stages; its self time was measured per task
    /// by the recorder (docs/METRICS.md "Stages").
    mutating func asyncInterval(name: Int32, thread: ThreadID, startNs: Int64, endNs: Int64, selfNs: Int64, note: ThreadNote? = nil,
                                into finished: inout EventScratch<StageInstance>) {
        withThread(thread, note: note) { tally, state in
            tally.account(name: name, durationNs: endNs - startNs, selfNs: selfNs, state)
            finished.append(StageInstance(name: name, thread: state.thread, startNs: startNs, endNs: endNs, selfNs: selfNs))
        }
    }

    /// Closes everything still open at the end of a run (begins without an end end at the thread's last event).
    mutating func endRun(into finished: inout EventScratch<StageInstance>) {
        for raw in threads.indices {
            withThread(ThreadID(rawValue: UInt32(raw)), note: nil) { tally, state in
                while var entry = state.open.popLast() {
                    if entry.endNs == .max { entry.endNs = max(entry.startNs, state.lastNs); tally.unclosedBegins += 1 }
                    tally.finish(entry, &state, into: &finished)
                }
            }
        }
    }

    /// The stages' figures with their names (time in hitching frames is added by hitch attribution).
    func figures(names: NameTable, threadNames: NameTable) -> [(name: Int32, figures: StageFigures)] {
        var result: [(name: Int32, figures: StageFigures)] = []
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
            result.append((Int32(index), f))
        }
        return result.sorted { ($0.figures.totalMs, $1.figures.name) > ($1.figures.totalMs, $0.figures.name) }
    }
}

extension StageCostPass.Tally {
    /// Pops entries with a known end at or before `t` (nothing that starts at t can be inside them).
    @inline(__always)
    mutating func closeFinished(_ state: inout StageCostPass.ThreadState, before t: Int64, into finished: inout EventScratch<StageInstance>) {
        while let top = state.open.last, top.endNs != .max, top.endNs <= t {
            finish(state.open.removeLast(), &state, into: &finished)
        }
    }

    mutating func finish(_ entry: StageCostPass.Open, _ state: inout StageCostPass.ThreadState, adoptedByNext: Bool = false,
                         into finished: inout EventScratch<StageInstance>) {
        let duration = entry.endNs - entry.startNs
        let selfNs = max(0, duration - entry.childNs)
        if !adoptedByNext && !state.open.addChild(startNs: entry.startNs, endNs: entry.endNs, durationNs: duration) {
            state.orphans.append((entry.startNs, entry.endNs))
            if state.orphans.count > StageCostPass.orphanLimit {
                state.letGoOrphan = state.orphans[StageCostPass.orphanLimit / 2 - 1]
                state.orphans.removeFirst(StageCostPass.orphanLimit / 2)
            }
        }
        account(name: entry.name, durationNs: duration, selfNs: selfNs, state)
        finished.append(StageInstance(name: entry.name, thread: state.thread, startNs: entry.startNs, endNs: entry.endNs, selfNs: selfNs))
    }

    /// One finished instance into its stage's totals (one access to the totals array, not one per field).
    @inline(__always)
    mutating func account(name: Int32, durationNs: Int64, selfNs: Int64, _ state: StageCostPass.ThreadState) {
        let index = Int(name)
        if index >= totals.count { totals.append(contentsOf: repeatElement(StageCostPass.Totals(), count: index + 1 - totals.count)) }
        let isMain = state.isMain, threadName = state.threadName
        if isMain { mainThreadSelfNs +|= selfNs }
        Self.account(&totals[index], durationNs: durationNs, selfNs: selfNs, isMain: isMain, threadName: threadName)
    }

    @inline(__always)
    private static func account(_ t: inout StageCostPass.Totals, durationNs: Int64, selfNs: Int64, isMain: Bool, threadName: Int32) {
        t.count += 1
        t.totalNs +|= durationNs
        t.selfNs +|= selfNs
        t.durations.add(durationNs)
        if isMain {
            t.mainSelfNs +|= selfNs
            t.mainTotalNs +|= durationNs
        }
        if threadName >= 0, threadName != t.lastThreadName {
            t.lastThreadName = threadName
            if t.threads.count < 64, !t.threads.contains(threadName) { t.threads.append(threadName) }
        }
    }
}

extension StageCostPass: AnalysisPass {
    static var reads: PayloadKinds { .intervals }

    mutating func beginRun(_ context: inout PassContext) { beginRun() }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        let raw = Int(resolved.thread.rawValue)
        // The thread's role and name are applied inside the operation's one access to its state.
        let note: ThreadNote = (resolved.role == .main, raw < context.threadNameIndex.count ? context.threadNameIndex[raw] : -1)
        switch event.payload {
        case .intervalComplete:
            complete(name: resolved.name, thread: resolved.thread, startNs: resolved.startNs, endNs: resolved.endNs, note: note,
                     into: &context.finishedStages)
        case .intervalBegin: begin(name: resolved.name, thread: resolved.thread, atNs: resolved.startNs, note: note, into: &context.finishedStages)
        case .intervalEnd: end(name: resolved.name, thread: resolved.thread, atNs: resolved.startNs, note: note, into: &context.finishedStages)
        case .asyncIntervalEnd(let interval) where interval.durationNs >= 0:
            // Only the recorder's async intervals carry their duration and per-task self time.
            asyncInterval(name: resolved.name, thread: resolved.thread, startNs: resolved.startNs, endNs: resolved.endNs,
                          selfNs: min(max(0, interval.selfNs), resolved.endNs - resolved.startNs), note: note, into: &context.finishedStages)
        default:
            withThread(resolved.thread, note: note) { _, _ in }
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        for raw in threads.indices {
            threads[raw].isMain = context.roles[UInt32(raw)] == .main
        }
        endRun(into: &context.finishedStages)
        context.order.countLetGo(tally.parentsOfLetGoOrphans, .parentsOfLetGoIntervals)
        tally.parentsOfLetGoOrphans = 0
    }

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        let stages = figures(names: context.names, threadNames: context.threadNames)
        a.stages = stages.map(\.figures)
        context.stageFigureNames = stages.map(\.name)
        if unmatchedEnds > 0 { a.warnings.append("\(unmatchedEnds) interval ends had no matching begin") }
        if unclosedBegins > 0 { a.warnings.append("\(unclosedBegins) interval begins had no end (closed at the thread's last event)") }
    }
}
