import HitchAlgorithms
import HitchReader
import HitchTrace

// Where every importer puts its events: an FXT file through `TraceFileWriter`, the same format the
// recorder writes, so the analyzer never knows where a trace came from. Other tools emit out of time
// order (SurfaceFlinger reports a frame after it is shown, Instruments writes one table after
// another), and the analyzer wants each thread's events in time order: the sink holds events in one
// bounded reorder stage and writes them oldest first (Chrome JSON, read whole, keeps its file order).

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

/// What an import wrote.
public struct ImportSummary: Sendable {
    public var events = 0
    public var bytes: UInt64 = 0
    public var frames = 0
    /// Samples and the platform's own hitches (`PlatformHitch`) written: with frames, what an
    /// analysis of the import can stand on (`TraceImport.run` refuses an import with none).
    public var samples = 0
    public var platformHitches = 0
    /// Hangs (`hang` events: a platform's hang tables, ANRs, long main-thread slices) written.
    public var hangs = 0
    /// Things skipped or approximated on the way in, one line each, counted.
    public var warnings: [String] = []
    /// The warnings name their file (an import of several files); else they are the one file's.
    public var namesFiles = false
    public init() {}
}

/// The bounded reorder stage and the FXT writer behind it.
public final class ImportSink {
    private let writer: TraceFileWriter
    private var threadIndex: [ThreadKey: ThreadID] = [:]
    private struct ThreadKey: Hashable { var pid: UInt64; var tid: UInt64 }
    /// A held event's place in the reorder stage: its time, its arrival, and the slot of `held` that
    /// holds it. The heap moves these small plain values; the events stay in their slots.
    private struct Pending: HeapElement {
        var timestampNs: Int64
        var sequence: UInt64
        var slot: Int
        /// Earlier time first; at one time, arrival order.
        @inline(__always) func precedes(_ other: Pending) -> Bool {
            timestampNs != other.timestampNs ? timestampNs < other.timestampNs : sequence < other.sequence
        }
    }
    /// The reorder stage: the held events' places, oldest first.
    private var heap = BinaryHeap<Pending>()
    private var held: [(event: TraceEvent, arguments: EventArguments)?] = []
    private var freeSlots: [Int] = []
    private var sequence: UInt64 = 0
    private var newestNs = Int64.min
    private var writtenThroughNs = Int64.min
    private var lateEvents = 0
    private var platformHitchCategory: StringID?
    private struct Skip: Hashable {
        enum Kind { case skipped, note, countedNote }
        var input: String?; var what: String; var kind = Kind.skipped
    }
    private var skipped: [Skip: Int] = [:]
    private var skippedOrder: [Skip] = []
    private var inputs: [String] = []
    /// The file being imported (`TraceImport.run` sets it): what is skipped is counted per file, and
    /// an import of several files names the file in each warning. nil while nothing is read (the
    /// importer's `finish`).
    public var currentInput: String? {
        didSet { if let currentInput, !inputs.contains(currentInput) { inputs.append(currentInput) } }
    }
    public private(set) var summary = ImportSummary()

    /// Events are held until one `reorderWindowNs` newer has arrived, and at most `maxPendingEvents`
    /// at once (about 100 bytes each): the memory bound of every import.
    public let reorderWindowNs: Int64
    public let maxPendingEvents: Int
    /// Events are written as they come, in the importer's order (`ImportFormat.keepsFileOrder`).
    public let keepsFileOrder: Bool

    public init(path: String, keepsFileOrder: Bool = false, reorderWindowNs: Int64 = 10_000_000_000, maxPendingEvents: Int = 400_000) throws {
        do {
            writer = try TraceFileWriter(path: path, ticksPerSecond: 1_000_000_000)
        } catch {
            throw ImportError(file: path, location: "output", expected: "a writable FXT file (\(error))")
        }
        self.keepsFileOrder = keepsFileOrder
        self.reorderWindowNs = reorderWindowNs
        self.maxPendingEvents = maxPendingEvents
    }

    public func string(_ text: String) -> StringID { writer.string(text) }

    /// The thread with these ids, declared on first use with `name` (and `role`).
    public func thread(pid: UInt64, tid: UInt64, name: String, role: ThreadRole? = nil) -> ThreadID {
        let key = ThreadKey(pid: pid, tid: tid)
        if let id = threadIndex[key] { return id }
        let id = writer.thread(name: name, threadID: tid, processID: pid, role: role)
        threadIndex[key] = id
        return id
    }

    /// One of the project's metadata keys (`MetadataKey`), said at `timestampNs` on `thread`.
    public func metadata(_ key: MetadataKey, _ value: String, thread: ThreadID, timestampNs: Int64) {
        emit(TraceEvent(timestampNs: timestampNs, thread: thread, payload: .metadata(key: writer.string(key.name), value: writer.string(value))))
    }

    /// Counts something the importer could not carry over; reported once per kind (and file) at the end.
    public func skip(_ what: String, count: Int = 1) {
        let key = Skip(input: currentInput, what: what)
        if skipped[key] == nil { skippedOrder.append(key) }
        skipped[key, default: 0] += count
    }

    /// Says something about the import that is no loss (a choice made, a value taken as asked, frames
    /// kept though odd), once per text at the end among the warnings; `counted`: how often, first.
    public func note(_ text: String, counted: Bool = false) {
        let key = Skip(input: currentInput, what: text, kind: counted ? .countedNote : .note)
        if skipped[key] == nil { skippedOrder.append(key) }
        skipped[key, default: 0] += 1
    }

    public func emit(_ event: TraceEvent, arguments: EventArguments = EventArguments()) {
        switch event.payload {
        case .frameBegan: summary.frames += 1
        case .sample: summary.samples += 1
        case .hang: summary.hangs += 1
        case .instant(let category, _):
            let hitchCategory = platformHitchCategory ?? writer.string(PlatformHitch.category)
            platformHitchCategory = hitchCategory
            if category == hitchCategory { summary.platformHitches += 1 }
        default: break
        }
        if keepsFileOrder { return write(event, arguments: arguments) }
        if event.timestampNs < writtenThroughNs { lateEvents += 1 }
        sequence += 1
        let slot: Int
        if let free = freeSlots.popLast() { slot = free; held[slot] = (event, arguments) } else { slot = held.count; held.append((event, arguments)) }
        heap.push(Pending(timestampNs: event.timestampNs, sequence: sequence, slot: slot))
        if event.timestampNs > newestNs { newestNs = event.timestampNs }
        let horizon = newestNs.subtractingReportingOverflow(reorderWindowNs)
        let horizonNs = horizon.overflow ? Int64.min : horizon.partialValue
        while let first = heap.first, first.timestampNs < horizonNs || heap.count > maxPendingEvents {
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
        for key in skippedOrder {
            let file = inputs.count > 1 ? key.input.map { $0 + ": " } ?? "" : ""
            let count = skipped[key] ?? 0
            switch key.kind {
            case .skipped: summary.warnings.append(file + "skipped \(count) \(key.what)")
            case .note: summary.warnings.append(file + key.what)
            case .countedNote: summary.warnings.append(file + "\(count) \(key.what)")
            }
        }
        summary.namesFiles = inputs.count > 1
        return summary
    }

    private func writeOldest() {
        guard let oldest = heap.pop(), let (event, arguments) = held[oldest.slot] else { return }
        held[oldest.slot] = nil
        freeSlots.append(oldest.slot)
        writtenThroughNs = max(writtenThroughNs, event.timestampNs)
        write(event, arguments: arguments)
    }

    private func write(_ event: TraceEvent, arguments: EventArguments) {
        writer.write(event, arguments: arguments)
        summary.events += 1
    }
}
