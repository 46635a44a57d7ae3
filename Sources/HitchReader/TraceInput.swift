/// A stream of decoded events plus the tables that name their strings and threads: what the
/// analyzer and the exporters consume. The FXT `TraceReader` is one; `TraceEventList` (hand-built
/// events) is another.
public protocol TraceInput {
    /// The next event in file order, or nil at the end.
    mutating func nextEvent() throws -> TraceEvent?
    /// Resolves an interned string of this trace.
    func string(_ id: StringID) -> String
    /// The name of a thread of this trace ("main" names the main thread when no thread has a role).
    func threadName(_ thread: ThreadID) -> String
    /// The role the recorder stored for a thread ("main", "render"), or nil (docs/METRICS.md "Trace inputs").
    func threadRole(_ thread: ThreadID) -> String?
    /// The thread's process and thread ids as the trace stores them (an FXT thread's koids), or nil:
    /// what breaks ties between candidate main threads independently of file order.
    func threadKoids(_ thread: ThreadID) -> (processID: UInt64, threadID: UInt64)?
    /// How far through the input the stream is (0...1), for progress bars; nil when unknown.
    var progress: Double? { get }
    /// Where the input ends inside a record (a file cut short), once the stream has ended; nil when
    /// it ended on a whole record, or the input has no records (events in memory).
    var cutShortAtOffset: UInt64? { get }
    /// Starts the stream again from its first event; false if this input cannot (the analyzer then
    /// keeps what one read gave, with a warning).
    mutating func rewind() throws -> Bool
    /// Decodes the next event into `event`; false at the end. Inputs that can write the event in
    /// place (the FXT reader) implement this; the default goes through `nextEvent()`.
    mutating func nextEvent(into event: inout TraceEvent) throws -> Bool
    /// The app arguments of the last event returned, when it is an interval or instant that has
    /// any (docs/FORMAT.md §5 "Arguments"); empty otherwise. Inputs without arguments keep the default.
    var arguments: EventArguments { get }
}

extension TraceInput {
    public func threadRole(_ thread: ThreadID) -> String? { nil }
    public var cutShortAtOffset: UInt64? { nil }
    public var arguments: EventArguments { EventArguments() }
    public func threadKoids(_ thread: ThreadID) -> (processID: UInt64, threadID: UInt64)? { nil }
    public mutating func rewind() throws -> Bool { false }

    public mutating func nextEvent(into event: inout TraceEvent) throws -> Bool {
        guard let next = try nextEvent() else { return false }
        event = next
        return true
    }
}

/// The FXT reader is the usual input.
extension TraceReader: TraceInput {
    @inlinable
    public mutating func nextEvent() throws -> TraceEvent? { try next() }
    @inlinable
    public mutating func nextEvent(into event: inout TraceEvent) throws -> Bool { try next(into: &event) }
    public var progress: Double? { fileSize > 0 ? Double(bytesConsumed) / Double(fileSize) : nil }
    public mutating func rewind() throws -> Bool {
        self = try reopened()
        return true
    }
}

/// Hand-built events with their string and thread tables (tests, generators, importers).
public struct TraceEventList: TraceInput, Sendable {
    public var events: [TraceEvent]
    public var strings: [String]
    public var threadNames: [String]
    private var position = 0

    public init(events: [TraceEvent] = [], strings: [String] = [], threadNames: [String] = []) {
        self.events = events
        self.strings = strings
        self.threadNames = threadNames
    }

    /// Interns `text`, returning its id (linear search: for small hand-built traces).
    public mutating func intern(_ text: String) -> StringID {
        if let index = strings.firstIndex(of: text) { return StringID(rawValue: UInt32(index)) }
        strings.append(text)
        return StringID(rawValue: UInt32(strings.count - 1))
    }

    /// Registers a thread name, returning its id.
    public mutating func thread(_ name: String) -> ThreadID {
        if let index = threadNames.firstIndex(of: name) { return ThreadID(rawValue: UInt32(index)) }
        threadNames.append(name)
        return ThreadID(rawValue: UInt32(threadNames.count - 1))
    }

    public mutating func append(_ timestampNs: Int64, _ thread: ThreadID, _ payload: TraceEvent.Payload) {
        events.append(TraceEvent(timestampNs: timestampNs, thread: thread, payload: payload))
    }

    public mutating func nextEvent() throws -> TraceEvent? {
        guard position < events.count else { return nil }
        defer { position += 1 }
        return events[position]
    }

    public func string(_ id: StringID) -> String {
        Int(id.rawValue) < strings.count ? strings[Int(id.rawValue)] : ""
    }

    public func threadName(_ thread: ThreadID) -> String {
        Int(thread.rawValue) < threadNames.count ? threadNames[Int(thread.rawValue)] : "thread \(thread.rawValue)"
    }

    public var progress: Double? { events.isEmpty ? nil : Double(position) / Double(events.count) }

    public mutating func rewind() throws -> Bool {
        position = 0
        return true
    }
}
