#if canImport(Glibc)
import Glibc
#endif

/// Reads an FXT trace as `TraceEvent`s, streaming: a fixed 1 MB window over the file, tables
/// bounded by the format (32767 string refs, 255 thread refs), no allocation per event.
///
/// Events come in file order: in time order per thread for what one thread recorded, but threads'
/// buffers interleave (and complete events appear at their end). Damaged input never crashes:
/// what cannot be read at all throws a `TraceReadError`; what can be skipped becomes a warning.
public struct TraceReader {
    @usableFromInline let core: ReaderCore

    /// Opens `path`; throws if it cannot be opened or does not start with the FXT magic record.
    public init(path: String) throws(TraceReadError) { core = try ReaderCore(path: path) }

    /// Reads a trace held in memory (tests, fuzzing).
    public init(bytes: [UInt8]) throws(TraceReadError) { core = try ReaderCore(bytes: bytes) }

    private init(core: ReaderCore) { self.core = core }

    /// A new reader of the same trace, from its start (the analyzer reads a run twice when its
    /// main thread is known only at the end: docs/METRICS.md "Trace inputs").
    public func reopened() throws(TraceReadError) -> TraceReader { TraceReader(core: try core.reopened()) }

    /// The next event, or nil at the end of the trace (a truncated final record ends it with a warning).
    @inlinable
    public mutating func next() throws(TraceReadError) -> TraceEvent? {
        var event = TraceEvent(timestampNs: 0, thread: ThreadID(rawValue: 0), payload: .droppedEvents(count: 0))
        return try core.next(into: &event) ? event : nil
    }

    /// Decodes the next event into `event` (false at the end of the trace): the fast path, which
    /// writes the event in place instead of returning a copy.
    @inlinable
    public mutating func next(into event: inout TraceEvent) throws(TraceReadError) -> Bool { try core.next(into: &event) }

    /// The arguments an app wrote on the last event read, when it is an interval or instant (up to
    /// two, docs/FORMAT.md §5 "Arguments"); empty for counters, async events and the typed events,
    /// whose arguments are their payload's fields. Decoded only when asked: reading costs nothing per event.
    public var arguments: EventArguments { core.appArguments }

    /// The text of a string id from this reader's events.
    public func string(_ id: StringID) -> String { core.string(id) }

    /// The id a string has in this trace, if it has appeared (without adding it).
    public func stringID(_ text: String) -> StringID? { core.existingStringID(text) }

    /// The thread's name (from the trace's kernel object records), or "thread <koid>".
    public func threadName(_ id: ThreadID) -> String { core.threadName(id) }
    /// The thread's role ("main", "render", ...) as the recorder stored it (`Trace.setThreadRole`), or nil.
    public func threadRole(_ id: ThreadID) -> String? { core.threadRole(id) }
    /// The thread's process and kernel thread ids (its koids), or nil for an unknown id.
    public func threadKoids(_ id: ThreadID) -> (processID: UInt64, threadID: UInt64)? { core.threadKoids(id) }

    /// Every thread seen so far; index `i` has `ThreadID(rawValue: i + 1)`. (ThreadID 0 means "no thread",
    /// used by stack definitions and symbols.)
    public var threads: [TraceThread] { core.allThreads() }

    /// Trace metadata as read so far (the recorder writes it at the start).
    public var metadata: [String: String] { core.metadata }

    /// Skipped records and other oddities (the first 100; `warningCount` counts all).
    public var warnings: [TraceReadWarning] { core.warnings }
    public var warningCount: Int { core.warningCount }

    /// The byte offset of the record the file ends inside, when it ends mid-record (the writer was
    /// killed, or the file was cut); nil while the file has ended on a whole record so far.
    public var cutShortAtOffset: UInt64? { core.cutShortAtOffset }

    /// Ticks per second from the initialization record (1e9 without one).
    public var ticksPerSecond: UInt64 { core.converter.ticksPerSecond }

    /// Dropped events the trace reported so far (sum of `droppedEvents`).
    public var droppedEventCount: UInt64 { core.droppedEventCount }

    /// Bytes of the file consumed so far, and the file's size (for progress).
    public var bytesConsumed: UInt64 { core.base + UInt64(core.pos) }
    public var fileSize: UInt64 { core.fileSize }
}
