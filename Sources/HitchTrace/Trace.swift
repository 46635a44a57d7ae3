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

    /// Starts an interval; pass the result to `endInterval`. Written as one complete event at the end.
    @inlinable
    public static func beginInterval(_ name: TraceName, category: TraceName = .app) -> TraceInterval {
        guard hitch_is_recording() != 0 else { return TraceInterval(beginTicks: 0, name: name, category: category) }
        return TraceInterval(beginTicks: hitch_now(), name: name, category: category)
    }

    @inlinable
    public static func endInterval(_ interval: TraceInterval) {
        guard hitch_is_recording() != 0, interval.beginTicks != 0 else { return }
        hitch_emit1(interval.beginTicks, RawKind.complete.word(interval.name.address), interval.category.address, hitch_now())
    }

    /// Records `body` as an interval and returns its value.
    @inlinable
    public static func interval<R, E: Error>(_ name: TraceName, category: TraceName = .app, _ body: () throws(E) -> R) throws(E) -> R {
        let interval = beginInterval(name, category: category)
        defer { endInterval(interval) }
        return try body()
    }

    /// Records an interval with explicit timestamps (for work measured elsewhere).
    @inlinable
    public static func interval(_ name: TraceName, category: TraceName = .app, from begin: TraceTimestamp, to end: TraceTimestamp) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(begin.ticks, RawKind.complete.word(name.address), category.address, end.ticks)
    }

    // MARK: Instants and counters

    @inlinable
    public static func instant(_ name: TraceName, category: TraceName = .app) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(hitch_now(), RawKind.instant.word(name.address), category.address, 0)
    }

    @inlinable
    public static func counter(_ name: TraceName, value: Double, category: TraceName = .counter) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(hitch_now(), RawKind.counter.word(name.address), category.address, value.bitPattern)
    }

    // MARK: Frames

    /// A frame starts: the display link fired at `vsync` and the frame is due at `target`.
    @inlinable
    public static func frameBegan(frameID: UInt64, vsync: TraceTimestamp, target: TraceTimestamp, periodNs: Int64) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit2(hitch_now(), RawKind.frameBegan.word(0), frameID, vsync.ticks,
                    target.ticks, UInt64(bitPattern: periodNs), 0, 0)
    }

    @inlinable
    public static func frameCommitted(frameID: UInt64) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(hitch_now(), RawKind.frameCommitted.word(0), frameID, 0)
    }

    @inlinable
    public static func frameRenderEnded(frameID: UInt64) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(hitch_now(), RawKind.frameRenderEnded.word(0), frameID, 0)
    }

    @inlinable
    public static func framePresented(frameID: UInt64, at time: TraceTimestamp) {
        guard hitch_is_recording() != 0 else { return }
        hitch_emit1(time.ticks, RawKind.framePresented.word(0), frameID, 0)
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
    @inlinable
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
    public static func viewLifetime(_ change: ViewLifetime.Change, viewType: TraceName, identity: UInt64,
                                    parentIdentity: UInt64, position: Int, reason: ViewLifetime.Reason) {
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
    @inlinable
    public static func layoutPass<R, E: Error>(viewCount: UInt32, _ body: () throws(E) -> R) throws(E) -> R {
        let scope = beginLayoutPass()
        defer { endLayoutPass(scope, viewCount: viewCount) }
        return try body()
    }

    // MARK: Inference

    @inlinable
    public static func beginInferenceOp(_ name: TraceName, layer: Int32, computeUnit: TraceName, tokenIndex: Int32,
                                        bytesRead: UInt64, bytesWritten: UInt64, flops: UInt64) -> InferenceOpScope {
        InferenceOpScope(beginTicks: hitch_is_recording() != 0 ? hitch_now() : 0, name: name, computeUnit: computeUnit,
                         layer: layer, tokenIndex: tokenIndex, bytesRead: bytesRead, bytesWritten: bytesWritten, flops: flops)
    }

    @inlinable
    public static func endInferenceOp(_ op: InferenceOpScope) {
        guard hitch_is_recording() != 0, op.beginTicks != 0 else { return }
        let layerAndToken = UInt64(UInt32(bitPattern: op.layer)) | UInt64(UInt32(bitPattern: op.tokenIndex)) << 32
        hitch_emit2(op.beginTicks, RawKind.inferenceOp.word(op.name.address), op.computeUnit.address, hitch_now(),
                    layerAndToken, op.bytesRead, op.bytesWritten, op.flops)
    }

    /// Records one inference op (matvec, attention, ...) around `body`.
    @inlinable
    public static func inferenceOp<R, E: Error>(_ name: TraceName, layer: Int32, computeUnit: TraceName, tokenIndex: Int32,
                                                bytesRead: UInt64, bytesWritten: UInt64, flops: UInt64,
                                                _ body: () throws(E) -> R) throws(E) -> R {
        let op = beginInferenceOp(name, layer: layer, computeUnit: computeUnit, tokenIndex: tokenIndex,
                                  bytesRead: bytesRead, bytesWritten: bytesWritten, flops: flops)
        defer { endInferenceOp(op) }
        return try body()
    }

    /// A token was produced by the model, delivered to the consumer, shown on a frame, or dropped.
    @inlinable
    public static func token(_ stage: TokenEvent.Stage, index: Int64) {
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

    /// Names the calling thread in traces (and in the kernel, truncated to 15 bytes).
    public static func setCurrentThreadName(_ name: String) {
        hitch_set_current_thread_name(name)
    }

    /// The calling thread's kernel thread id (what `recordSample(threadID:...)` takes).
    public static var currentThreadID: Int32 { hitch_current_tid() }
}

private let nextInteractionID = Atomic<UInt64>(0)

/// An open interval from `Trace.beginInterval`.
public struct TraceInterval: Sendable {
    public let beginTicks: UInt64
    public let name: TraceName
    public let category: TraceName
    @inlinable init(beginTicks: UInt64, name: TraceName, category: TraceName) {
        self.beginTicks = beginTicks; self.name = name; self.category = category
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
    @inlinable init(beginTicks: UInt64, name: TraceName, computeUnit: TraceName, layer: Int32, tokenIndex: Int32,
                    bytesRead: UInt64, bytesWritten: UInt64, flops: UInt64) {
        self.beginTicks = beginTicks; self.name = name; self.computeUnit = computeUnit; self.layer = layer
        self.tokenIndex = tokenIndex; self.bytesRead = bytesRead; self.bytesWritten = bytesWritten; self.flops = flops
    }
}

/// An open interaction from `Trace.beginInteraction`.
public struct InteractionToken: Sendable, Hashable {
    public let id: UInt64
    public let kind: TraceName
}
