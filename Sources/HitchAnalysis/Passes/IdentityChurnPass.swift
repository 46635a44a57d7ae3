import HitchReader

// Identity churn (docs/METRICS.md "Identity churn"): which views an update tore down and built,
// and which of those were the same view type rebuilt at the same place under a new identity (the
// mark of ids regenerated per update: the view loses its state and is built from scratch).
//
// An update is the run of view builds and teardowns on one thread up to its next layout pass or
// frame begin (HeadlessUI reconciles children during the update and lazy rows during layout, and
// records the layout pass when layout ends).

struct IdentityChurnPass: Sendable {
    private struct Slot: Hashable, Sendable {
        var parent: UInt64
        var position: Int64
        var type: Int32
    }
    private struct Pending: Sendable {
        var lifetime: ViewLifetime
        var type: Int32
    }
    private struct SlotCount: Sendable {
        var replacements = 0
        var run = 0
        /// The earliest replacement's start in `run`, absolute ns (relative once the run ends).
        var firstNs: Int64 = .max
        var parentType: Int32 = -1
    }
    /// An update with its start in absolute ns: made relative to its run's start only when the
    /// run ends, when that start (the earliest event of the run) is final whatever the file order.
    private struct TimedUpdate: Sendable {
        var update: ChurnUpdate
        var startNs: Int64
    }
    private struct TypeCount: Sendable {
        var built = 0, tornDown = 0, replacements = 0
    }

    private var pending: [Pending] = []
    private var pendingThread = ThreadID(rawValue: 0)
    /// The earliest time among the pending update's events (not the first in file order).
    private var pendingStartNs = Int64.max
    private var run = 0
    private var sawEvents = false

    private var figuresSoFar = IdentityChurnFigures()
    private var types: [Int32: TypeCount] = [:]
    private var slots: [Slot: SlotCount] = [:]
    /// View type of every live view by identity, for the flagged places' parent type.
    private var liveTypes: [UInt64: Int32] = [:]
    private var worstUpdates: [TimedUpdate] = []
    /// Each finished run's start (ns), to make its updates' times relative.
    private var runStartsNs: [Int: Int64] = [:]
    static let slotLimit = 100_000
    static let liveLimit = 1 << 20
    static let pendingLimit = 1 << 18

    mutating func beginRun(_ run: Int) {
        self.run = run
        liveTypes.removeAll()
    }

    mutating func lifetime(_ lifetime: ViewLifetime, type: Int32, thread: ThreadID, atNs: Int64) {
        // Another thread's events, or an update past the limit (a hostile trace without layout
        // passes), close the update: memory stays bounded.
        if !pending.isEmpty && (thread != pendingThread || pending.count >= Self.pendingLimit) { endUpdate() }
        if pending.isEmpty { pendingThread = thread; pendingStartNs = atNs }
        pendingStartNs = min(pendingStartNs, atNs)
        sawEvents = true
        pending.append(Pending(lifetime: lifetime, type: type))
    }

    /// A layout pass or frame begin on `thread` ends that thread's update.
    mutating func boundary(thread: ThreadID) {
        if !pending.isEmpty && thread == pendingThread { endUpdate() }
    }

    mutating func endRun(runStartNs: Int64) {
        endUpdate()
        runStartsNs[run] = runStartNs
    }

    private mutating func endUpdate() {
        guard !pending.isEmpty else { return }
        defer { pending.removeAll(keepingCapacity: true) }
        var update = ChurnUpdate()
        update.run = run
        // Subtree roots of this update's builds and teardowns; descendants join their root's count.
        var tornDownRoots: [Slot: UInt64] = [:]
        var builtRootOf: [UInt64: UInt64] = [:]
        var builtSize: [UInt64: Int] = [:]
        var builtRoots: [(slot: Slot, identity: UInt64)] = []
        for item in pending {
            let v = item.lifetime
            let slot = Slot(parent: v.parentIdentity, position: v.position, type: item.type)
            switch v.change {
            case .built:
                update.built += 1
                figuresSoFar.builtByReason[v.reason.name, default: 0] += 1
                types[item.type, default: TypeCount()].built += 1
                if liveTypes.count < Self.liveLimit { liveTypes[v.identity] = item.type }
                if v.reason == .parentBuilt {
                    if let root = builtRootOf[v.parentIdentity] {
                        builtRootOf[v.identity] = root
                        builtSize[root, default: 0] += 1
                    }
                } else {
                    builtRootOf[v.identity] = v.identity
                    builtSize[v.identity] = 1
                    builtRoots.append((slot, v.identity))
                }
            case .tornDown:
                update.tornDown += 1
                figuresSoFar.tornDownByReason[v.reason.name, default: 0] += 1
                types[item.type, default: TypeCount()].tornDown += 1
                if v.reason != .parentRemoved { tornDownRoots[slot] = v.identity }
            }
        }
        for (slot, identity) in builtRoots {
            guard let old = tornDownRoots[slot], old != identity else { continue }
            update.replacements += 1
            update.rebuiltViews += builtSize[identity] ?? 1
            types[slot.type, default: TypeCount()].replacements += 1
            if var count = slots[slot] {
                count.replacements += 1
                if count.run == run { count.firstNs = min(count.firstNs, pendingStartNs) }
                slots[slot] = count
            } else if slots.count < Self.slotLimit {
                slots[slot] = SlotCount(replacements: 1, run: run, firstNs: pendingStartNs, parentType: liveTypes[slot.parent] ?? -1)
            }
        }
        for item in pending where item.lifetime.change == .tornDown { liveTypes[item.lifetime.identity] = nil }

        figuresSoFar.updates += 1
        figuresSoFar.viewsBuilt += update.built
        figuresSoFar.viewsTornDown += update.tornDown
        figuresSoFar.replacements += update.replacements
        figuresSoFar.rebuiltViews += update.rebuiltViews
        if update.replacements > 0 { figuresSoFar.updatesWithReplacements += 1 }
        figuresSoFar.maxRebuiltViewsPerUpdate = max(figuresSoFar.maxRebuiltViewsPerUpdate, update.rebuiltViews)
        worstUpdates.append(TimedUpdate(update: update, startNs: pendingStartNs))
        if worstUpdates.count > 40 { keepWorstUpdates(10) }
    }

    private mutating func keepWorstUpdates(_ limit: Int) {
        worstUpdates.sort {
            ($0.update.rebuiltViews, $0.update.built + $0.update.tornDown, $1.update.run, $1.startNs)
                > ($1.update.rebuiltViews, $1.update.built + $1.update.tornDown, $0.update.run, $0.startNs)
        }
        if worstUpdates.count > limit { worstUpdates.removeLast(worstUpdates.count - limit) }
    }

    /// Milliseconds from `run`'s start to `ns`.
    private func relativeMs(_ ns: Int64, run: Int) -> Double {
        let start = runStartsNs[run] ?? .max
        return milliseconds(ns.subtractingSaturated(start == .max ? 0 : start))
    }

    /// Nil when no view was built or torn down in any run.
    func figures(names: NameTable) -> IdentityChurnFigures? {
        guard sawEvents else { return nil }
        var copy = self
        copy.keepWorstUpdates(10)
        var f = copy.figuresSoFar
        f.worstUpdates = copy.worstUpdates.map { timed in
            var update = timed.update
            update.atMs = relativeMs(timed.startNs, run: update.run)
            return update
        }
        f.meanRebuiltViewsPerReplacingUpdate = f.updatesWithReplacements > 0 ? Double(f.rebuiltViews) / Double(f.updatesWithReplacements) : 0
        f.types = types.map { index, count in
            var t = IdentityChurnType()
            t.type = names[index]; t.built = count.built; t.tornDown = count.tornDown; t.replacements = count.replacements
            return t
        }
        .sorted { ($0.replacements, $0.built + $0.tornDown, $1.type) > ($1.replacements, $1.built + $1.tornDown, $0.type) }
        .prefix(20).map { $0 }
        let flagged = slots.filter { $0.value.replacements >= unstableIdentityMinimumUpdates }
        f.unstableIdentitySlots = flagged.count
        f.unstableIdentity = flagged.map { slot, count in
            var u = UnstableIdentitySlot()
            u.type = names[slot.type]
            u.parentType = count.parentType >= 0 ? names[count.parentType] : ""
            u.position = slot.position
            u.replacements = count.replacements
            u.run = count.run
            u.firstAtMs = relativeMs(count.firstNs, run: count.run)
            return u
        }
        .sorted { ($0.replacements, $1.run, $1.position, $1.type) > ($1.replacements, $0.run, $0.position, $0.type) }
        .prefix(20).map { $0 }
        return f
    }
}

extension IdentityChurnPass: AnalysisPass {
    /// View lifetimes, and the frame begins and layout passes that end a thread's update.
    static var reads: PayloadKinds { [.viewLifetime, .frames, .layoutPass] }

    mutating func beginRun(_ context: inout PassContext) { beginRun(context.run) }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        switch event.payload {
        case .viewLifetime(let lifetime):
            self.lifetime(lifetime, type: resolved.name, thread: resolved.thread, atNs: resolved.startNs)
        case .frameBegan, .layoutPass:
            boundary(thread: resolved.thread)
        default:
            break
        }
    }

    mutating func endRun(_ context: inout PassContext) { endRun(runStartNs: context.runStartNs) }

    func contribute(to a: inout Analysis, _ context: inout PassContext) { a.identityChurn = figures(names: context.names) }
}
