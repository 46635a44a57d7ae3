import HitchTrace

/// Assembles frames from their events, which reach the file in per-thread order only: a thread's
/// buffer is written as a unit, so the render thread's presents may come long before or after the
/// main thread's begins and commits of the same frames. Frames are joined by id and released in the
/// order they began, once final: a later frame has begun, and
/// - its commit is in, or a later-begun frame's commit is (commits come in order on the main thread,
///   so this frame has none), and
/// - its present is in, or a later-begun frame's present or render end is (the render thread
///   records render end then present, frame after frame, so this frame has no present);
/// or more than `EventOrder.holdLimit` frames have begun and wait (the one fallback: bounded memory
/// whatever the file order; `pending` holds them), or the run ended. Events of a frame whose begin
/// has not come are let go once twice that many records wait. Either way, what comes later for a
/// frame let go is counted (`LetGoFrames`).
struct FrameAssembler: Sendable {
    private static let window = EventOrder.holdLimit
    private static let slotBits = 12

    private struct Entry: Sendable {
        var record: FrameRecord
        var beganPosition = -1     // position in begin order, -1 until the begin arrives
        var done = false
    }
    private var entries: [Entry] = []
    private var head = 0
    private var removed = 0                  // entries dropped from the front (absolute = removed + index)
    private var slots = [Int](repeating: -1, count: 1 << slotBits)   // frameID's low bits -> absolute index
    private var overflow: [UInt64: Int] = [:]                          // frames whose slot another took
    /// Frames begun and not yet handed out, in begin order (absolute indexes): the holder whose
    /// limit hands out a frame before it is final, and which counts the events that came for it.
    private var pending = BoundedHolder<Int>(limit: window)
    private var beganCount = 0
    private var presentedThrough = -1        // highest begin position of a presented (or rendered) frame
    private var committedThrough = -1        // highest begin position of a committed frame
    /// Frames handed out at the hold limit before they were final: an event of one arriving later
    /// (it opens a new record, which has no begin and is dropped) is counted.
    private var judgedAtLimit = LetGoFrames()
    /// Frames whose events were let go while more than twice `window` records waited for a begin:
    /// the begin arriving later (the frame then lacks those events) is counted.
    private var letGoBeforeBegin = LetGoFrames()

    /// The latest `window` frames let go, and the count of what came for them later.
    private struct LetGoFrames: Sendable {
        private var ids: Set<UInt64> = []
        private var order = BoundedHolder<UInt64>(limit: FrameAssembler.window)

        mutating func note(_ id: UInt64) {
            guard ids.insert(id).inserted else { return }
            order.append(id)
            if order.isOverLimit { ids.remove(order.removeFirst()) }
        }

        /// Counts what came for frame `id`, if it was let go.
        @inline(__always)
        mutating func countIfLetGo(_ id: UInt64) {
            if !ids.isEmpty, ids.contains(id) { order.countLateForLetGo() }
        }

        mutating func report(_ kind: EventOrder.LetGo, to eventOrder: inout EventOrder) { order.report(kind, to: &eventOrder) }

        mutating func removeAll() { ids.removeAll(); order.removeAll() }
    }

    mutating func reset() {
        entries.removeAll(keepingCapacity: true); head = 0; removed = 0
        for i in slots.indices { slots[i] = -1 }
        overflow.removeAll()
        pending.removeAll(); beganCount = 0
        presentedThrough = -1
        committedThrough = -1
        judgedAtLimit.removeAll(); letGoBeforeBegin.removeAll()
    }

    /// Hands what came for frames let go at the hold limits to the run's order.
    mutating func reportLetGo(to order: inout EventOrder) {
        judgedAtLimit.report(.frameEventsAfterJudging, to: &order)
        letGoBeforeBegin.report(.beginsAfterFrameEventsLetGo, to: &order)
    }

    @inline(__always) private func slot(_ id: UInt64) -> Int { Int(truncatingIfNeeded: id) & ((1 << Self.slotBits) - 1) }

    /// The absolute index of frame `id`'s pending entry, creating one if needed.
    private mutating func index(of id: UInt64) -> Int {
        let s = slot(id)
        let candidate = slots[s]
        if candidate >= 0 {
            let local = candidate - removed
            if local >= head, local < entries.count, entries[local].record.frameID == id, !entries[local].done { return candidate }
        }
        if !overflow.isEmpty, let found = overflow[id] { return found }
        judgedAtLimit.countIfLetGo(id)
        let absolute = removed + entries.count
        entries.append(Entry(record: FrameRecord(frameID: id)))
        if candidate >= 0 {
            let local = candidate - removed
            if local >= head, local < entries.count - 1, !entries[local].done {
                overflow[entries[local].record.frameID] = candidate   // keep the displaced frame findable
            }
        }
        slots[s] = absolute
        return absolute
    }

    /// Applies `change` to frame `id`; `began` marks its begin (it joins the begin order).
    mutating func update(_ id: UInt64, began: Bool = false, _ change: (inout FrameRecord) -> Void) {
        let local = index(of: id) - removed
        change(&entries[local].record)
        if began && entries[local].beganPosition < 0 {
            letGoBeforeBegin.countIfLetGo(id)
            entries[local].beganPosition = beganCount
            beganCount += 1
            pending.append(local + removed)
        }
        let position = entries[local].beganPosition
        if position >= 0 {
            if entries[local].record.presentNs != .min || entries[local].record.renderEndNs != .min {
                presentedThrough = max(presentedThrough, position)
            }
            if entries[local].record.commitNs != .min { committedThrough = max(committedThrough, position) }
        }
    }

    /// Records kept, judged or not, from the first not yet dropped.
    var keptRecords: Int { entries.count - head }

    /// The begin of the oldest frame begun and not yet handed out, if any.
    var oldestPendingBeganNs: Int64? {
        guard let oldest = pending.first else { return nil }
        return entries[oldest - removed].record.beganNs
    }

    /// The next frame to judge, in begin order, if it is final (or `all`: the run ended).
    mutating func nextReady(all: Bool) -> FrameRecord? {
        guard let oldest = pending.first else { compactIfCrowded(); return nil }
        let local = oldest - removed
        let position = entries[local].beganPosition
        let laterBegan = pending.count > 1
        // The two fields read in place: a copy of the whole record per call showed in profiles.
        let commitNs = entries[local].record.commitNs, presentNs = entries[local].record.presentNs
        let final = all
            || (laterBegan && (commitNs != .min || position < committedThrough)
                && (presentNs != .min || position < presentedThrough))
        guard final || pending.isOverLimit else { compactIfCrowded(); return nil }
        if final { pending.removeFirst() } else { judgedAtLimit.note(entries[local].record.frameID); pending.letGoFirst() }
        defer { compact() }
        return finish(local)
    }

    /// `compact` when nothing was handed out: only begin-less records can need dropping then (done
    /// entries and the front trims all follow a frame handed out, and were compacted then).
    @inline(__always) private mutating func compactIfCrowded() {
        if entries.count - head > 2 * Self.window { compact() }
    }

    /// Marks the entry judged and moves its record out: the entry keeps only the id, all that is
    /// read of a done entry (a copy of the record, retained, per frame showed in profiles).
    private mutating func finish(_ local: Int) -> FrameRecord {
        entries[local].done = true
        let id = entries[local].record.frameID
        if slots[slot(id)] == local + removed { slots[slot(id)] = -1 }
        if !overflow.isEmpty, overflow[id] == local + removed { overflow.removeValue(forKey: id) }
        var record = FrameRecord(frameID: id)
        swap(&record, &entries[local].record)
        return record
    }

    /// Drops judged entries from the front, and begin-less ones once too many records wait.
    private mutating func compact() {
        while head < entries.count {
            if entries[head].done { head += 1; continue }
            if entries[head].beganPosition < 0 && entries.count - head > 2 * Self.window {
                letGoBeforeBegin.note(entries[head].record.frameID)
                _ = finish(head)
                head += 1
                continue
            }
            break
        }
        if head > 1024 && head * 2 > entries.count {
            entries.removeFirst(head)
            removed += head
            head = 0
        }
    }
}
