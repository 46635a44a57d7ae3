import CHitchSupport
import Synchronization

/// Captured call stacks at chosen events (the first user is invalidation: the writer's stack
/// names the property setter and its caller). Off unless `Backtrace.isEnabled` is set, because a
/// capture costs about a microsecond (libunwind's `unw_backtrace` with a warm per-thread cache).
///
/// ```swift
/// Backtrace.isEnabled = true
/// Trace.invalidation(source: "FeedModel.query", target: "FeedRow", targetIdentity: id,
///                    stack: Backtrace.capture())
/// ```
public enum Backtrace {
    private static let enabled = Atomic<Bool>(false)

    /// Whether `capture()` records anything; off by default.
    public static var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set { enabled.store(newValue, ordering: .relaxed) }
    }

    /// The deepest stack kept (callers beyond it are cut off).
    public static let maxFrames = 64

    /// The calling function's stack, innermost first (the caller of `capture` is frame 0), defined
    /// in the active recording with its symbols. Nil when backtraces are off or nothing is recording.
    /// `skipping` drops that many further innermost frames (e.g. a helper that wraps `capture`).
    @inline(never)
    public static func capture(skipping: Int = 0) -> StackID? {
        guard isEnabled, Trace.isRecording, let recorder = TraceRecorder.current else { return nil }
        let frames = UnsafeMutablePointer<UInt64>.allocate(capacity: maxFrames)
        defer { frames.deallocate() }
        // Skip this function's own frame: hitch_backtrace_capture already skips itself.
        let count = Int(hitch_backtrace_capture(frames, Int32(maxFrames), Int32(1 + max(skipping, 0))))
        guard count > 0 else { return nil }
        let addresses = Array(UnsafeBufferPointer(start: frames, count: count))
        let stack = recorder.defineStack(addresses: addresses)
        SymbolDefinitions.define(addresses, in: recorder)
        return stack
    }

    /// The calling function's stack as addresses (innermost first, the caller of this function is
    /// frame 0), whether or not anything is recording; for tests and tools.
    @inline(never)
    public static func addresses(skipping: Int = 0) -> [UInt64] {
        let frames = UnsafeMutablePointer<UInt64>.allocate(capacity: maxFrames)
        defer { frames.deallocate() }
        let count = Int(hitch_backtrace_capture(frames, Int32(maxFrames), Int32(1 + max(skipping, 0))))
        return Array(UnsafeBufferPointer(start: frames, count: max(count, 0)))
    }
}
