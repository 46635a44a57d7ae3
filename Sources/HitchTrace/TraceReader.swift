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

    /// Ticks per second from the initialization record (1e9 without one).
    public var ticksPerSecond: UInt64 { core.converter.ticksPerSecond }

    /// Dropped events the trace reported so far (sum of `droppedEvents`).
    public var droppedEventCount: UInt64 { core.droppedEventCount }

    /// Bytes of the file consumed so far, and the file's size (for progress).
    public var bytesConsumed: UInt64 { core.base + UInt64(core.pos) }
    public var fileSize: UInt64 { core.fileSize }
}

/// The reader's argument slots are the vocabulary's arguments (HitchVocabulary.swift), by raw value:
/// their string ids are `FixedStringIDs.argumentBase + rawValue` in every reader.
private typealias Slot = HitchArgument
private let slotCount = HitchArgument.allCases.count

private enum ArgKind: UInt8 { case integer, unsigned, double, string }

/// The first two arguments of an event as decoded (name id, kind, bits), kept inline in the
/// reader's state: no allocation, two stores per argument.
struct RawArguments {
    fileprivate var names: (UInt32, UInt32) = (0, 0)
    fileprivate var kinds: (ArgKind, ArgKind) = (.unsigned, .unsigned)
    fileprivate var bits: (UInt64, UInt64) = (0, 0)
    fileprivate var count = 0

    @inline(__always) fileprivate mutating func keep(name: UInt32, kind: ArgKind, bits value: UInt64) {
        switch count {
        case 0: names.0 = name; kinds.0 = kind; bits.0 = value
        case 1: names.1 = name; kinds.1 = kind; bits.1 = value
        default: return
        }
        count += 1
    }

    var decoded: EventArguments {
        var arguments = EventArguments()
        if count > 0 { arguments.first = Self.argument(names.0, kinds.0, bits.0) }
        if count > 1 { arguments.second = Self.argument(names.1, kinds.1, bits.1) }
        return arguments
    }

    private static func argument(_ name: UInt32, _ kind: ArgKind, _ bits: UInt64) -> EventArguments.Argument {
        let value: EventArguments.Value
        switch kind {
        case .integer: value = .int(Int64(bitPattern: bits))
        case .unsigned: value = .uint(bits)
        case .double: value = .double(Double(bitPattern: bits))
        case .string: value = .string(StringID(rawValue: UInt32(truncatingIfNeeded: bits)))
        }
        return EventArguments.Argument(name: StringID(rawValue: name), value: value)
    }
}

@usableFromInline
final class ReaderCore {
    // Input window.
    private let fd: Int32
    private let capacity: Int
    private let buffer: UnsafeMutableRawPointer
    let fileSize: UInt64

    // Scalars the per-event path touches live behind a pointer: stored `var`s of a class would pay
    // a dynamic exclusivity check on every access.
    private struct Hot {
        var base: UInt64 = 0
        var pos = 0
        var end = 0
        var eof = false
        var finished = false
        var converter = TickConverter(ticksPerSecond: 1_000_000_000)
        var clock = DecodeClock(ticksPerSecond: 1_000_000_000)
        var argMask: UInt64 = 0
        /// Where the last event's arguments are in the buffer (intact until the next read), for the
        /// app's arguments and a counter's first numeric one, decoded only when asked.
        var argumentsStart = 0
        var argumentsLimit = 0
        var argumentCount = 0
        /// Whether the last event was generic (its app arguments are an interval's or instant's).
        var lastEventIsGeneric = false
        var lastTimestampNs: Int64 = 0
        var droppedEventCount: UInt64 = 0
        /// The incoming side of a context switch record that named both threads (returned next; thread
        /// 0 when none): plain fields, so the per-event check is one compare.
        var pendingSwitchInThread: UInt32 = 0
        var pendingSwitchInNs: Int64 = 0
        var pendingSwitchInCPU: UInt16 = 0
    }
    private let hot: UnsafeMutablePointer<Hot> = {
        let pointer = UnsafeMutablePointer<Hot>.allocate(capacity: 1)
        pointer.initialize(to: Hot())
        return pointer
    }()
    var base: UInt64 { get { hot.pointee.base } set { hot.pointee.base = newValue } }
    var pos: Int { get { hot.pointee.pos } set { hot.pointee.pos = newValue } }
    private var end: Int { get { hot.pointee.end } set { hot.pointee.end = newValue } }
    private var eof: Bool { get { hot.pointee.eof } set { hot.pointee.eof = newValue } }
    private var finished: Bool { get { hot.pointee.finished } set { hot.pointee.finished = newValue } }
    var converter: TickConverter { get { hot.pointee.converter } set { hot.pointee.converter = newValue } }
    private var clock: DecodeClock { hot.pointee.clock }
    private var argMask: UInt64 { get { hot.pointee.argMask } set { hot.pointee.argMask = newValue } }
    private var lastTimestampNs: Int64 { get { hot.pointee.lastTimestampNs } set { hot.pointee.lastTimestampNs = newValue } }
    var droppedEventCount: UInt64 { get { hot.pointee.droppedEventCount } set { hot.pointee.droppedEventCount = newValue } }

    // FXT tables: ref -> dense id. `undefined` marks an index no string record has set.
    private static let undefined = UInt32.max
    private let fxtStrings: UnsafeMutablePointer<UInt32>
    private let fxtThreads: UnsafeMutablePointer<UInt32>

    // Distinct strings and threads, bounded so hostile input cannot grow memory without limit.
    private static let maxStrings = 1 << 20
    private static let maxStringBytes = 256 << 20
    private static let maxThreads = 1 << 16
    // Tables and diagnostics, also behind a pointer (no exclusivity checks on the per-event path).
    private struct Cold {
        var strings: [String] = [""]
        var stringLookup: [String: UInt32] = ["": 0]
        var stringBytes = 0
        var threadKoids: [(pid: UInt64, tid: UInt64)] = [(0, 0)]
        var threadLookup: [UInt64: [UInt32]] = [:]
        var koidNames: [UInt64: UInt32] = [:]
        var koidRoles: [UInt64: UInt32] = [:]
        var metadata: [String: String] = [:]
        var warnings: [TraceReadWarning] = []
        var warningCount = 0
    }
    private let cold: UnsafeMutablePointer<Cold> = {
        let pointer = UnsafeMutablePointer<Cold>.allocate(capacity: 1)
        pointer.initialize(to: Cold())
        return pointer
    }()
    var metadata: [String: String] { cold.pointee.metadata }
    var warnings: [TraceReadWarning] { cold.pointee.warnings }
    var warningCount: Int { cold.pointee.warningCount }

    // Arguments of the event being decoded, by known slot.
    private let argBits: UnsafeMutablePointer<UInt64>
    private let argKinds: UnsafeMutablePointer<UInt8>

    // Fixed ids of the vocabulary's words (FixedStringIDs), copied into stored constants: a static
    // computed from other statics is a lazily initialized global, checked on every access.
    private struct IDs {
        let argumentBase = FixedStringIDs.argumentBase, categoryBase = FixedStringIDs.categoryBase
        let eventNameBase = FixedStringIDs.eventNameBase, blobBase = FixedStringIDs.blobBase
        let tokenStageBase = FixedStringIDs.tokenStageBase, viewChangeBase = FixedStringIDs.viewChangeBase
        let viewReasonBase = FixedStringIDs.viewReasonBase, byteKindBase = FixedStringIDs.byteKindBase
        let switchDirectionBase = FixedStringIDs.switchDirectionBase
        let categoryCount = UInt32(HitchCategory.allCases.count)
    }
    private let ids = IDs()
    private let argumentSlots = slotCount

    convenience init(path: String) throws(TraceReadError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        var info = stat()
        let size: UInt64 = fstat(fd, &info) == 0 ? UInt64(max(info.st_size, 0)) : 0
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw .cannotOpen(path: path, reason: "is a directory")
        }
        try self.init(fd: fd, capacity: (1 << 20) + (64 << 10), fileSize: size, bytes: nil)
        sourcePath = path
    }

    /// The file this core reads, or nil for bytes in memory.
    private var sourcePath: String?

    /// A core reading the same input from its start.
    func reopened() throws(TraceReadError) -> ReaderCore {
        if let sourcePath { return try ReaderCore(path: sourcePath) }
        // In memory the buffer holds the whole input and is never refilled.
        return try ReaderCore(bytes: Array(UnsafeRawBufferPointer(start: buffer, count: end)))
    }

    convenience init(bytes: [UInt8]) throws(TraceReadError) {
        try self.init(fd: -1, capacity: max(bytes.count, 8), fileSize: UInt64(bytes.count), bytes: bytes)
    }

    private init(fd: Int32, capacity: Int, fileSize: UInt64, bytes: [UInt8]?) throws(TraceReadError) {
        self.fd = fd
        self.capacity = capacity
        self.fileSize = fileSize
        buffer = .allocate(byteCount: capacity, alignment: 8)
        fxtStrings = .allocate(capacity: 0x8000)
        fxtStrings.initialize(repeating: ReaderCore.undefined, count: 0x8000)
        fxtStrings[0] = 0
        fxtThreads = .allocate(capacity: 256)
        fxtThreads.initialize(repeating: ReaderCore.undefined, count: 256)
        argBits = .allocate(capacity: slotCount)
        argBits.initialize(repeating: 0, count: slotCount)
        argKinds = .allocate(capacity: slotCount)
        argKinds.initialize(repeating: 0, count: slotCount)
        if let bytes {
            bytes.withUnsafeBytes { if !$0.isEmpty { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
            end = bytes.count
            eof = true
        }
        for word in FixedStringIDs.words { _ = try intern(word, offset: 0) }
        guard try ensure(8) else {
            if end - pos == 0 { throw .empty }
            throw .badMagic(offset: 0, found: 0)
        }
        let first = load(pos)
        guard first == FXT.magic else { throw .badMagic(offset: 0, found: first) }
    }

    deinit {
        buffer.deallocate()
        fxtStrings.deallocate()
        fxtThreads.deallocate()
        argBits.deallocate()
        argKinds.deallocate()
        hot.deinitialize(count: 1)
        hot.deallocate()
        cold.deinitialize(count: 1)
        cold.deallocate()
        if fd >= 0 { close(fd) }
    }

    // MARK: Input

    @inline(__always) private func load(_ at: Int) -> UInt64 {
        buffer.loadUnaligned(fromByteOffset: at, as: UInt64.self)
    }

    /// Makes `count` bytes available at `pos`; false if the input ends first.
    @inline(__always) private func ensure(_ count: Int) throws(TraceReadError) -> Bool {
        if end - pos >= count { return true }
        return try refill(count)
    }

    private func refill(_ count: Int) throws(TraceReadError) -> Bool {
        if eof || fd < 0 { return end - pos >= count }
        let remaining = end - pos
        if pos > 0 {
            if remaining > 0 { memmove(buffer, buffer + pos, remaining) }
            base += UInt64(pos)
            pos = 0
            end = remaining
        }
        while end - pos < count && !eof {
            let n = read(fd, buffer + end, capacity - end)
            if n < 0 {
                if errno == EINTR { continue }
                throw .ioError(offset: base + UInt64(end), reason: String(cString: strerror(errno)))
            }
            if n == 0 { eof = true } else { end += n }
        }
        return end - pos >= count
    }

    /// Skips `bytes` from `pos` (large records); false if the input ends first.
    private func skip(_ bytes: UInt64) throws(TraceReadError) -> Bool {
        let available = UInt64(end - pos)
        if bytes <= available { pos += Int(bytes); return true }
        let target = base + UInt64(pos) + bytes
        if fd < 0 || target > fileSize { return false }
        if lseek(fd, off_t(target), SEEK_SET) < 0 {
            throw .ioError(offset: base + UInt64(pos), reason: String(cString: strerror(errno)))
        }
        base = target
        pos = 0
        end = 0
        eof = false
        return true
    }

    private func warn(_ offset: UInt64, _ message: String) {
        cold.pointee.warningCount += 1
        if cold.pointee.warnings.count < 100 { cold.pointee.warnings.append(TraceReadWarning(offset: offset, message: message)) }
    }

    // MARK: Strings and threads

    private func intern(_ text: String, offset: UInt64) throws(TraceReadError) -> UInt32 {
        if let id = cold.pointee.stringLookup[text] { return id }
        guard cold.pointee.strings.count < ReaderCore.maxStrings, cold.pointee.stringBytes < ReaderCore.maxStringBytes else {
            throw .tooManyStrings(offset: offset, limit: ReaderCore.maxStrings)
        }
        let id = UInt32(cold.pointee.strings.count)
        cold.pointee.strings.append(text)
        cold.pointee.stringBytes += text.utf8.count
        cold.pointee.stringLookup[text] = id
        return id
    }

    private func internBytes(at: Int, length: Int, offset: UInt64) throws(TraceReadError) -> UInt32 {
        let text = String(decoding: UnsafeRawBufferPointer(start: buffer + at, count: length), as: UTF8.self)
        return try intern(text, offset: offset)
    }

    func string(_ id: StringID) -> String {
        Int(id.rawValue) < cold.pointee.strings.count ? cold.pointee.strings[Int(id.rawValue)] : ""
    }

    func existingStringID(_ text: String) -> StringID? {
        cold.pointee.stringLookup[text].map { StringID(rawValue: $0) }
    }

    private func threadID(pid: UInt64, tid: UInt64, offset: UInt64) throws(TraceReadError) -> UInt32 {
        if let candidates = cold.pointee.threadLookup[tid] {
            for id in candidates where cold.pointee.threadKoids[Int(id)].pid == pid { return id }
        }
        guard cold.pointee.threadKoids.count <= ReaderCore.maxThreads else { throw .tooManyThreads(offset: offset, limit: ReaderCore.maxThreads) }
        let id = UInt32(cold.pointee.threadKoids.count)
        cold.pointee.threadKoids.append((pid, tid))
        cold.pointee.threadLookup[tid, default: []].append(id)
        return id
    }

    func threadName(_ id: ThreadID) -> String {
        let index = Int(id.rawValue)
        guard index > 0, index < cold.pointee.threadKoids.count else { return "" }
        if let name = cold.pointee.koidNames[cold.pointee.threadKoids[index].tid] { return cold.pointee.strings[Int(name)] }
        return "thread \(cold.pointee.threadKoids[index].tid)"
    }

    func threadKoids(_ id: ThreadID) -> (processID: UInt64, threadID: UInt64)? {
        let index = Int(id.rawValue)
        guard index > 0, index < cold.pointee.threadKoids.count else { return nil }
        return (cold.pointee.threadKoids[index].pid, cold.pointee.threadKoids[index].tid)
    }

    func threadRole(_ id: ThreadID) -> String? {
        let index = Int(id.rawValue)
        guard index > 0, index < cold.pointee.threadKoids.count,
              let role = cold.pointee.koidRoles[cold.pointee.threadKoids[index].tid] else { return nil }
        return cold.pointee.strings[Int(role)]
    }

    func allThreads() -> [TraceThread] {
        (1..<max(cold.pointee.threadKoids.count, 1)).map { index in
            TraceThread(id: ThreadID(rawValue: UInt32(index)), processID: cold.pointee.threadKoids[index].pid,
                        threadID: cold.pointee.threadKoids[index].tid, name: threadName(ThreadID(rawValue: UInt32(index))))
        }
    }

    // MARK: Records

    @usableFromInline
    func next(into event: inout TraceEvent) throws(TraceReadError) -> Bool {
        // Fast path: an event record wholly inside the window (nearly every record). It does what the
        // general loop does for such a record, without that loop's setup (its warnings' text is
        // materialized on entry); anything else, and a pending switch-in, goes the general way.
        let hot = self.hot
        while hot.pointee.pendingSwitchInThread == 0 && !hot.pointee.finished {
            let start = hot.pointee.pos
            let available = hot.pointee.end &- start
            guard available >= 8 else { break }
            let header = load(start)
            let size = Int(truncatingIfNeeded: (header >> 4) & 0xFFF) &* 8
            guard header & 0xF == FXT.RecordType.event.rawValue, size != 0, size <= available else { break }
            hot.pointee.pos = start &+ size
            switch decodeCommonEvent(header: header, at: start, size: size, into: &event) {
            case .event: return true
            case .skipped: continue
            case .general:
                if try decodeEvent(header: header, at: start, size: size, offset: hot.pointee.base &+ UInt64(start), into: &event) {
                    return true
                }
            }
        }
        return try nextRecord(into: &event)
    }

    /// The general loop: every record type, refills, truncation and the pending switch-in.
    @inline(never)
    private func nextRecord(into event: inout TraceEvent) throws(TraceReadError) -> Bool {
        if hot.pointee.pendingSwitchInThread != 0 {
            event = TraceEvent(timestampNs: hot.pointee.pendingSwitchInNs, thread: ThreadID(rawValue: hot.pointee.pendingSwitchInThread),
                               payload: .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: hot.pointee.pendingSwitchInCPU)))
            hot.pointee.pendingSwitchInThread = 0
            return true
        }
        while !finished {
            guard try ensure(8) else {
                if end - pos > 0 { warn(base + UInt64(pos), "truncated record: the trace ends \(end - pos) bytes into a record header") }
                finished = true
                return false
            }
            let offset = base + UInt64(pos)
            let header = load(pos)
            let type = header & 0xF
            if type == FXT.RecordType.large.rawValue {
                let words = (header >> 4) & 0xFFFF_FFFF
                guard words > 0 else { throw .impossibleRecordSize(offset: offset, header: header) }
                let largeType = (header >> 36) & 0xF
                if largeType != 0 { warn(offset, "unknown large record type \(largeType) skipped") }
                guard try skip(words * 8) else {
                    warn(offset, "truncated large record: \(words * 8) bytes declared, the trace ends first")
                    finished = true
                    return false
                }
                continue
            }
            let words = Int((header >> 4) & 0xFFF)
            guard words > 0 else { throw .impossibleRecordSize(offset: offset, header: header) }
            let size = words * 8
            guard try ensure(size) else {
                warn(offset, "truncated record: \(size) bytes declared, \(end - pos) present (the writer was likely killed)")
                finished = true
                return false
            }
            let recordStart = pos
            pos += size
            switch type {
            case FXT.RecordType.event.rawValue:
                if try decodeEvent(header: header, at: recordStart, size: size, offset: offset, into: &event) { return true }
            case FXT.RecordType.string.rawValue:
                try decodeString(header: header, at: recordStart, size: size, offset: offset)
            case FXT.RecordType.thread.rawValue:
                guard size >= 24 else { warn(offset, "thread record too short; skipped"); continue }
                let index = Int((header >> 16) & 0xFF)
                if index == 0 { continue }
                fxtThreads[index] = try threadID(pid: load(recordStart + 8), tid: load(recordStart + 16), offset: offset)
            case FXT.RecordType.initialization.rawValue:
                guard size >= 16 else { warn(offset, "initialization record too short; skipped"); continue }
                let ticks = load(recordStart + 8)
                if ticks == 0 { warn(offset, "initialization record with 0 ticks per second; kept 1e9") }
                else { converter = TickConverter(ticksPerSecond: ticks); hot.pointee.clock = DecodeClock(ticksPerSecond: ticks) }
            case FXT.RecordType.kernelObject.rawValue:
                try decodeKernelObject(header: header, at: recordStart, size: size, offset: offset)
            case FXT.RecordType.blob.rawValue:
                if try decodeBlob(header: header, at: recordStart, size: size, offset: offset, into: &event) { return true }
            case FXT.RecordType.metadata.rawValue:
                let metadataType = (header >> 16) & 0xF
                if metadataType == 4, (header >> 20) & 0xF == 0, header != FXT.magic {
                    warn(offset, "magic number record with a wrong magic number; skipped")
                }
            case FXT.RecordType.scheduling.rawValue:
                if try decodeContextSwitch(header: header, at: recordStart, size: size, offset: offset, into: &event) { return true }
            case FXT.RecordType.userspaceObject.rawValue, FXT.RecordType.log.rawValue:
                continue   // valid FXT the project does not use
            default:
                warn(offset, "unknown record type \(type) (\(size) bytes) skipped")
            }
        }
        return false
    }

    /// A legacy context switch record (scheduling type 0, docs/FORMAT.md "Thread states") as
    /// `schedSwitch` events: the outgoing thread switched out (preempted when its new state is
    /// "running"), the incoming one switched in; koid 0 (the unknown side) yields no event.
    private func decodeContextSwitch(header: UInt64, at start: Int, size: Int, offset: UInt64, into event: inout TraceEvent) throws(TraceReadError) -> Bool {
        guard header >> 60 == 0 else { return false }   // newer scheduling records: not used here
        guard size >= 16 else { warn(offset, "context switch record too short; skipped"); return false }
        let state = (header >> 24) & 0xF
        // 0xFF: the writer did not know the CPU (`SchedSwitch.unknownCPU` in the 8-bit field).
        let cpu = (header >> 16) & 0xFF == 0xFF ? SchedSwitch.unknownCPU : UInt16((header >> 16) & 0xFF)
        let outgoingRef = Int((header >> 28) & 0xFF), incomingRef = Int((header >> 36) & 0xFF)
        let timestampNs = clock.nanoseconds(load(start + 8))
        var cursor = start + 16
        func side(_ ref: Int) throws(TraceReadError) -> UInt32?? {
            if ref != 0 {
                let id = fxtThreads[ref]
                return id == ReaderCore.undefined ? .some(nil) : id
            }
            guard cursor + 16 <= start + size else { return .some(nil) }
            let pid = load(cursor), tid = load(cursor + 8)
            cursor += 16
            if pid == 0 && tid == 0 { return nil }
            return try threadID(pid: pid, tid: tid, offset: offset)
        }
        let outgoing = try side(outgoingRef), incoming = try side(incomingRef)
        if outgoing == .some(nil) || incoming == .some(nil) {
            warn(offset, "context switch record with an undefined thread; skipped")
            return false
        }
        lastTimestampNs = timestampNs
        let switchIn = (incoming ?? nil).map {
            TraceEvent(timestampNs: timestampNs, thread: ThreadID(rawValue: $0), payload: .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: cpu)))
        }
        guard let thread = outgoing ?? nil else {
            guard let switchIn else { return false }
            event = switchIn
            return true
        }
        event = TraceEvent(timestampNs: timestampNs, thread: ThreadID(rawValue: thread), payload: .schedSwitch(
            SchedSwitch(direction: .switchedOut, preempted: state == FXT.ThreadState.running, cpu: cpu)))
        if let switchIn {
            hot.pointee.pendingSwitchInThread = switchIn.thread.rawValue
            hot.pointee.pendingSwitchInNs = switchIn.timestampNs
            hot.pointee.pendingSwitchInCPU = cpu
        }
        return true
    }

    private func decodeString(header: UInt64, at start: Int, size: Int, offset: UInt64) throws(TraceReadError) {
        let index = Int((header >> 16) & 0x7FFF)
        let length = Int((header >> 32) & 0x7FFF)
        guard 8 + length <= size else {
            warn(offset, "string record length \(length) exceeds its record (\(size) bytes); skipped")
            return
        }
        if index == 0 { return }
        fxtStrings[index] = try internBytes(at: start + 8, length: length, offset: offset)
    }

    private func decodeKernelObject(header: UInt64, at start: Int, size: Int, offset: UInt64) throws(TraceReadError) {
        guard size >= 16 else { warn(offset, "kernel object record too short; skipped"); return }
        let nameRef = UInt16(truncatingIfNeeded: header >> 24)
        var cursor = start + 16
        guard let name = try resolve(nameRef, cursor: &cursor, limit: start + size, offset: offset) else {
            warn(offset, "kernel object record with a bad name string ref \(nameRef); skipped")
            return
        }
        // Only thread objects name threads: a process's koid (its pid) equals its main thread's koid.
        guard (header >> 16) & 0xFF == FXT.objectTypeThread else { return }
        if cold.pointee.koidNames.count < ReaderCore.maxThreads * 4 || cold.pointee.koidNames[load(start + 8)] != nil {
            cold.pointee.koidNames[load(start + 8)] = name
            if let role = try threadRoleArgument(count: Int((header >> 40) & 0xF), cursor: cursor, limit: start + size, offset: offset) {
                cold.pointee.koidRoles[load(start + 8)] = role
            }
        }
    }

    /// The string argument "role" of a thread's kernel object record (docs/FORMAT.md), if any.
    private func threadRoleArgument(count: Int, cursor start: Int, limit: Int, offset: UInt64) throws(TraceReadError) -> UInt32? {
        var cursor = start
        for _ in 0..<count {
            guard cursor + 8 <= limit else { return nil }
            let header = load(cursor)
            let words = Int((header >> 4) & 0xFFF)
            guard words > 0, cursor + words * 8 <= limit else { return nil }
            var inner = cursor + 8
            if header & 0xF == FXT.ArgType.string.rawValue,
               let argName = try resolve(UInt16(truncatingIfNeeded: header >> 16), cursor: &inner, limit: limit, offset: offset),
               argName == ids.argumentBase + HitchArgument.role.rawValue {
                return try resolve(UInt16(truncatingIfNeeded: header >> 32), cursor: &inner, limit: limit, offset: offset)
            }
            cursor += words * 8
        }
        return nil
    }

    /// Resolves a string ref to an id; inline strings are read at `cursor` (advanced past them).
    @inline(__always)
    private func resolve(_ ref: UInt16, cursor: inout Int, limit: Int, offset: UInt64) throws(TraceReadError) -> UInt32? {
        if ref & 0x8000 == 0 {
            let id = fxtStrings[Int(ref)]
            return id == ReaderCore.undefined ? nil : id
        }
        let length = Int(ref & 0x7FFF)
        let padded = (length + 7) & ~7
        guard cursor + padded <= limit else { return nil }
        let id = try internBytes(at: cursor, length: length, offset: offset)
        cursor += padded
        return id
    }

    private func decodeEvent(header: UInt64, at start: Int, size: Int, offset: UInt64, into event: inout TraceEvent) throws(TraceReadError) -> Bool {
        let limit = start + size
        guard size >= 16 else { warn(offset, "event record too short; skipped"); return false }
        let eventType = (header >> 16) & 0xF
        let argCount = Int((header >> 20) & 0xF)
        let threadRef = Int((header >> 24) & 0xFF)
        let categoryRef = UInt16(truncatingIfNeeded: header >> 32)
        let nameRef = UInt16(truncatingIfNeeded: header >> 48)
        let timestampNs = clock.nanoseconds(load(start + 8))
        var cursor = start + 16
        var thread: UInt32
        if threadRef == 0 {
            guard cursor + 16 <= limit else { warn(offset, "event record too short for its inline thread; skipped"); return false }
            thread = try threadID(pid: load(cursor), tid: load(cursor + 8), offset: offset)
            cursor += 16
        } else {
            thread = fxtThreads[threadRef]
            if thread == ReaderCore.undefined {
                warn(offset, "event refers to undefined thread ref \(threadRef); skipped")
                return false
            }
        }
        guard let category = try resolve(categoryRef, cursor: &cursor, limit: limit, offset: offset),
              let name = try resolve(nameRef, cursor: &cursor, limit: limit, offset: offset) else {
            warn(offset, "event refers to an undefined or oversized string ref (category \(categoryRef), name \(nameRef)); skipped")
            return false
        }
        guard try decodeArguments(count: argCount, cursor: &cursor, limit: limit, offset: offset) else { return false }
        var trailing: UInt64 = 0
        switch eventType {
        case FXT.EventType.counter.rawValue, FXT.EventType.durationComplete.rawValue,
             FXT.EventType.asyncBegin.rawValue, FXT.EventType.asyncInstant.rawValue, FXT.EventType.asyncEnd.rawValue,
             FXT.EventType.flowBegin.rawValue, FXT.EventType.flowStep.rawValue, FXT.EventType.flowEnd.rawValue:
            guard cursor + 8 <= limit else { warn(offset, "event record too short for its type-specific word; skipped"); return false }
            trailing = load(cursor)
        case 0...4: break
        default:
            warn(offset, "unknown event type \(eventType) skipped")
            return false
        }
        return finishEvent(eventType: eventType, timestampNs: timestampNs, thread: thread, category: category, name: name,
                           trailing: trailing, into: &event)
    }

    /// Decodes an event record of the shape the recorder writes, in a straight line: thread,
    /// category, name and argument names by reference, argument values inline, 64-bit or string
    /// references. `general` when the record has another shape or is malformed: the caller then
    /// decodes it with `decodeEvent`, which also warns. Nothing is changed before the record is
    /// known to fit (the argument slots, which `decodeEvent` rewrites, aside).
    @inline(__always)
    private func decodeCommonEvent(header: UInt64, at start: Int, size: Int, into event: inout TraceEvent) -> CommonDecode {
        let threadRef = Int(truncatingIfNeeded: (header >> 24) & 0xFF)
        let categoryRef = Int(truncatingIfNeeded: (header >> 32) & 0xFFFF), nameRef = Int(truncatingIfNeeded: header >> 48)
        guard size >= 16, threadRef != 0, (categoryRef | nameRef) & 0x8000 == 0 else { return .general }
        let thread = fxtThreads[threadRef], category = fxtStrings[categoryRef], name = fxtStrings[nameRef]
        guard thread != ReaderCore.undefined, category != ReaderCore.undefined, name != ReaderCore.undefined else { return .general }
        let limit = start &+ size
        var cursor = start &+ 16
        let argCount = Int(truncatingIfNeeded: (header >> 20) & 0xF)
        let hot = self.hot
        hot.pointee.argumentsStart = cursor
        hot.pointee.argumentsLimit = limit
        hot.pointee.argumentCount = argCount
        // Locals: the slot stores below go through pointers the compiler cannot tell from this
        // object's fields, so it would reload every field after each store.
        let strings = fxtStrings, slotBits = argBits, slotKinds = argKinds
        let slots = argumentSlots, argumentBase = ids.argumentBase
        var mask: UInt64 = 0
        var remaining = argCount
        while remaining > 0 {
            remaining &-= 1
            guard limit &- cursor >= 8 else { return .general }
            let argument = load(cursor)
            let words = Int(truncatingIfNeeded: (argument >> 4) & 0xFFF)
            let argNameRef = Int(truncatingIfNeeded: (argument >> 16) & 0xFFFF)
            guard words != 0, words <= (limit &- cursor) >> 3, argNameRef & 0x8000 == 0 else { return .general }
            let argName = strings[argNameRef]
            guard argName != ReaderCore.undefined else { return .general }
            let kind: ArgKind, bits: UInt64
            switch argument & 0xF {
            case FXT.ArgType.uint32.rawValue: kind = .unsigned; bits = argument >> 32
            case FXT.ArgType.int32.rawValue: kind = .integer; bits = UInt64(bitPattern: Int64(Int32(truncatingIfNeeded: argument >> 32)))
            case FXT.ArgType.int64.rawValue, FXT.ArgType.uint64.rawValue, FXT.ArgType.double.rawValue,
                 FXT.ArgType.pointer.rawValue, FXT.ArgType.koid.rawValue:
                guard words >= 2 else { return .general }
                let type = argument & 0xF
                kind = type == FXT.ArgType.int64.rawValue ? .integer : type == FXT.ArgType.double.rawValue ? .double : .unsigned
                bits = load(cursor &+ 8)
            case FXT.ArgType.string.rawValue:
                let valueRef = Int(truncatingIfNeeded: (argument >> 32) & 0xFFFF)
                guard valueRef & 0x8000 == 0 else { return .general }
                let value = strings[valueRef]
                guard value != ReaderCore.undefined else { return .general }
                kind = .string; bits = UInt64(value)
            case FXT.ArgType.bool.rawValue: kind = .unsigned; bits = (argument >> 32) & 1
            default:   // null and unknown argument types are skipped by their size
                cursor &+= words &* 8
                continue
            }
            cursor &+= words &* 8
            let slot = Int(argName &- argumentBase)
            if slot < slots {   // at most 64 slots (HitchArgument): the shift stays in the word
                slotBits[slot] = bits
                slotKinds[slot] = kind.rawValue
                mask |= 1 &<< UInt64(slot)
            }
        }
        hot.pointee.argMask = mask
        let eventType = (header >> 16) & 0xF
        var trailing: UInt64 = 0
        if eventType > FXT.EventType.durationComplete.rawValue || eventType == FXT.EventType.counter.rawValue
            || eventType == FXT.EventType.durationComplete.rawValue {
            guard eventType <= FXT.EventType.flowEnd.rawValue, limit &- cursor >= 8 else { return .general }
            trailing = load(cursor)
        }
        let timestampNs = hot.pointee.clock.nanoseconds(load(start &+ 8))
        return finishEvent(eventType: eventType, timestampNs: timestampNs, thread: thread, category: category, name: name,
                           trailing: trailing, into: &event) ? .event : .skipped
    }

    /// What `decodeCommonEvent` made of a record.
    private enum CommonDecode { case event, skipped, general }

    /// The payload of an event whose record was read and checked: a typed event of the project's,
    /// else the generic event of its FXT type; false for the types the project does not use (flows).
    @inline(__always)
    private func finishEvent(eventType: UInt64, timestampNs: Int64, thread: UInt32, category: UInt32, name: UInt32,
                             trailing: UInt64, into event: inout TraceEvent) -> Bool {
        lastTimestampNs = timestampNs
        let threadID = ThreadID(rawValue: thread)
        if hitchPayload(eventType: eventType, category: category, name: name, trailing: trailing, into: &event.payload) {
            hot.pointee.lastEventIsGeneric = false
            event.timestampNs = timestampNs
            event.thread = threadID
            return true
        }
        let categoryID = StringID(rawValue: category), nameID = StringID(rawValue: name)
        let decoded: TraceEvent.Payload
        switch eventType {
        case FXT.EventType.instant.rawValue: decoded = .instant(category: categoryID, name: nameID)
        case FXT.EventType.counter.rawValue:
            decoded = .counter(name: nameID, value: has(.value) ? double(.value) : firstNumericValue())
        case FXT.EventType.durationBegin.rawValue: decoded = .intervalBegin(category: categoryID, name: nameID)
        case FXT.EventType.durationEnd.rawValue: decoded = .intervalEnd(category: categoryID, name: nameID)
        case FXT.EventType.durationComplete.rawValue:
            decoded = .intervalComplete(category: categoryID, name: nameID, endNs: clock.nanoseconds(trailing))
        case FXT.EventType.asyncBegin.rawValue:
            decoded = .asyncIntervalBegin(category: categoryID, name: nameID, id: trailing)
        case FXT.EventType.asyncEnd.rawValue:
            // durationNs/selfNs are the recorder's (-1 when absent: another producer's async event).
            decoded = .asyncIntervalEnd(AsyncIntervalEnd(category: categoryID, name: nameID, id: trailing,
                                                               durationNs: has(.durationNs) ? signed(.durationNs) : -1,
                                                               selfNs: has(.selfNs) ? signed(.selfNs) : -1))
        default: return false   // flow events carry nothing the project uses
        }
        store(decoded, in: &event.payload)
        // Counters and async events carry their arguments in the payload; intervals and instants an app's.
        hot.pointee.lastEventIsGeneric = eventType <= FXT.EventType.durationComplete.rawValue && eventType != FXT.EventType.counter.rawValue
        event.timestampNs = timestampNs
        event.thread = threadID
        return true
    }

    /// Stores a decoded payload over the previous event's. The previous one is destroyed only when it
    /// holds a reference (a stack definition's addresses): every other payload is plain data, and
    /// the large enum's generic destroy cost about 40 instructions per event.
    @inline(__always) private func store(_ decoded: TraceEvent.Payload, in payload: inout TraceEvent.Payload) {
        if case .stackDefinition = payload { payload = decoded; return }
        // Overwriting plain data: nothing to release, so initializing in place is a plain store.
        withUnsafeMutablePointer(to: &payload) { $0.initialize(to: decoded) }
    }

    @inline(__always) private func has(_ slot: Slot) -> Bool { argMask & (1 << UInt64(slot.rawValue)) != 0 }

    /// The string argument in `slot` as a word of `Word` whose ids start at `base`, if it is one.
    @inline(__always) private func word<Word: RawRepresentable>(_ slot: Slot, base: UInt32, as: Word.Type) -> Word? where Word.RawValue == UInt8 {
        guard has(slot), argKinds[Int(slot.rawValue)] == ArgKind.string.rawValue else { return nil }
        let offset = UInt32(truncatingIfNeeded: argBits[Int(slot.rawValue)]) &- base
        return offset < 256 ? Word(rawValue: UInt8(offset)) : nil
    }

    /// The string id of the string argument in `slot` (0, the empty string, when absent or not a string).
    @inline(__always) private func stringArgument(_ slot: Slot) -> UInt32 {
        has(slot) && argKinds[Int(slot.rawValue)] == ArgKind.string.rawValue ? UInt32(truncatingIfNeeded: argBits[Int(slot.rawValue)]) : 0
    }

    /// The last event's app arguments (empty for typed events, whose arguments are in their payload).
    var appArguments: EventArguments {
        guard hot.pointee.lastEventIsGeneric else { return EventArguments() }
        var kept = RawArguments()
        walkArguments { name, kind, bits in kept.keep(name: name, kind: kind, bits: bits); return kept.count < 2 }
        return kept.decoded
    }

    @inline(__always) private func unsigned(_ slot: Slot) -> UInt64 {
        let bits = argBits[Int(slot.rawValue)]
        return argKinds[Int(slot.rawValue)] == ArgKind.double.rawValue ? UInt64(clamping: Int64(Double(bitPattern: bits).rounded(.towardZero).clampedToInt64)) : bits
    }

    @inline(__always) private func signed(_ slot: Slot) -> Int64 { Int64(bitPattern: unsigned(slot)) }

    @inline(__always) private func double(_ slot: Slot) -> Double {
        let bits = argBits[Int(slot.rawValue)]
        switch argKinds[Int(slot.rawValue)] {
        case ArgKind.double.rawValue: return Double(bitPattern: bits)
        case ArgKind.integer.rawValue: return Double(Int64(bitPattern: bits))
        default: return Double(bits)
        }
    }

    /// The value of the last event's first numeric argument (a counter without a `value` one), or 0.
    private func firstNumericValue() -> Double {
        var value: Double = 0
        walkArguments { _, kind, bits in
            switch kind {
            case .double: value = Double(bitPattern: bits)
            case .integer: value = Double(Int64(bitPattern: bits))
            case .unsigned: value = Double(bits)
            case .string: return true
            }
            return false
        }
        return value
    }

    /// Walks the last event's arguments again (decodeArguments checked them; the buffer still holds
    /// the record) until `body` returns false.
    private func walkArguments(_ body: (_ name: UInt32, _ kind: ArgKind, _ bits: UInt64) -> Bool) {
        var cursor = hot.pointee.argumentsStart
        let limit = hot.pointee.argumentsLimit
        for _ in 0..<hot.pointee.argumentCount {
            guard let argument = (try? parseArgument(at: cursor, limit: limit, offset: 0)) ?? nil else { return }
            cursor = argument.next
            if let kind = argument.kind, !body(argument.name, kind, argument.bits) { return }
        }
    }

    /// The project's typed events (docs/FORMAT.md §3, `HitchEventSchema`); false when the event is not one of them.
    @inline(__always)
    private func hitchPayload(eventType: UInt64, category: UInt32, name: UInt32, trailing: UInt64, into payload: inout TraceEvent.Payload) -> Bool {
        // Integer compares against the cases' raw values (constants): an enum's init(rawValue:) is a call.
        let categoryOffset = category &- ids.categoryBase
        // Other categories (a stage's, an app's) leave at once: past its jump table the switch
        // below tests its remaining cases one compare chain at a time.
        guard categoryOffset < ids.categoryCount else { return false }
        let isInstant = eventType == FXT.EventType.instant.rawValue
        let isComplete = eventType == FXT.EventType.durationComplete.rawValue
        let nameOffset = name &- ids.eventNameBase
        let decoded: TraceEvent.Payload
        switch categoryOffset {
        case HitchCategory.body.rawValue where isComplete && has(.identity):
            decoded = .bodyEvaluation(BodyEvaluation(viewType: StringID(rawValue: name), identity: unsigned(.identity),
                                                  endNs: clock.nanoseconds(trailing)))
        case HitchCategory.op.rawValue where isComplete:
            decoded = .inferenceOp(InferenceOp(
                name: StringID(rawValue: name),
                computeUnit: StringID(rawValue: stringArgument(.computeUnit)),
                layer: has(.layer) ? Int32(truncatingIfNeeded: signed(.layer)) : 0,
                tokenIndex: has(.tokenIndex) ? Int32(truncatingIfNeeded: signed(.tokenIndex)) : 0,
                bytesRead: has(.bytesRead) ? unsigned(.bytesRead) : 0,
                bytesWritten: has(.bytesWritten) ? unsigned(.bytesWritten) : 0,
                flops: has(.flops) ? unsigned(.flops) : 0,
                endNs: clock.nanoseconds(trailing),
                byteKind: word(.byteKind, base: ids.byteKindBase, as: InferenceOp.ByteKind.self) ?? .unspecified))
        case HitchCategory.frame.rawValue where isInstant && has(.frameID):
            let frameID = unsigned(.frameID)
            switch nameOffset {
            case HitchEventName.frameBegan.rawValue:
                decoded = .frameBegan(FrameBegan(
                    frameID: frameID,
                    vsyncNs: clock.nanoseconds(has(.vsyncTicks) ? unsigned(.vsyncTicks) : 0),
                    targetNs: clock.nanoseconds(has(.targetTicks) ? unsigned(.targetTicks) : 0),
                    periodNs: has(.periodNs) ? signed(.periodNs) : 0))
            case HitchEventName.frameCommitted.rawValue: decoded = .frameCommitted(frameID: frameID)
            case HitchEventName.frameRenderEnded.rawValue: decoded = .frameRenderEnded(frameID: frameID)
            case HitchEventName.framePresented.rawValue: decoded = .framePresented(frameID: frameID)
            default: return false
            }
        case HitchCategory.layout.rawValue where isComplete:
            decoded = .layoutPass(endNs: clock.nanoseconds(trailing),
                               viewCount: has(.viewCount) ? UInt32(truncatingIfNeeded: unsigned(.viewCount)) : 0)
        case HitchCategory.invalidation.rawValue where isInstant:
            decoded = .invalidation(Invalidation(
                source: StringID(rawValue: name), target: StringID(rawValue: stringArgument(.target)),
                targetIdentity: has(.targetIdentity) ? unsigned(.targetIdentity) : 0,
                stack: has(.stack) ? StackID(rawValue: UInt32(truncatingIfNeeded: unsigned(.stack))) : nil))
        case HitchCategory.view.rawValue where isInstant && has(.identity):
            guard let change = word(.change, base: ids.viewChangeBase, as: ViewLifetime.Change.self) else { return false }
            decoded = .viewLifetime(ViewLifetime(
                change: change, viewType: StringID(rawValue: name), identity: unsigned(.identity),
                parentIdentity: has(.parentIdentity) ? unsigned(.parentIdentity) : 0,
                position: has(.position) ? signed(.position) : 0,
                reason: word(.reason, base: ids.viewReasonBase, as: ViewLifetime.Reason.self) ?? .structuralChange))
        case HitchCategory.token.rawValue where isInstant:
            let stage = name &- ids.tokenStageBase
            guard stage < 256, let tokenStage = TokenEvent.Stage(rawValue: UInt8(stage)) else { return false }
            decoded = .token(TokenEvent(stage: tokenStage, index: has(.index) ? signed(.index) : 0))
        case HitchCategory.interaction.rawValue where eventType == FXT.EventType.asyncBegin.rawValue:
            decoded = .interactionBegin(kind: StringID(rawValue: name))
        case HitchCategory.interaction.rawValue where eventType == FXT.EventType.asyncEnd.rawValue:
            decoded = .interactionEnd(kind: StringID(rawValue: name))
        case HitchCategory.sample.rawValue where isInstant && nameOffset == HitchEventName.sample.rawValue && has(.stack):
            decoded = .sample(stack: StackID(rawValue: UInt32(truncatingIfNeeded: unsigned(.stack))))
        case HitchCategory.meta.rawValue where isInstant && nameOffset == HitchEventName.metadata.rawValue && has(.key) && has(.value):
            guard argKinds[Int(Slot.key.rawValue)] == ArgKind.string.rawValue,
                  argKinds[Int(Slot.value.rawValue)] == ArgKind.string.rawValue else { return false }
            let key = UInt32(truncatingIfNeeded: argBits[Int(Slot.key.rawValue)])
            let value = UInt32(truncatingIfNeeded: argBits[Int(Slot.value.rawValue)])
            cold.pointee.metadata[cold.pointee.strings[Int(key)]] = cold.pointee.strings[Int(value)]
            decoded = .metadata(key: StringID(rawValue: key), value: StringID(rawValue: value))
        case HitchCategory.sched.rawValue where isInstant && nameOffset == HitchEventName.threadState.rawValue && has(.frameID) && has(.cpuNs):
            guard let phase = threadStatePhase() else { return false }
            decoded = .threadState(ThreadStateReading(
                frameID: unsigned(.frameID), phase: phase, cpuNs: signed(.cpuNs),
                runnableWaitNs: has(.runnableWaitNs) ? signed(.runnableWaitNs) : nil,
                voluntarySwitches: has(.voluntarySwitches) ? signed(.voluntarySwitches) : nil,
                involuntarySwitches: has(.involuntarySwitches) ? signed(.involuntarySwitches) : nil))
        case HitchCategory.sched.rawValue where isInstant && nameOffset == HitchEventName.machineState.rawValue:
            decoded = .machineState(MachineStateReading(
                stealNs: has(.stealNs) ? signed(.stealNs) : nil,
                cpuPressureSomeUs: has(.cpuPressureSomeUs) ? signed(.cpuPressureSomeUs) : nil,
                cgroupThrottledUs: has(.cgroupThrottledUs) ? signed(.cgroupThrottledUs) : nil,
                onlineCPUs: has(.onlineCPUs) ? Int32(clamping: signed(.onlineCPUs)) : 0))
        case HitchCategory.meta.rawValue where isInstant && nameOffset == HitchEventName.droppedEvents.rawValue && has(.count):
            let count = unsigned(.count)
            droppedEventCount &+= count
            decoded = .droppedEvents(count: count)
        default:
            return false
        }
        store(decoded, in: &payload)
        return true
    }

    /// The `phase` string argument of a threadState event as a phase, or nil (matched by text: the
    /// phase `frameBegan` shares its string with the event name).
    private func threadStatePhase() -> ThreadStateReading.Phase? {
        guard has(.phase), argKinds[Int(Slot.phase.rawValue)] == ArgKind.string.rawValue else { return nil }
        return ThreadStateReading.Phase(name: cold.pointee.strings[Int(truncatingIfNeeded: argBits[Int(Slot.phase.rawValue)])])
    }

    /// Reads `count` arguments into the known slots. False (with a warning) if they are malformed.
    @inline(__always)
    private func decodeArguments(count: Int, cursor: inout Int, limit: Int, offset: UInt64) throws(TraceReadError) -> Bool {
        argMask = 0
        hot.pointee.argumentsStart = cursor
        hot.pointee.argumentsLimit = limit
        hot.pointee.argumentCount = count
        var remaining = count
        while remaining > 0 {
            remaining -= 1
            guard let argument = try parseArgument(at: cursor, limit: limit, offset: offset) else { return false }
            cursor = argument.next
            guard let kind = argument.kind else { continue }   // null and unknown argument types are skipped by their size
            let slot = Int(argument.name &- ids.argumentBase)
            if slot < argumentSlots {
                argBits[slot] = argument.bits
                argKinds[slot] = kind.rawValue
                argMask |= 1 << UInt64(slot)
            }
        }
        return true
    }

    /// The argument at `cursor` (docs/FORMAT.md §5): its name id, kind (nil for null and unknown
    /// types) and bits, and where the next one starts; nil (with a warning) if it is malformed.
    @inline(__always)
    private func parseArgument(at cursor: Int, limit: Int, offset: UInt64) throws(TraceReadError)
        -> (name: UInt32, kind: ArgKind?, bits: UInt64, next: Int)? {
        guard cursor + 8 <= limit else { warn(offset, "event arguments run past the record; skipped"); return nil }
        let header = load(cursor)
        let words = Int((header >> 4) & 0xFFF)
        let argEnd = cursor + words * 8
        guard words > 0, argEnd <= limit else { warn(offset, "argument with an impossible size \(words) words; event skipped"); return nil }
        let type = header & 0xF
        var inner = cursor + 8
        guard let nameID = try resolve(UInt16(truncatingIfNeeded: header >> 16), cursor: &inner, limit: argEnd, offset: offset) else {
            warn(offset, "argument name is an undefined or oversized string ref; event skipped")
            return nil
        }
        switch type {
        case FXT.ArgType.int32.rawValue:
            return (nameID, .integer, UInt64(bitPattern: Int64(Int32(truncatingIfNeeded: header >> 32))), argEnd)
        case FXT.ArgType.uint32.rawValue:
            return (nameID, .unsigned, header >> 32, argEnd)
        case FXT.ArgType.int64.rawValue, FXT.ArgType.uint64.rawValue, FXT.ArgType.double.rawValue,
             FXT.ArgType.pointer.rawValue, FXT.ArgType.koid.rawValue:
            guard inner + 8 <= argEnd else { warn(offset, "argument too short for its 64-bit value; event skipped"); return nil }
            let kind: ArgKind = type == FXT.ArgType.int64.rawValue ? .integer : type == FXT.ArgType.double.rawValue ? .double : .unsigned
            return (nameID, kind, load(inner), argEnd)
        case FXT.ArgType.string.rawValue:
            guard let value = try resolve(UInt16(truncatingIfNeeded: header >> 32), cursor: &inner, limit: argEnd, offset: offset) else {
                warn(offset, "string argument is an undefined or oversized string ref; event skipped")
                return nil
            }
            return (nameID, .string, UInt64(value), argEnd)
        case FXT.ArgType.bool.rawValue:
            return (nameID, .unsigned, (header >> 32) & 1, argEnd)
        default:
            return (nameID, nil, 0, argEnd)
        }
    }

    private func decodeBlob(header: UInt64, at start: Int, size: Int, offset: UInt64, into event: inout TraceEvent) throws(TraceReadError) -> Bool {
        var cursor = start + 8
        let limit = start + size
        guard let name = try resolve(UInt16(truncatingIfNeeded: header >> 16), cursor: &cursor, limit: limit, offset: offset) else {
            warn(offset, "blob record with a bad name string ref; skipped")
            return false
        }
        let length = Int((header >> 32) & 0x7FFF)
        guard cursor + length <= limit else { warn(offset, "blob payload of \(length) bytes exceeds its record; skipped"); return false }
        let noThread = ThreadID(rawValue: 0)
        if name == ids.blobBase + HitchBlobName.stack.rawValue {
            guard length >= 8 else { warn(offset, "stack blob too short; skipped"); return false }
            let head = load(cursor)
            let frames = Int(head >> 32)
            guard 8 + frames * 8 <= length else { warn(offset, "stack blob declares \(frames) frames, holds fewer; skipped"); return false }
            var addresses = [UInt64](repeating: 0, count: frames)
            for i in 0..<frames { addresses[i] = load(cursor + 8 + i * 8) }
            event = TraceEvent(timestampNs: lastTimestampNs, thread: noThread,
                              payload: .stackDefinition(stack: StackID(rawValue: UInt32(truncatingIfNeeded: head)), addresses: addresses))
            return true
        }
        if name == ids.blobBase + HitchBlobName.symbol.rawValue {
            guard length >= 32 else { warn(offset, "symbol blob too short; skipped"); return false }
            let lengths = load(cursor + 24)
            let functionLength = Int(lengths & 0xFFFF_FFFF), imageLength = Int(lengths >> 32)
            guard 32 + functionLength + imageLength <= length else { warn(offset, "symbol blob names run past its payload; skipped"); return false }
            let function = try internBytes(at: cursor + 32, length: functionLength, offset: offset)
            let image = try internBytes(at: cursor + 32 + functionLength, length: imageLength, offset: offset)
            event = TraceEvent(timestampNs: lastTimestampNs, thread: noThread, payload: .symbol(Symbol(
                address: load(cursor), size: load(cursor + 8), function: StringID(rawValue: function),
                image: StringID(rawValue: image), offset: load(cursor + 16))))
            return true
        }
        return false
    }
}

/// Ticks -> nanoseconds for decoded events: `TickConverter`'s saturating conversion, so a hostile
/// timestamp reads as Int64.max instead of wrapping (docs/FORMAT.md, docs/METRICS.md "Hostile timestamps").
struct DecodeClock {
    private let converter: TickConverter
    /// Whether a tick is a nanosecond (what the recorder writes): the conversion is then the identity,
    /// saturated the same way, without the converter's two 64-bit multiplies (its factor is 1 + 0/2^64).
    private let ticksAreNanoseconds: Bool

    init(ticksPerSecond: UInt64) {
        converter = TickConverter(ticksPerSecond: ticksPerSecond)
        ticksAreNanoseconds = ticksPerSecond == 1_000_000_000
    }

    @inline(__always) func nanoseconds(_ ticks: UInt64) -> Int64 {
        if ticksAreNanoseconds { return ticks > UInt64(Int64.max) ? .max : Int64(ticks) }
        return converter.saturatingNanoseconds(fromTicks: ticks)
    }
}

private extension Double {
    var clampedToInt64: Int64 {
        if self.isNaN { return 0 }
        if self >= 9.2e18 { return .max }
        if self <= -9.2e18 { return .min }
        return Int64(self)
    }
}
