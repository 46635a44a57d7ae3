import HitchReader

// Where every streaming importer (framestats, Perfetto, xctrace) puts its events: an FXT file through
// `TraceFileWriter`, the same format the recorder writes, so the analyzer never knows where a trace
// came from. Other tools emit out of time order (SurfaceFlinger reports a frame after it is shown,
// Instruments writes one table after another), and the analyzer wants each thread's events in time
// order: the sink holds events in one bounded reorder stage and writes them oldest first.

/// One line for a file another tool wrote that cannot be read: the file, where (a byte offset, a
/// line, an element), and what was expected there.
public struct ImportError: Error, CustomStringConvertible, Sendable, Equatable {
    public var file: String
    public var location: String
    public var expected: String

    public init(file: String, location: String, expected: String) {
        self.file = file; self.location = location; self.expected = expected
    }

    /// One line whatever the input held: control characters from the file (a process or layer name
    /// quoted in `expected`) are shown as spaces.
    public var description: String {
        String(String.UnicodeScalarView("\(file): \(location): \(expected)".unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7F ? " " : $0
        }))
    }
}

/// The formats `hitch import` reads besides Chrome JSON, and how a file of each is recognised.
public enum ImportFormat: String, Sendable, CaseIterable {
    case framestats, perfetto, xctrace

    /// The format of a file from its first bytes, if it is one of these. Perfetto traces are a
    /// protobuf `Trace` whose first field is `packet` (field 1, length-delimited: byte 0x0A).
    public static func sniff(_ head: ArraySlice<UInt8>) -> ImportFormat? {
        var bytes = head
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if text.contains("---PROFILEDATA---") || text.contains("Graphics info for pid") || text.hasPrefix("Applications Graphics Acceleration Info") {
            return .framestats
        }
        let trimmed = text.drop(while: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" })
        if trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<trace-query-result") { return .xctrace }
        // A Trace's first packet: field 1, wire type 2, then a length and the packet's first tag.
        if bytes.count >= 3, bytes.first == 0x0A, bytes.dropFirst().first.map({ $0 != 0x0A }) ?? false { return .perfetto }
        return nil
    }
}

/// What an import wrote.
public struct ImportSummary: Sendable {
    public var events = 0
    public var bytes: UInt64 = 0
    public var frames = 0
    /// Things skipped or approximated on the way in, one line each, counted.
    public var warnings: [String] = []
    public init() {}
}

/// The bounded reorder stage and the FXT writer behind it.
public final class ImportSink {
    private let writer: TraceFileWriter
    private var threadIndex: [ThreadKey: ThreadID] = [:]
    private struct ThreadKey: Hashable { var pid: UInt64; var tid: UInt64 }
    private struct Pending {
        var event: TraceEvent
        var arguments: EventArguments
        var sequence: UInt64
        /// Earlier time first; at one time, arrival order.
        @inline(__always) func precedes(_ other: Pending) -> Bool {
            event.timestampNs != other.event.timestampNs ? event.timestampNs < other.event.timestampNs : sequence < other.sequence
        }
    }
    private var heap: [Pending] = []
    private var sequence: UInt64 = 0
    private var newestNs = Int64.min
    private var writtenThroughNs = Int64.min
    private var lateEvents = 0
    private var skipped: [String: Int] = [:]
    private var skippedOrder: [String] = []
    public private(set) var summary = ImportSummary()

    /// Events are held until one `reorderWindowNs` newer has arrived, and at most `maxPendingEvents`
    /// at once (about 100 bytes each): the memory bound of every import.
    public let reorderWindowNs: Int64
    public let maxPendingEvents: Int

    public init(path: String, reorderWindowNs: Int64 = 10_000_000_000, maxPendingEvents: Int = 400_000) throws {
        do {
            writer = try TraceFileWriter(path: path, ticksPerSecond: 1_000_000_000)
        } catch {
            throw ImportError(file: path, location: "output", expected: "a writable FXT file (\(error))")
        }
        self.reorderWindowNs = reorderWindowNs
        self.maxPendingEvents = maxPendingEvents
    }

    public func string(_ text: String) -> StringID { writer.string(text) }

    /// The thread with these ids, declared on first use with `name` (and `role`: "main", "render").
    public func thread(pid: UInt64, tid: UInt64, name: String, role: String? = nil) -> ThreadID {
        let key = ThreadKey(pid: pid, tid: tid)
        if let id = threadIndex[key] { return id }
        let id = writer.thread(name: name, threadID: tid, processID: pid, role: role)
        threadIndex[key] = id
        return id
    }

    public func metadata(_ key: String, _ value: String, thread: ThreadID, timestampNs: Int64) {
        emit(TraceEvent(timestampNs: timestampNs, thread: thread, payload: .metadata(key: writer.string(key), value: writer.string(value))))
    }

    /// Counts something the importer could not carry over; reported once per kind at the end.
    public func skip(_ what: String, count: Int = 1) {
        if skipped[what] == nil { skippedOrder.append(what) }
        skipped[what, default: 0] += count
    }

    public func emit(_ event: TraceEvent, arguments: EventArguments = EventArguments()) {
        if case .frameBegan = event.payload { summary.frames += 1 }
        if event.timestampNs < writtenThroughNs { lateEvents += 1 }
        sequence += 1
        push(Pending(event: event, arguments: arguments, sequence: sequence))
        if event.timestampNs > newestNs { newestNs = event.timestampNs }
        let horizon = newestNs.subtractingReportingOverflow(reorderWindowNs)
        let horizonNs = horizon.overflow ? Int64.min : horizon.partialValue
        while let first = heap.first, first.event.timestampNs < horizonNs || heap.count > maxPendingEvents {
            writeOldest()
        }
    }

    /// Writes what is held and closes the file.
    public func finish() throws -> ImportSummary {
        while !heap.isEmpty { writeOldest() }
        do {
            summary.bytes = try writer.close()
        } catch {
            throw ImportError(file: writer.path, location: "output", expected: "room to write the FXT file (\(error))")
        }
        if lateEvents > 0 {
            summary.warnings.append("\(lateEvents) events came more than the reorder window (\(reorderWindowNs / 1_000_000) ms or \(maxPendingEvents) events) after newer ones; written out of time order")
        }
        for what in skippedOrder { summary.warnings.append("skipped \(skipped[what] ?? 0) \(what)") }
        return summary
    }

    private func writeOldest() {
        let oldest = popFirst()
        writtenThroughNs = max(writtenThroughNs, oldest.event.timestampNs)
        writer.write(oldest.event, arguments: oldest.arguments)
        summary.events += 1
    }

    // A binary min-heap: the reorder stage's one data structure.
    private func push(_ item: Pending) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() -> Pending {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
                if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}
