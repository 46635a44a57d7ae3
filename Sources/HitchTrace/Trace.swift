import CHitchSupport
import Synchronization

/// The recording API an app calls (shaped like OSSignposter). Every call is a cheap no-op when
/// no `TraceRecorder` is active: one load and a branch. While recording, an event is a timestamp
/// read and a few stores into the calling thread's buffer: no lock, allocation or syscall.
public enum Trace {
    /// True while a recorder is active.
    @inlinable public static var isRecording: Bool { hitch_is_recording() != 0 }

    /// The recorder's clock (ticks; `.nanoseconds` converts).
    @inlinable public static func now() -> TraceTimestamp { TraceTimestamp(ticks: hitch_now()) }

    // MARK: Intervals

    /// Starts an interval; pass the result to `endInterval`. Written as one complete event at the
    /// end, on the thread that began it (use the `async` `interval` for work that crosses `await`).
    @inlinable
    public static func beginInterval(_ name: TraceName, category: TraceName = .app,
                                     with first: TraceArgument? = nil, _ second: TraceArgument? = nil) -> TraceInterval {
        guard hitch_is_recording() != 0 else { return TraceInterval(beginTicks: 0, name: name, category: category) }
        return TraceInterval(beginTicks: hitch_now(), name: name, category: category, first: first, second: second)
    }

    @inlinable
    public static func endInterval(_ interval: TraceInterval) {
        guard hitch_is_recording() != 0, interval.beginTicks != 0 else { return }
        if interval.first == nil && interval.second == nil {
            hitch_emit1(interval.beginTicks, RawKind.complete.word(interval.name.address), interval.category.address, hitch_now())
        } else {
            hitch_emit2(interval.beginTicks, RawKind.completeArgs.word(interval.name.address), interval.category.address, hitch_now(),
                        TraceArgument.word(interval.first), TraceArgument.bits(interval.first),
                        TraceArgument.word(interval.second), TraceArgument.bits(interval.second))
        }
    }

    /// Records `body` as an interval and returns its value. Arguments (`with: .int("rows", n)`)
    /// are written on the event.
    @inlinable @discardableResult
    public static func interval<R, E: Error>(_ name: TraceName, category: TraceName = .app,
                                             with first: TraceArgument? = nil, _ second: TraceArgument? = nil,
                                             _ body: () throws(E) -> R) throws(E) -> R {
        let interval = beginInterval(name, category: category, with: first, second)
        defer { endInterval(interval) }
        return try body()
    }

    /// Records `body`, which may suspend and resume on other threads, as an async interval: FXT
    /// async begin and end events joined by an id, begun and ended on whichever threads run them.
    /// Its self time is per task: its duration minus the async intervals awaited inside it (on any
    /// thread), not minus whatever else ran on the threads it visited. docs/FORMAT.md "Async intervals".
    @discardableResult
    public static func interval<R, E: Error>(_ name: TraceName, category: TraceName = .app,
                                             isolation: isolated (any Actor)? = #isolation,
                                             _ body: () async throws(E) -> R) async throws(E) -> R {
        guard hitch_is_recording() != 0 else { return try await body() }
        let parent = AsyncIntervalContext.current
        let context = AsyncIntervalContext()
        let begin = hitch_now()
        hitch_emit2(begin, RawKind.asyncBegin.word(name.address), category.address, context.id,
                    parent?.id ?? 0, 0, 0, 0)
        let result: Result<R, E>
        do {
            result = .success(try await AsyncIntervalContext.$current.withValue(context) { try await body() })
        } catch {
            result = .failure(error as! E)   // `body` throws only E; withValue rethrows it untyped
        }
        let end = hitch_now()
        let duration = end &- begin
        parent?.addChild(ticks: duration)
        let selfTicks = duration &- min(duration, context.childTicks)
        hitch_emit2(end, RawKind.asyncEnd.word(name.address), category.address, context.id,
                    begin, selfTicks, 0, 0)
        return try result.get()
    }

    /// Records an interval with explicit timestamps (for work measured elsewhere).
    @inlinable
    public static func interval(_ name: TraceName, category: TraceName = .app, from begin: TraceTimestamp, to end: TraceTimestamp,
                                with first: TraceArgument? = nil, _ second: TraceArgument? = nil) {
        guard hitch_is_recording() != 0 else { return }
        endInterval(TraceInterval(beginTicks: begin.ticks, name: name, category: category, first: first, second: second),
                    at: end)
    }

    @inlinable
    static func endInterval(_ interval: TraceInterval, at end: TraceTimestamp) {
        if interval.first == nil && interval.second == nil {
            hitch_emit1(interval.beginTicks, RawKind.complete.word(interval.name.address), interval.category.address, end.ticks)
        } else {
            hitch_emit2(interval.beginTicks, RawKind.completeArgs.word(interval.name.address), interval.category.address, end.ticks,
                        TraceArgument.word(interval.first), TraceArgument.bits(interval.first),
                        TraceArgument.word(interval.second), TraceArgument.bits(interval.second))
        }
    }

    // MARK: Instants and counters

    @inlinable
    public static func instant(_ name: TraceName, category: TraceName = .app,
                               with first: TraceArgument? = nil, _ second: TraceArgument? = nil) {
        guard hitch_is_recording() != 0 else { return }
        if first == nil && second == nil {
            hitch_emit1(hitch_now(), RawKind.instant.word(name.address), category.address, 0)
        } else {
            hitch_emit2(hitch_now(), RawKind.instantArgs.word(name.address), category.address, 0,
                        TraceArgument.word(first), TraceArgument.bits(first), TraceArgument.word(second), TraceArgument.bits(second))
        }
    }

    @inlinable
    public static func counter(_ name: TraceName, value: Double, category: TraceName = .counter) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(hitch_now(), RawKind.counter.word(name.address), category.address, value.bitPattern)
    }

    // MARK: Frames
    // docs/FRAMES.md is the guide: what vsync, target and period mean, feeding them from a display
    // link, and `FrameMarker` for a loop of your own.

    /// A frame starts on the main thread: the display link fired for the vsync at `vsync`, the
    /// frame must be committed by `target` (the next vsync) to be shown one period after it, and
    /// `periodNs` is the display's refresh period.
    ///
    /// Each frame call also records the calling thread's scheduler counters (a `threadState`
    /// event stamped like the frame event) unless thread states are off (docs/FORMAT.md "Thread states").
    /// A frame's begin and commit also tell the hang watchdog that the thread left its loop and came
    /// back (docs/FORMAT.md "Hangs").
    @inlinable
    public static func frameBegan(frameID: UInt64, vsync: TraceTimestamp, target: TraceTimestamp, periodNs: Int64) {
        guard hitch_is_recording() != 0 else { return }
        let now = hitch_now()
        hitch_emit2(now, RawKind.frameBegan.word(0), frameID, vsync.ticks,
                    target.ticks, UInt64(bitPattern: periodNs), 0, 0)
        hitch_thread_state(now, frameID, UInt32(FramePhase.frameBegan.rawValue))
        hitch_loop_left(now)
    }

    @inlinable
    public static func frameCommitted(frameID: UInt64) {
        guard hitch_is_recording() != 0 else { return }
        let now = frameEvent(.frameCommitted, .committed, frameID: frameID)
        hitch_loop_returned(now)
    }

    /// The render thread starts rendering the frame: records only its scheduler counters (so the
    /// analyzer can split render time), no frame event; nothing when thread states are off.
    @inlinable
    public static func frameRenderBegan(frameID: UInt64) {
        guard hitch_is_recording() != 0 else { return }
        hitch_thread_state(hitch_now(), frameID, UInt32(FramePhase.renderBegan.rawValue))
    }

    @inlinable
    public static func frameRenderEnded(frameID: UInt64) {
        guard hitch_is_recording() != 0 else { return }
        frameEvent(.frameRenderEnded, .renderEnded, frameID: frameID)
    }

    /// A frame event that carries only the frame's id, and the calling thread's reading for the
    /// same phase, both stamped now. Returns now.
    @usableFromInline @inline(__always) @discardableResult
    static func frameEvent(_ kind: RawKind, _ phase: FramePhase, frameID: UInt64) -> UInt64 {
        let now = hitch_now()
        hitch_emit1(now, kind.word(0), frameID, 0)
        hitch_thread_state(now, frameID, UInt32(phase.rawValue))
        return now
    }

    /// The frame reached the display at `time`. Take it from the clock as it comes (`Trace.now()`
    /// after your wait for the vsync returns): the analyzer snaps it to the vsync grid.
    /// The reading that goes with it is stamped when it is taken (now), not `time`.
    @inlinable
    public static func framePresented(frameID: UInt64, at time: TraceTimestamp) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(time.ticks, RawKind.framePresented.word(0), frameID, 0)
        hitch_thread_state(hitch_now(), frameID, UInt32(FramePhase.presented.rawValue))
    }

    // MARK: Views

    @inlinable
    public static func beginBodyEvaluation(viewType: TraceName, identity: UInt64) -> BodyEvaluationScope {
        BodyEvaluationScope(beginTicks: hitch_is_recording() != 0 ? hitch_now() : 0, viewType: viewType, identity: identity)
    }

    @inlinable
    public static func endBodyEvaluation(_ scope: BodyEvaluationScope) {
        guard hitch_is_recording() != 0, scope.beginTicks != 0 else { return }
        hitch_emit1(scope.beginTicks, RawKind.body.word(scope.viewType.address), scope.identity, hitch_now())
    }

    /// Records a view body evaluation around `body`.
    @inlinable @discardableResult
    public static func bodyEvaluation<R, E: Error>(viewType: TraceName, identity: UInt64, _ body: () throws(E) -> R) throws(E) -> R {
        let scope = beginBodyEvaluation(viewType: viewType, identity: identity)
        defer { endBodyEvaluation(scope) }
        return try body()
    }

    /// A write to the observed property `source` invalidated view `target`.
    @inlinable
    public static func invalidation(source: TraceName, target: TraceName, targetIdentity: UInt64, stack: StackID? = nil) {
        guard hitch_is_recording() != 0 else { return }
        let stackWord = stack.map { UInt64($0.rawValue) + 1 } ?? 0
        hitch_emit2(hitch_now(), RawKind.invalidation.word(source.address), target.address, targetIdentity,
                    stackWord, 0, 0, 0)
    }

    /// A view node of type `viewType` was built or torn down, at `position` among the children of
    /// the node `parentIdentity`, for `reason`.
    @inlinable
    public static func viewLifetime(_ change: ViewLifetimeChange, viewType: TraceName, identity: UInt64,
                                    parentIdentity: UInt64, position: Int, reason: ViewLifetimeReason) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit2(hitch_now(), RawKind.viewLifetime.word(viewType.address), identity, parentIdentity,
                    UInt64(bitPattern: Int64(position)), UInt64(change.rawValue) | UInt64(reason.rawValue) << 8, 0, 0)
    }

    @inlinable
    public static func beginLayoutPass() -> LayoutPassScope {
        LayoutPassScope(beginTicks: hitch_is_recording() != 0 ? hitch_now() : 0)
    }

    @inlinable
    public static func endLayoutPass(_ scope: LayoutPassScope, viewCount: UInt32) {
        guard hitch_is_recording() != 0, scope.beginTicks != 0 else { return }
        hitch_emit1(scope.beginTicks, RawKind.layout.word(UInt64(viewCount)), hitch_now(), 0)
    }

    /// Records a layout pass over `viewCount` views around `body`.
    @inlinable @discardableResult
    public static func layoutPass<R, E: Error>(viewCount: UInt32, _ body: () throws(E) -> R) throws(E) -> R {
        let scope = beginLayoutPass()
        defer { endLayoutPass(scope, viewCount: viewCount) }
        return try body()
    }

    // MARK: Inference

    /// `reads` says what `bytesRead` are (weights, KV cache, activations); left `unspecified`, the
    /// analyzer judges by the op's name (docs/METRICS.md "Decode bandwidth").
    @inlinable
    public static func beginInferenceOp(_ name: TraceName, layer: Int32, computeUnit: TraceName, tokenIndex: Int32,
                                        bytesRead: UInt64, bytesWritten: UInt64, flops: UInt64,
                                        reads byteKind: InferenceByteKind = .unspecified) -> InferenceOpScope {
        InferenceOpScope(beginTicks: hitch_is_recording() != 0 ? hitch_now() : 0, name: name, computeUnit: computeUnit,
                         layer: layer, tokenIndex: tokenIndex, bytesRead: bytesRead, bytesWritten: bytesWritten, flops: flops,
                         byteKind: byteKind)
    }

    @inlinable
    public static func endInferenceOp(_ op: InferenceOpScope) {
        guard hitch_is_recording() != 0, op.beginTicks != 0 else { return }
        let layerAndToken = UInt64(UInt32(bitPattern: op.layer)) | UInt64(UInt32(bitPattern: op.tokenIndex)) << 32
        hitch_emit2(op.beginTicks, RawKind.inferenceOp.word(op.name.address),
                    op.computeUnit.address | UInt64(op.byteKind.rawValue) << 56, hitch_now(),
                    layerAndToken, op.bytesRead, op.bytesWritten, op.flops)
    }

    /// Records one inference op (matvec, attention, ...) around `body`.
    @inlinable @discardableResult
    public static func inferenceOp<R, E: Error>(_ name: TraceName, layer: Int32, computeUnit: TraceName, tokenIndex: Int32,
                                                bytesRead: UInt64, bytesWritten: UInt64, flops: UInt64,
                                                reads byteKind: InferenceByteKind = .unspecified,
                                                _ body: () throws(E) -> R) throws(E) -> R {
        let op = beginInferenceOp(name, layer: layer, computeUnit: computeUnit, tokenIndex: tokenIndex,
                                  bytesRead: bytesRead, bytesWritten: bytesWritten, flops: flops, reads: byteKind)
        defer { endInferenceOp(op) }
        return try body()
    }

    /// A token was produced by the model, delivered to the consumer, shown on a frame, or dropped.
    @inlinable
    public static func token(_ stage: TokenStage, index: Int64) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(hitch_now(), RawKind.token.word(UInt64(stage.rawValue)), UInt64(bitPattern: index), 0)
    }

    // MARK: Interactions

    /// A user-visible animation starts (scroll, typing, streaming); their union is the animating time.
    public static func beginInteraction(_ kind: TraceName) -> InteractionToken {
        let id = nextInteractionID.add(1, ordering: .relaxed).newValue
        if hitch_is_recording() != 0 {
            hitch_emit1(hitch_now(), RawKind.interactionBegin.word(kind.address), id, 0)
        }
        return InteractionToken(id: id, kind: kind)
    }

    public static func endInteraction(_ token: InteractionToken) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(hitch_now(), RawKind.interactionEnd.word(token.kind.address), token.id, 0)
    }

    // MARK: Threads

    /// Names the calling thread in traces. Other threads are also renamed in the kernel (15
    /// bytes), the process's initial thread never: its kernel name is the process's name. While a
    /// recording runs, the thread's context switches are recorded from then on under that name,
    /// as those of a thread that records events are (docs/FORMAT.md "Thread states").
    public static func setCurrentThreadName(_ name: String) {
        hitch_set_current_thread_name(name)
        hitch_sched_join_thread()
    }

    /// Says what the calling thread does, for the analyzer: `.main` runs the frame loop (its
    /// samples and intervals are main-thread work), `.render` renders and presents. Stored in the
    /// trace with the thread; the thread's name is left alone.
    public static func setThreadRole(_ role: ThreadRole) {
        hitch_set_current_thread_role(role.rawValue)
    }

    /// The calling thread's kernel thread id (what `recordSample(threadID:...)` takes).
    public static var currentThreadID: Int32 { hitch_current_tid() }
}

private let nextInteractionID = Atomic<UInt64>(0)
private let nextAsyncIntervalID = Atomic<UInt64>(0)

/// The async interval a task is inside (a task local), so its children subtract their time from it.
final class AsyncIntervalContext: Sendable {
    @TaskLocal static var current: AsyncIntervalContext?
    let id = nextAsyncIntervalID.add(1, ordering: .relaxed).newValue
    private let children = Atomic<UInt64>(0)
    var childTicks: UInt64 { children.load(ordering: .acquiring) }
    func addChild(ticks: UInt64) { children.add(ticks, ordering: .releasing) }
}

/// A named value written on an interval or instant (`with: .int("rows", 120)`).
public struct TraceArgument: Sendable {
    public enum Value: Sendable {
        case int(Int64)
        case double(Double)
        case name(TraceName)
    }
    public let name: TraceName
    public let value: Value
    @inlinable public init(name: TraceName, value: Value) { self.name = name; self.value = value }

    @inlinable public static func int(_ name: TraceName, _ value: Int64) -> TraceArgument { .init(name: name, value: .int(value)) }
    @inlinable public static func int(_ name: TraceName, _ value: Int) -> TraceArgument { .init(name: name, value: .int(Int64(value))) }
    @inlinable public static func double(_ name: TraceName, _ value: Double) -> TraceArgument { .init(name: name, value: .double(value)) }
    @inlinable public static func string(_ name: TraceName, _ value: TraceName) -> TraceArgument { .init(name: name, value: .name(value)) }

    /// The raw record's argument word: the name plus the type in the top byte (RawRecord.swift).
    @inlinable static func word(_ argument: TraceArgument?) -> UInt64 {
        guard let argument else { return 0 }
        let type: UInt64
        switch argument.value {
        case .int: type = 1
        case .double: type = 2
        case .name: type = 3
        }
        return type << 56 | argument.name.address
    }

    @inlinable static func bits(_ argument: TraceArgument?) -> UInt64 {
        switch argument?.value {
        case .int(let v)?: UInt64(bitPattern: v)
        case .double(let v)?: v.bitPattern
        case .name(let n)?: n.address
        case nil: 0
        }
    }
}

/// An open interval from `Trace.beginInterval`.
public struct TraceInterval: Sendable {
    public let beginTicks: UInt64
    public let name: TraceName
    public let category: TraceName
    public let first: TraceArgument?
    public let second: TraceArgument?
    @inlinable init(beginTicks: UInt64, name: TraceName, category: TraceName,
                    first: TraceArgument? = nil, second: TraceArgument? = nil) {
        self.beginTicks = beginTicks; self.name = name; self.category = category
        self.first = first; self.second = second
    }
}

/// One call per frame for an app that runs its own loop (Tracy's `FrameMark`): call `mark()`
/// right after each frame reaches the screen, i.e. after your swap or wait for the vsync returns.
/// Each mark records the frame since the previous mark: begun at the previous mark, due one period
/// later, committed and presented now. A frame that took longer than a period is a hitch of the
/// periods it missed (docs/FRAMES.md).
public struct FrameMarker: Sendable {
    public let periodNs: Int64
    private var previousTicks: UInt64 = 0
    public private(set) var nextFrameID: UInt64

    public init(refreshRateHz: Double, firstFrameID: UInt64 = 1) {
        periodNs = Int64((1e9 / max(refreshRateHz, 1)).rounded())
        nextFrameID = firstFrameID
    }

    public mutating func mark() {
        let now = hitch_now()
        defer { previousTicks = now }
        guard hitch_is_recording() != 0 else { return }
        guard previousTicks != 0 else {
            // The first mark begins the first frame: its reading is that frame's begin.
            hitch_thread_state(now, nextFrameID, UInt32(FramePhase.frameBegan.rawValue))
            hitch_loop_left(now)
            return
        }
        let id = nextFrameID
        nextFrameID += 1
        let start = TraceTimestamp(ticks: previousTicks)
        // On the model's terms (docs/METRICS.md): the frame's vsync was one period before it began
        // and its target the moment it began, so its present is expected one period after it began.
        let vsync = start.advanced(byNanoseconds: -periodNs)
        hitch_emit2(start.ticks, RawKind.frameBegan.word(0), id, vsync.ticks, start.ticks, UInt64(bitPattern: periodNs), 0, 0)
        hitch_emit1(now, RawKind.frameCommitted.word(0), id, 0)
        hitch_emit1(now, RawKind.frameRenderEnded.word(0), id, 0)
        hitch_emit1(now, RawKind.framePresented.word(0), id, 0)
        // One reading per mark: it ends this frame and begins the next (a marked loop has no idle
        // time between frames), so it is the `committed` reading of this frame; the previous
        // mark's reading serves as this frame's begin.
        hitch_thread_state(now, id, UInt32(FramePhase.committed.rawValue))
        // A marked loop has no idle time: each mark begins the next stretch (the hang watchdog's).
        hitch_loop_left(now)
    }
}

/// An open body evaluation from `Trace.beginBodyEvaluation`.
public struct BodyEvaluationScope: Sendable {
    public let beginTicks: UInt64
    public let viewType: TraceName
    public let identity: UInt64
    @inlinable init(beginTicks: UInt64, viewType: TraceName, identity: UInt64) {
        self.beginTicks = beginTicks; self.viewType = viewType; self.identity = identity
    }
}

/// An open layout pass from `Trace.beginLayoutPass`.
public struct LayoutPassScope: Sendable {
    public let beginTicks: UInt64
    @inlinable init(beginTicks: UInt64) { self.beginTicks = beginTicks }
}

/// An open inference op from `Trace.beginInferenceOp`.
public struct InferenceOpScope: Sendable {
    public let beginTicks: UInt64
    public let name: TraceName
    public let computeUnit: TraceName
    public let layer: Int32
    public let tokenIndex: Int32
    public let bytesRead: UInt64
    public let bytesWritten: UInt64
    public let flops: UInt64
    public let byteKind: InferenceByteKind
    @inlinable init(beginTicks: UInt64, name: TraceName, computeUnit: TraceName, layer: Int32, tokenIndex: Int32,
                    bytesRead: UInt64, bytesWritten: UInt64, flops: UInt64, byteKind: InferenceByteKind) {
        self.beginTicks = beginTicks; self.name = name; self.computeUnit = computeUnit; self.layer = layer
        self.tokenIndex = tokenIndex; self.bytesRead = bytesRead; self.bytesWritten = bytesWritten; self.flops = flops
        self.byteKind = byteKind
    }
}

/// An open interaction from `Trace.beginInteraction`.
public struct InteractionToken: Sendable, Hashable {
    public let id: UInt64
    public let kind: TraceName
}
