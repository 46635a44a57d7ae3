#if canImport(Glibc)
import Glibc
#endif
import HitchTrace

// The reader's engine: the input window over the file, the string and thread tables, and the
// record loop. Records are decoded in ReaderCore+Records.swift; the project's typed events in
// HitchEventDecoding.swift.


@usableFromInline
final class ReaderCore {
    // Input window.
    let fd: Int32
    let capacity: Int
    let buffer: UnsafeMutableRawPointer
    let fileSize: UInt64

    // Scalars the per-event path touches live behind a pointer: stored `var`s of a class would pay
    // a dynamic exclusivity check on every access.
    struct Hot {
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
    let hot: UnsafeMutablePointer<Hot> = {
        let pointer = UnsafeMutablePointer<Hot>.allocate(capacity: 1)
        pointer.initialize(to: Hot())
        return pointer
    }()
    var base: UInt64 { get { hot.pointee.base } set { hot.pointee.base = newValue } }
    var pos: Int { get { hot.pointee.pos } set { hot.pointee.pos = newValue } }
    var end: Int { get { hot.pointee.end } set { hot.pointee.end = newValue } }
    var eof: Bool { get { hot.pointee.eof } set { hot.pointee.eof = newValue } }
    var finished: Bool { get { hot.pointee.finished } set { hot.pointee.finished = newValue } }
    var converter: TickConverter { get { hot.pointee.converter } set { hot.pointee.converter = newValue } }
    var clock: DecodeClock { hot.pointee.clock }
    var argMask: UInt64 { get { hot.pointee.argMask } set { hot.pointee.argMask = newValue } }
    var lastTimestampNs: Int64 { get { hot.pointee.lastTimestampNs } set { hot.pointee.lastTimestampNs = newValue } }
    var droppedEventCount: UInt64 { get { hot.pointee.droppedEventCount } set { hot.pointee.droppedEventCount = newValue } }

    // FXT tables: ref -> dense id. `undefined` marks an index no string record has set.
    static let undefined = UInt32.max
    let fxtStrings: UnsafeMutablePointer<UInt32>
    let fxtThreads: UnsafeMutablePointer<UInt32>

    // Distinct strings and threads, bounded so hostile input cannot grow memory without limit.
    static let maxStrings = 1 << 20
    static let maxStringBytes = 256 << 20
    static let maxThreads = 1 << 16
    // Tables and diagnostics, also behind a pointer (no exclusivity checks on the per-event path).
    struct Cold {
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
        var cutShortAtOffset: UInt64?
    }
    let cold: UnsafeMutablePointer<Cold> = {
        let pointer = UnsafeMutablePointer<Cold>.allocate(capacity: 1)
        pointer.initialize(to: Cold())
        return pointer
    }()
    var metadata: [String: String] { cold.pointee.metadata }
    var warnings: [TraceReadWarning] { cold.pointee.warnings }
    var warningCount: Int { cold.pointee.warningCount }
    var cutShortAtOffset: UInt64? { cold.pointee.cutShortAtOffset }

    // Arguments of the event being decoded, by known slot.
    let argBits: UnsafeMutablePointer<UInt64>
    let argKinds: UnsafeMutablePointer<UInt8>

    // Fixed ids of the vocabulary's words (FixedStringIDs), copied into stored constants: a static
    // computed from other statics is a lazily initialized global, checked on every access.
    struct IDs {
        let argumentBase = FixedStringIDs.argumentBase, categoryBase = FixedStringIDs.categoryBase
        let eventNameBase = FixedStringIDs.eventNameBase, blobBase = FixedStringIDs.blobBase
        let tokenStageBase = FixedStringIDs.tokenStageBase, viewChangeBase = FixedStringIDs.viewChangeBase
        let viewReasonBase = FixedStringIDs.viewReasonBase, byteKindBase = FixedStringIDs.byteKindBase
        let switchDirectionBase = FixedStringIDs.switchDirectionBase
        let categoryCount = UInt32(HitchCategory.allCases.count)
    }
    let ids = IDs()
    let argumentSlots = slotCount

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
    var sourcePath: String?

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

    @inline(__always) func load(_ at: Int) -> UInt64 {
        buffer.loadUnaligned(fromByteOffset: at, as: UInt64.self)
    }

    /// Makes `count` bytes available at `pos`; false if the input ends first.
    @inline(__always) func ensure(_ count: Int) throws(TraceReadError) -> Bool {
        if end - pos >= count { return true }
        return try refill(count)
    }

    func refill(_ count: Int) throws(TraceReadError) -> Bool {
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
    func skip(_ bytes: UInt64) throws(TraceReadError) -> Bool {
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

    func warn(_ offset: UInt64, _ message: String) {
        cold.pointee.warningCount += 1
        if cold.pointee.warnings.count < 100 { cold.pointee.warnings.append(TraceReadWarning(offset: offset, message: message)) }
    }

    // MARK: Strings and threads

    func intern(_ text: String, offset: UInt64) throws(TraceReadError) -> UInt32 {
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

    func internBytes(at: Int, length: Int, offset: UInt64) throws(TraceReadError) -> UInt32 {
        let text = String(decoding: UnsafeRawBufferPointer(start: buffer + at, count: length), as: UTF8.self)
        return try intern(text, offset: offset)
    }

    func string(_ id: StringID) -> String {
        Int(id.rawValue) < cold.pointee.strings.count ? cold.pointee.strings[Int(id.rawValue)] : ""
    }

    func existingStringID(_ text: String) -> StringID? {
        cold.pointee.stringLookup[text].map { StringID(rawValue: $0) }
    }

    func threadID(pid: UInt64, tid: UInt64, offset: UInt64) throws(TraceReadError) -> UInt32 {
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
    func nextRecord(into event: inout TraceEvent) throws(TraceReadError) -> Bool {
        if hot.pointee.pendingSwitchInThread != 0 {
            event = TraceEvent(timestampNs: hot.pointee.pendingSwitchInNs, thread: ThreadID(rawValue: hot.pointee.pendingSwitchInThread),
                               payload: .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: hot.pointee.pendingSwitchInCPU)))
            hot.pointee.pendingSwitchInThread = 0
            return true
        }
        while !finished {
            guard try ensure(8) else {
                if end - pos > 0 {
                    cold.pointee.cutShortAtOffset = base + UInt64(pos)
                    warn(base + UInt64(pos), "truncated record: the trace ends \(end - pos) bytes into a record header")
                }
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
                    cold.pointee.cutShortAtOffset = offset
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
                cold.pointee.cutShortAtOffset = offset
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
}

/// Ticks -> nanoseconds for decoded events: `TickConverter`'s saturating conversion, so a hostile
/// timestamp reads as Int64.max instead of wrapping (docs/FORMAT.md, docs/METRICS.md "Hostile timestamps").
struct DecodeClock {
    let converter: TickConverter
    /// Whether a tick is a nanosecond (what the recorder writes): the conversion is then the identity,
    /// saturated the same way, without the converter's two 64-bit multiplies (its factor is 1 + 0/2^64).
    let ticksAreNanoseconds: Bool

    init(ticksPerSecond: UInt64) {
        converter = TickConverter(ticksPerSecond: ticksPerSecond)
        ticksAreNanoseconds = ticksPerSecond == 1_000_000_000
    }

    @inline(__always) func nanoseconds(_ ticks: UInt64) -> Int64 {
        if ticksAreNanoseconds { return ticks > UInt64(Int64.max) ? .max : Int64(ticks) }
        return converter.saturatingNanoseconds(fromTicks: ticks)
    }
}
