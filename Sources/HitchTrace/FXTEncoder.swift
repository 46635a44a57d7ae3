#if canImport(Glibc)
import Glibc
#endif

// Writes Fuchsia Trace Format records (docs/FORMAT.md): whole records into a 1 MB buffer that is
// written to the file only at record boundaries, so a process killed at any moment leaves a file
// that reads cleanly up to its last complete record. Shared by the recorder's writer thread and
// `TraceFileWriter`; used from one thread at a time.

@usableFromInline package enum FXT {
    package static let magic: UInt64 = 0x0016_5478_4604_0010
    @usableFromInline package enum RecordType: UInt64 {
        case metadata = 0, initialization = 1, string = 2, thread = 3, event = 4, blob = 5
        case userspaceObject = 6, kernelObject = 7, scheduling = 8, log = 9, large = 15
    }
    @usableFromInline package enum EventType: UInt64 {
        case instant = 0, counter = 1, durationBegin = 2, durationEnd = 3, durationComplete = 4
        case asyncBegin = 5, asyncInstant = 6, asyncEnd = 7, flowBegin = 8, flowStep = 9, flowEnd = 10
    }
    @usableFromInline package enum ArgType: UInt64 {
        case null = 0, int32 = 1, uint32 = 2, int64 = 3, uint64 = 4, double = 5, string = 6
        case pointer = 7, koid = 8, bool = 9
    }
    /// Thread states of context switch records (ZX_THREAD_STATE_*).
    @usableFromInline package enum ThreadState {
        package static let running: UInt64 = 1
        package static let blocked: UInt64 = 3
    }
    package static let blobTypeData: UInt64 = 1
    package static let objectTypeProcess: UInt64 = 1
    package static let objectTypeThread: UInt64 = 2
    package static let maxStringBytes = 32000
    package static let maxRecordWords = 4095
    package static let maxStringIndex = 0x7fff
    package static let maxThreadIndex = 0xff
    package static func wordCount(bytes: Int) -> Int { (bytes + 7) / 8 }
}

/// The vocabulary's words (HitchVocabulary.swift) as interned `TraceName`s, by case: the encoder's
/// string-ref cache resolves them like any literal. Each encoder holds a copy (`vocabulary`), so
/// the per-event path reads stored arrays, not lazily initialized globals.
struct VocabularyNames: Sendable {
    static let shared = VocabularyNames()
    let categories = HitchCategory.allCases.map { TraceName.intern($0.name) }
    let eventNames = HitchEventName.allCases.map { TraceName.intern($0.name) }
    let blobs = HitchBlobName.allCases.map { TraceName.intern($0.name) }
    let arguments = HitchArgument.allCases.map { TraceName.intern($0.name) }
    let tokenStages = TokenStage.allCases.map { TraceName.intern($0.name) }
    let viewChanges = ViewLifetimeChange.allCases.map { TraceName.intern($0.name) }
    let viewReasons = ViewLifetimeReason.allCases.map { TraceName.intern($0.name) }
    let byteKinds = InferenceByteKind.allCases.map { TraceName.intern($0.name) }
    let threadStatePhases = FramePhase.allCases.map { TraceName.intern($0.name) }
    let switchDirections = SwitchDirection.allCases.map { TraceName.intern($0.name) }
}

/// A file (or memory) sink that only ever receives whole records.
package final class FXTOutput {
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let capacityWords = 1 << 17   // 1 MB
    private let words: UnsafeMutablePointer<UInt64>
    // Behind a pointer: a stored `var` of a class pays a dynamic exclusivity check per access.
    private let countStorage: UnsafeMutablePointer<Int> = {
        let pointer = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return pointer
    }()
    package private(set) var count: Int {
        get { countStorage.pointee }
        set { countStorage.pointee = newValue }
    }
    package private(set) var bytesFlushed: UInt64 = 0
    /// The first write error (errno), after which output is discarded and counted as lost.
    package private(set) var writeErrno: Int32?

    package init(fd: Int32, ownsDescriptor: Bool) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        words = .allocate(capacity: capacityWords)
    }

    deinit {
        words.deallocate()
        countStorage.deallocate()
        if ownsDescriptor { _ = close(fd) }
    }

    package var totalBytes: UInt64 { bytesFlushed + UInt64(count * 8) }

    /// Room for `wordCount` more words; flushes whole records first if needed.
    @inline(__always)
    package func reserve(_ wordCount: Int) -> UnsafeMutablePointer<UInt64> {
        if count + wordCount > capacityWords { flush() }
        return words + count
    }

    @inline(__always)
    package func commit(_ wordCount: Int) { count += wordCount }

    /// Writes the buffered records. Partial writes are retried; an error is remembered once.
    package func flush() {
        defer { count = 0 }
        guard count > 0, writeErrno == nil else { return }
        let raw = UnsafeRawPointer(words)
        var offset = 0
        let total = count * 8
        while offset < total {
            let written = write(fd, raw + offset, total - offset)
            if written < 0 {
                if errno == EINTR { continue }
                writeErrno = errno
                return
            }
            offset += written
        }
        bytesFlushed += UInt64(total)
    }

    package func sync() { _ = fsync(fd) }
}

/// String and thread tables plus record encoders.
package final class FXTEncoder {
    package let output: FXTOutput
    /// The vocabulary's names (HitchEventEncoding.swift resolves its words through these).
    let vocabulary = VocabularyNames.shared

    // String table: key -> index. Keys are TraceName addresses, or (1 << 63 | n) for the n-th
    // runtime string in `localStrings`. Indices are reused round robin past 32767 strings, but
    // never one handed out for the record being prepared (`handedOutInRecord`).
    private var stringIndex: [UInt64: UInt16] = [:]
    private var indexOwner = [UInt64](repeating: 0, count: FXT.maxStringIndex + 1)
    private var nextStringIndex = 1
    // A record's refs are all resolved before it is written (its string records go first), so a
    // definition for one of its strings must not take an index another of its refs holds: that
    // ref would then name the new string. Per index, the record (`recordsWritten`, counting the
    // records other than strings) it was last handed out for.
    private let handedOutInRecord: UnsafeMutablePointer<UInt32> = {
        let pointer = UnsafeMutablePointer<UInt32>.allocate(capacity: FXT.maxStringIndex + 1)
        pointer.initialize(repeating: 0, count: FXT.maxStringIndex + 1)
        return pointer
    }()
    private var localStrings: [String] = []
    private var localKeys: [String: UInt64] = [:]
    // A direct-mapped cache in front of `stringIndex` for the writer thread's per-event lookups.
    private static let cacheSize = 4096
    private let cacheKeys: UnsafeMutablePointer<UInt64> = {
        let pointer = UnsafeMutablePointer<UInt64>.allocate(capacity: FXTEncoder.cacheSize)
        pointer.initialize(repeating: .max, count: FXTEncoder.cacheSize)
        return pointer
    }()
    private let cacheRefs: UnsafeMutablePointer<UInt16> = {
        let pointer = UnsafeMutablePointer<UInt16>.allocate(capacity: FXTEncoder.cacheSize)
        pointer.initialize(repeating: 0, count: FXTEncoder.cacheSize)
        return pointer
    }()

    // Thread table: koid pair -> index, reused round robin past 255 threads.
    private var threadIndex: [ThreadKey: UInt8] = [:]
    private var threadOwner = [ThreadKey?](repeating: nil, count: FXT.maxThreadIndex + 1)
    private var nextThreadIndex = 1
    private var threadNames: [UInt64: String] = [:]
    private var threadRoles: [UInt64: String] = [:]
    private var processNamed: Set<UInt64> = []

    // The event being written, behind a pointer (no dynamic exclusivity checks per argument).
    private struct Pending {
        var start: UnsafeMutablePointer<UInt64>?
        var words = 0
        var args = 0
        var eventCount: UInt64 = 0
        /// Records other than strings written so far, from 1 (`handedOutInRecord`).
        var records: UInt32 = 1
    }
    private let pending: UnsafeMutablePointer<Pending> = {
        let pointer = UnsafeMutablePointer<Pending>.allocate(capacity: 1)
        pointer.initialize(to: Pending())
        return pointer
    }()
    private var eventStart: UnsafeMutablePointer<UInt64>? {
        get { pending.pointee.start }
        set { pending.pointee.start = newValue }
    }
    private var eventWords: Int {
        get { pending.pointee.words }
        set { pending.pointee.words = newValue }
    }
    private var eventArgs: Int {
        get { pending.pointee.args }
        set { pending.pointee.args = newValue }
    }
    package private(set) var eventCount: UInt64 {
        get { pending.pointee.eventCount }
        set { pending.pointee.eventCount = newValue }
    }
    private var recordsWritten: UInt32 { pending.pointee.records }

    deinit {
        cacheKeys.deallocate()
        cacheRefs.deallocate()
        handedOutInRecord.deallocate()
        pending.deallocate()
    }

    /// A record other than a string was written: the refs handed out for it are free to reuse.
    @inline(__always) private func recordWritten() { pending.pointee.records &+= 1 }

    struct ThreadKey: Hashable { var pid: UInt64; var tid: UInt64 }

    package init(output: FXTOutput, ticksPerSecond: UInt64) {
        self.output = output
        let p = output.reserve(3)
        p[0] = FXT.magic
        p[1] = FXT.RecordType.initialization.rawValue | 2 << 4
        p[2] = ticksPerSecond
        output.commit(3)
    }

    // MARK: Strings

    /// The string ref for a TraceName (defines it on first use).
    @inline(__always)
    package func stringRef(_ name: TraceName) -> UInt16 {
        name.address & TraceName.dynamicNameBit != 0 ? stringRef(name.string) : stringRef(key: name.address)
    }

    /// The string ref for a runtime string (defines it on first use).
    package func stringRef(_ string: String) -> UInt16 {
        if string.isEmpty { return 0 }
        return stringRef(key: localKey(string))
    }

    package func localKey(_ string: String) -> UInt64 {
        if let key = localKeys[string] { return key }
        let key = 1 << 63 | UInt64(localStrings.count)
        localStrings.append(string)
        localKeys[string] = key
        return key
    }

    @inline(__always)
    package func stringRef(key: UInt64) -> UInt16 {
        let slot = Int(truncatingIfNeeded: (key ^ (key >> 13)) &* 0x9E37_79B9) & (FXTEncoder.cacheSize - 1)
        let ref: UInt16
        if cacheKeys[slot] == key {
            ref = cacheRefs[slot]
        } else {
            ref = stringIndex[key] ?? defineString(key: key)
            cacheKeys[slot] = key
            cacheRefs[slot] = ref
        }
        handedOutInRecord[Int(ref)] = recordsWritten
        return ref
    }

    private func defineString(key: UInt64) -> UInt16 {
        var index = nextStringIndex
        // Past 32767 strings: the next index round robin that no ref of this record holds (a
        // record holds a few dozen at most, so this skips at most that many).
        var skipped = 0
        while handedOutInRecord[index] == recordsWritten && skipped < FXT.maxStringIndex {
            index = index == FXT.maxStringIndex ? 1 : index + 1
            skipped += 1
        }
        nextStringIndex = index == FXT.maxStringIndex ? 1 : index + 1
        let previous = indexOwner[index]
        if previous != 0 {
            stringIndex[previous] = nil
            let slot = Int(truncatingIfNeeded: (previous ^ (previous >> 13)) &* 0x9E37_79B9) & (FXTEncoder.cacheSize - 1)
            if cacheKeys[slot] == previous { cacheKeys[slot] = .max }
        }
        indexOwner[index] = key
        stringIndex[key] = UInt16(index)
        if key & (1 << 63) != 0 {
            var string = localStrings[Int(key & ~(1 << 63))]
            string.withUTF8 { writeStringRecord(index: index, bytes: UnsafeRawBufferPointer($0)) }
        } else {
            let pointer = UnsafePointer<CChar>(bitPattern: UInt(key))!
            let length = strlen(pointer)
            writeStringRecord(index: index, bytes: UnsafeRawBufferPointer(start: pointer, count: length))
        }
        return UInt16(index)
    }

    private func writeStringRecord(index: Int, bytes: UnsafeRawBufferPointer) {
        let length = FXTEncoder.truncatedLength(bytes, limit: FXT.maxStringBytes)
        let words = 1 + FXT.wordCount(bytes: length)
        let p = output.reserve(words)
        p[0] = FXT.RecordType.string.rawValue | UInt64(words) << 4 | UInt64(index) << 16 | UInt64(length) << 32
        FXTEncoder.copyPadded(bytes, length: length, to: p + 1)
        output.commit(words)
    }

    /// A length at most `limit` that does not split a UTF-8 sequence.
    package static func truncatedLength(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Int {
        var length = min(bytes.count, limit)
        if length < bytes.count {
            while length > 0 && bytes[length] & 0xC0 == 0x80 { length -= 1 }
        }
        return length
    }

    package static func copyPadded(_ bytes: UnsafeRawBufferPointer, length: Int, to destination: UnsafeMutablePointer<UInt64>) {
        let words = FXT.wordCount(bytes: length)
        if words > 0 { destination[words - 1] = 0 }
        if length > 0 { UnsafeMutableRawPointer(destination).copyMemory(from: bytes.baseAddress!, byteCount: length) }
    }

    // MARK: Threads

    /// Whether a thread record has named thread `tid`.
    package func hasThreadName(tid: UInt64) -> Bool { threadNames[tid] != nil }

    /// The thread ref for a (process, thread) pair; defines it, and names it, on first use or
    /// when its name changed.
    package func threadRef(pid: UInt64, tid: UInt64, name: String?, role: String? = nil) -> UInt8 {
        let key = ThreadKey(pid: pid, tid: tid)
        if let role, threadRoles[tid] != role {
            // The role rides on the thread's kernel object record (argument "role"), rewritten with
            // the thread's name, so a reader knows it before the thread's first event.
            threadRoles[tid] = role
            threadNames[tid] = name ?? threadNames[tid] ?? "thread \(tid)"
            writeKernelObject(type: FXT.objectTypeThread, koid: tid, name: threadNames[tid]!, processKoid: pid, role: role)
        } else if let name, threadNames[tid] != name {
            threadNames[tid] = name
            writeKernelObject(type: FXT.objectTypeThread, koid: tid, name: name, processKoid: pid, role: threadRoles[tid])
        }
        if !processNamed.contains(pid) {
            processNamed.insert(pid)
            writeKernelObject(type: FXT.objectTypeProcess, koid: pid, name: FXTEncoder.processName(pid: pid), processKoid: nil)
        }
        if let index = threadIndex[key] { return index }
        let index = nextThreadIndex
        nextThreadIndex = nextThreadIndex == FXT.maxThreadIndex ? 1 : nextThreadIndex + 1
        if let previous = threadOwner[index] { threadIndex[previous] = nil }
        threadOwner[index] = key
        threadIndex[key] = UInt8(index)
        let p = output.reserve(3)
        p[0] = FXT.RecordType.thread.rawValue | 3 << 4 | UInt64(index) << 16
        p[1] = pid
        p[2] = tid
        output.commit(3)
        recordWritten()
        return UInt8(index)
    }

    private static func processName(pid: UInt64) -> String {
        guard pid == UInt64(getpid()) else { return "process \(pid)" }
        return CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "process"
    }

    private func writeKernelObject(type: UInt64, koid: UInt64, name: String, processKoid: UInt64?, role: String? = nil) {
        let nameRef = stringRef(name)
        let processRef = processKoid == nil ? 0 : stringRef(.process)
        let roleArg = role == nil ? 0 : stringRef(.role), roleValue = role.map { stringRef($0) } ?? 0
        let argCount: UInt64 = (processKoid == nil ? 0 : 1) + (role == nil ? 0 : 1)
        let words = 2 + (processKoid == nil ? 0 : 2) + (role == nil ? 0 : 1)
        let p = output.reserve(words)
        p[0] = FXT.RecordType.kernelObject.rawValue | UInt64(words) << 4 | type << 16 | UInt64(nameRef) << 24 | argCount << 40
        p[1] = koid
        var at = 2
        if let processKoid {
            p[at] = FXT.ArgType.koid.rawValue | 2 << 4 | UInt64(processRef) << 16
            p[at + 1] = processKoid
            at += 2
        }
        if role != nil {
            p[at] = FXT.ArgType.string.rawValue | 1 << 4 | UInt64(roleArg) << 16 | UInt64(roleValue) << 32
        }
        output.commit(words)
        recordWritten()
    }

    // MARK: Events
    // Resolve every string and thread ref first (that may write string/thread records), then
    // beginEvent, the arguments, endEvent.

    /// Upper bound of an event record's words with up to 15 two-word arguments and a trailing word.
    private static let maxEventWords = 2 + 15 * 2 + 1

    @inline(__always)
    package func beginEvent(_ type: FXT.EventType, thread: UInt8, category: UInt16, name: UInt16, ticks: UInt64) {
        let p = output.reserve(FXTEncoder.maxEventWords)
        p[0] = FXT.RecordType.event.rawValue | type.rawValue << 16 | UInt64(thread) << 24
            | UInt64(category) << 32 | UInt64(name) << 48
        p[1] = ticks
        eventStart = p
        eventWords = 2
        eventArgs = 0
    }

    /// An unsigned integer argument in the smallest FXT type that holds it.
    @inline(__always)
    package func argUnsigned(_ name: UInt16, _ value: UInt64) {
        let p = eventStart! + eventWords
        if value <= UInt64(UInt32.max) {
            p[0] = FXT.ArgType.uint32.rawValue | 1 << 4 | UInt64(name) << 16 | value << 32
            eventWords += 1
        } else {
            p[0] = FXT.ArgType.uint64.rawValue | 2 << 4 | UInt64(name) << 16
            p[1] = value
            eventWords += 2
        }
        eventArgs += 1
    }

    /// A signed integer argument in the smallest FXT type that holds it.
    @inline(__always)
    package func argSigned(_ name: UInt16, _ value: Int64) {
        let p = eventStart! + eventWords
        if let small = Int32(exactly: value) {
            p[0] = FXT.ArgType.int32.rawValue | 1 << 4 | UInt64(name) << 16 | UInt64(UInt32(bitPattern: small)) << 32
            eventWords += 1
        } else {
            p[0] = FXT.ArgType.int64.rawValue | 2 << 4 | UInt64(name) << 16
            p[1] = UInt64(bitPattern: value)
            eventWords += 2
        }
        eventArgs += 1
    }

    @inline(__always)
    package func argDouble(_ name: UInt16, _ value: Double) {
        let p = eventStart! + eventWords
        p[0] = FXT.ArgType.double.rawValue | 2 << 4 | UInt64(name) << 16
        p[1] = value.bitPattern
        eventWords += 2
        eventArgs += 1
    }

    @inline(__always)
    package func argString(_ name: UInt16, _ value: UInt16) {
        let p = eventStart! + eventWords
        p[0] = FXT.ArgType.string.rawValue | 1 << 4 | UInt64(name) << 16 | UInt64(value) << 32
        eventWords += 1
        eventArgs += 1
    }

    /// Finishes the event: an optional trailing word (end time, counter id, async id), then the size.
    @inline(__always)
    package func endEvent(trailing: UInt64? = nil) {
        let p = eventStart!
        if let trailing {
            p[eventWords] = trailing
            eventWords += 1
        }
        p[0] |= UInt64(eventWords) << 4 | UInt64(eventArgs) << 20
        output.commit(eventWords)
        eventStart = nil
        eventCount += 1
        recordWritten()
    }

    /// Counts a record written outside beginEvent/endEvent (a context switch) as an event.
    package func countEvent() { eventCount += 1; recordWritten() }

    // MARK: Blobs

    /// A data blob (type 1) named `name`; the payload is cut to what one record can hold.
    package func blob(name: TraceName, payload: UnsafeRawBufferPointer) {
        let nameRef = stringRef(name)
        let length = min(payload.count, (FXT.maxRecordWords - 1) * 8)
        let words = 1 + FXT.wordCount(bytes: length)
        let p = output.reserve(words)
        p[0] = FXT.RecordType.blob.rawValue | UInt64(words) << 4 | UInt64(nameRef) << 16
            | UInt64(length) << 32 | FXT.blobTypeData << 48
        FXTEncoder.copyPadded(payload, length: length, to: p + 1)
        output.commit(words)
        eventCount += 1
        recordWritten()
    }
}
