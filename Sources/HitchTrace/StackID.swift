/// A captured call stack, defined once in the trace by a stack definition (`TraceRecorder.defineStack`).
public struct StackID: Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
}
