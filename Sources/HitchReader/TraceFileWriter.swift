#if canImport(Glibc)
import Glibc
#endif
import HitchTrace

/// Writes an FXT trace directly from `TraceEvent` values with explicit timestamps: for importers,
/// generators and tests. Single-threaded; no recorder involved. Strings and threads are declared
/// on the writer first (`string(_:)`, `thread(name:)`) and the returned ids used in events.
public final class TraceFileWriter {
    public let path: String
    public let ticksPerSecond: UInt64
    private let output: FXTOutput
    private let encoder: FXTEncoder
    private let converter: TickConverter
    private var strings: [String] = [""]
    private var stringKeys: [UInt64] = [0]
    private var stringLookup: [String: StringID] = ["": StringID(rawValue: 0)]
    private var threads: [(pid: UInt64, tid: UInt64, name: String, role: String?)] = [(0, 0, "", nil)]
    private var closed = false

    /// Creates (or truncates) `path`. Timestamps are written as ticks at `ticksPerSecond`.
    public init(path: String, ticksPerSecond: UInt64 = 1_000_000_000) throws(TraceRecorderError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        self.path = path
        self.ticksPerSecond = max(ticksPerSecond, 1)
        output = FXTOutput(fd: fd, ownsDescriptor: true)
        encoder = FXTEncoder(output: output, ticksPerSecond: self.ticksPerSecond)
        converter = TickConverter(ticksPerSecond: self.ticksPerSecond)
    }

    deinit { if !closed { output.flush() } }

    /// The id of `string` in this writer (the same string always gets the same id; "" is id 0).
    public func string(_ string: String) -> StringID {
        if let id = stringLookup[string] { return id }
        let id = StringID(rawValue: UInt32(strings.count))
        strings.append(string)
        stringKeys.append(encoder.localKey(string))
        stringLookup[string] = id
        return id
    }

    /// The text of a string id made by this writer.
    public func text(_ id: StringID) -> String {
        Int(id.rawValue) < strings.count ? strings[Int(id.rawValue)] : ""
    }

    /// Declares a thread. `threadID`/`processID` are the koids written to the file (defaults:
    /// a fresh thread id, process 1). Returns the id to put in events.
    public func thread(name: String, threadID: UInt64? = nil, processID: UInt64 = 1, role: String? = nil) -> ThreadID {
        let id = ThreadID(rawValue: UInt32(threads.count))
        threads.append((processID, threadID ?? UInt64(threads.count), name, role))
        return id
    }

    /// Trace-wide metadata, recorded on `thread` at `timestampNs`.
    public func setMetadata(_ key: String, _ value: String, thread: ThreadID? = nil, timestampNs: Int64 = 0) {
        write(TraceEvent(timestampNs: timestampNs, thread: thread ?? defaultThread(),
                         payload: .metadata(key: string(key), value: string(value))))
    }

    /// Writes one of the project's own metadata keys (`MetadataKey`).
    public func setMetadata(_ key: MetadataKey, _ value: String, thread: ThreadID? = nil, timestampNs: Int64 = 0) {
        setMetadata(key.name, value, thread: thread, timestampNs: timestampNs)
    }

    private func defaultThread() -> ThreadID {
        threads.count > 1 ? ThreadID(rawValue: 1) : thread(name: "main")
    }

    @inline(__always) private func ref(_ id: StringID) -> UInt16 {
        let index = Int(id.rawValue)
        guard index > 0, index < stringKeys.count else { return 0 }
        return encoder.stringRef(key: stringKeys[index])
    }

    @inline(__always) private func ticks(_ ns: Int64) -> UInt64 { converter.ticks(fromNanoseconds: ns) }

    private func threadRef(_ id: ThreadID) -> UInt8 {
        var index = Int(id.rawValue)
        if index <= 0 || index >= threads.count {
            while threads.count <= max(index, 1) { _ = thread(name: "thread \(threads.count)") }
            index = max(index, 1)
        }
        let t = threads[index]
        return encoder.threadRef(pid: t.pid, tid: t.tid, name: t.name, role: t.role)
    }

    /// Writes one event (timestamps in nanoseconds), with the app's arguments of an interval or
    /// instant (ignored on other events, whose arguments are their payload's fields).
    public func write(_ event: TraceEvent, arguments: EventArguments = EventArguments()) {
        let e = encoder
        switch event.payload {
        case let .stackDefinition(stack, addresses):
            e.stackDefinition(stack: stack.rawValue, addresses: addresses); return
        case let .symbol(s):
            e.symbol(address: s.address, size: s.size, offset: s.offset, function: text(s.function), image: text(s.image)); return
        default: break
        }
        let thread = threadRef(event.thread)
        let t = ticks(event.timestampNs)
        if !arguments.isEmpty, writeWithArguments(event, arguments, thread: thread, ticks: t) { return }
        switch event.payload {
        case let .intervalBegin(category, name):
            e.durationBegin(thread: thread, category: ref(category), name: ref(name), ticks: t)
        case let .intervalEnd(category, name):
            e.durationEnd(thread: thread, category: ref(category), name: ref(name), ticks: t)
        case let .intervalComplete(category, name, endNs):
            e.complete(thread: thread, category: ref(category), name: ref(name), begin: t, end: ticks(endNs))
        case let .instant(category, name):
            e.instant(thread: thread, category: ref(category), name: ref(name), ticks: t)
        case let .counter(name, value):
            e.counter(thread: thread, category: e.stringRef(TraceName.counter), name: ref(name), ticks: t, value: value)
        case let .frameBegan(f):
            e.frameBegan(thread: thread, ticks: t, frameID: f.frameID, vsyncTicks: ticks(f.vsyncNs), targetTicks: ticks(f.targetNs), periodNs: f.periodNs)
        case let .frameCommitted(frameID):
            e.frameMark(.frameCommitted, thread: thread, ticks: t, frameID: frameID)
        case let .frameRenderEnded(frameID):
            e.frameMark(.frameRenderEnded, thread: thread, ticks: t, frameID: frameID)
        case let .framePresented(frameID):
            e.frameMark(.framePresented, thread: thread, ticks: t, frameID: frameID)
        case let .bodyEvaluation(b):
            e.body(thread: thread, viewType: ref(b.viewType), identity: b.identity, begin: t, end: ticks(b.endNs))
        case let .invalidation(inv):
            e.invalidation(thread: thread, ticks: t, source: ref(inv.source), target: ref(inv.target),
                           targetIdentity: inv.targetIdentity, stack: inv.stack?.rawValue)
        case let .viewLifetime(v):
            e.viewLifetime(thread: thread, ticks: t, viewType: ref(v.viewType), change: v.change, identity: v.identity,
                           parentIdentity: v.parentIdentity, position: v.position, reason: v.reason)
        case let .layoutPass(endNs, viewCount):
            e.layout(thread: thread, begin: t, end: ticks(endNs), viewCount: viewCount)
        case let .inferenceOp(op):
            e.inferenceOp(thread: thread, name: ref(op.name), computeUnit: ref(op.computeUnit), layer: op.layer,
                          tokenIndex: op.tokenIndex, bytesRead: op.bytesRead, bytesWritten: op.bytesWritten,
                          flops: op.flops, byteKind: op.byteKind, begin: t, end: ticks(op.endNs))
        case let .token(token):
            e.token(thread: thread, ticks: t, stage: token.stage, index: token.index)
        case let .interactionBegin(kind):
            e.interaction(isBegin: true, thread: thread, ticks: t, kind: ref(kind), id: interactionID(kind: kind, isBegin: true))
        case let .interactionEnd(kind):
            e.interaction(isBegin: false, thread: thread, ticks: t, kind: ref(kind), id: interactionID(kind: kind, isBegin: false))
        case let .asyncIntervalBegin(category, name, id):
            e.beginEvent(.asyncBegin, thread: thread, category: ref(category), name: ref(name), ticks: t)
            e.endEvent(trailing: id)
        case let .asyncIntervalEnd(end):
            let category = ref(end.category), name = ref(end.name)
            let durationArg = e.stringRef(HitchArgument.durationNs), selfArg = e.stringRef(HitchArgument.selfNs)
            e.beginEvent(.asyncEnd, thread: thread, category: category, name: name, ticks: t)
            if end.durationNs >= 0 { e.argSigned(durationArg, end.durationNs) }
            if end.selfNs >= 0 { e.argSigned(selfArg, end.selfNs) }
            e.endEvent(trailing: end.id)
        case let .sample(stack):
            e.sample(thread: thread, ticks: t, stack: stack.rawValue)
        case let .metadata(key, value):
            e.metadata(thread: thread, ticks: t, key: ref(key), value: ref(value))
        case let .droppedEvents(count):
            e.droppedEvents(thread: thread, ticks: t, count: count)
        case let .threadState(r):
            e.threadState(thread: thread, ticks: t, frameID: r.frameID, phase: r.phase, cpuNs: r.cpuNs, runnableWaitNs: r.runnableWaitNs,
                          voluntarySwitches: r.voluntarySwitches, involuntarySwitches: r.involuntarySwitches)
        case let .machineState(r):
            e.machineState(thread: thread, ticks: t, stealNs: r.stealNs, cpuPressureSomeUs: r.cpuPressureSomeUs,
                           cgroupThrottledUs: r.cgroupThrottledUs, onlineCPUs: r.onlineCPUs)
        case let .schedSwitch(change):
            e.contextSwitch(cpu: change.cpu, ticks: t, thread: thread, direction: change.direction, preempted: change.preempted)
        case .stackDefinition, .symbol:
            break
        }
    }

    /// An interval or instant with its app arguments (docs/FORMAT.md §5); false for other payloads.
    private func writeWithArguments(_ event: TraceEvent, _ arguments: EventArguments, thread: UInt8, ticks t: UInt64) -> Bool {
        let e = encoder
        let type: FXT.EventType, category: StringID, name: StringID
        var trailing: UInt64?
        switch event.payload {
        case let .intervalBegin(c, n): type = .durationBegin; category = c; name = n
        case let .intervalEnd(c, n): type = .durationEnd; category = c; name = n
        case let .intervalComplete(c, n, endNs): type = .durationComplete; category = c; name = n; trailing = ticks(endNs)
        case let .instant(c, n): type = .instant; category = c; name = n
        default: return false
        }
        // Every string ref first (they may write string records), then the event.
        let resolved = arguments.all.map { argument -> (UInt16, EventArguments.Value, UInt16) in
            if case .string(let id) = argument.value { return (ref(argument.name), argument.value, ref(id)) }
            return (ref(argument.name), argument.value, 0)
        }
        let categoryRef = ref(category), nameRef = ref(name)
        e.beginEvent(type, thread: thread, category: categoryRef, name: nameRef, ticks: t)
        for (argumentName, value, stringValue) in resolved {
            switch value {
            case .int(let v): e.argSigned(argumentName, v)
            case .uint(let v): e.argUnsigned(argumentName, v)
            case .double(let v): e.argDouble(argumentName, v)
            case .string: e.argString(argumentName, stringValue)
            }
        }
        e.endEvent(trailing: trailing)
        return true
    }

    // Interactions of one kind pair up in order (begin, end) like the model's events do.
    private var openInteractions: [StringID: [UInt64]] = [:]
    private var nextInteractionID: UInt64 = 1
    private func interactionID(kind: StringID, isBegin: Bool) -> UInt64 {
        if isBegin {
            let id = nextInteractionID
            nextInteractionID += 1
            openInteractions[kind, default: []].append(id)
            return id
        }
        if var open = openInteractions[kind], !open.isEmpty {
            let id = open.removeFirst()
            openInteractions[kind] = open
            return id
        }
        let id = nextInteractionID
        nextInteractionID += 1
        return id
    }

    /// Bytes written so far (including what is still buffered).
    public var byteCount: UInt64 { output.totalBytes }

    /// Flushes and closes the file. Returns the bytes written.
    @discardableResult
    public func close() throws(TraceRecorderError) -> UInt64 {
        if !closed {
            closed = true
            output.flush()
        }
        if let error = output.writeErrno { throw .writeFailed(path: path, reason: String(cString: strerror(error))) }
        return output.bytesFlushed
    }
}
