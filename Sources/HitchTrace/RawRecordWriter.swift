import CHitchSupport
import Dispatch
import Foundation
import Synchronization

/// The writer thread's translation of raw records (RawRecord.swift) into FXT.
final class RawRecordWriter {
    let encoder: FXTEncoder
    let pid = UInt64(getpid())
    let selfTid = hitch_current_tid()
    private var kernelNamedThreads: Set<Int32> = []

    init(encoder: FXTEncoder) { self.encoder = encoder }

    /// Threads whose committed records one `hitch_writer_take_committed` call can return.
    static let partialCapacity = 256

    /// A full buffer: what the writer did not take while it was being filled.
    func encode(_ buffer: UnsafeMutablePointer<hitch_buffer>) {
        guard let records = buffer.pointee.records else { return }
        let name = Self.text(buffer.pointee.thread_name), role = Self.text(buffer.pointee.thread_role)
        encode(records: records, from: Int(buffer.pointee.taken), to: Int(buffer.pointee.used),
               tid: buffer.pointee.tid, name: name, role: role)
    }

    /// The committed part of a buffer still being filled.
    func encode(_ partial: hitch_partial) {
        guard let records = partial.records else { return }
        encode(records: records, from: Int(partial.begin), to: Int(partial.end), tid: partial.tid,
               name: Self.text(partial.thread_name), role: Self.text(partial.thread_role))
    }

    private static func text<T>(_ chars: T) -> String {
        withUnsafeBytes(of: chars) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    /// A string ref for a name payload: a literal's address, or a dynamic name's id.
    @inline(__always)
    private func nameRef(_ payload: UInt64) -> UInt16 {
        guard payload & TraceName.dynamicNameBit != 0 else { return encoder.stringRef(key: payload) }
        return encoder.stringRef(TraceName.resolveDynamic(id: payload & ~TraceName.dynamicNameBit) ?? TraceName.evictedName)
    }

    /// Writes the (up to two) arguments of a `completeArgs`/`instantArgs` second record.
    private func arguments(_ r: hitch_record) {
        for (word, bits) in [(r.w0, r.w1), (r.w2, r.w3)] where word >> 56 != 0 {
            let name = nameRef(word & rawPayloadMask)
            switch word >> 56 {
            case 1: encoder.argSigned(name, Int64(bitPattern: bits))
            case 2: encoder.argDouble(name, Double(bitPattern: bits))
            default: encoder.argString(name, nameRef(bits & rawPayloadMask))
            }
        }
    }

    /// Resolves the argument names and values of a record first (that may write string records),
    /// as FXTEncoder requires before `beginEvent`.
    private func resolveArguments(_ r: hitch_record) {
        for (word, bits) in [(r.w0, r.w1), (r.w2, r.w3)] where word >> 56 != 0 {
            _ = nameRef(word & rawPayloadMask)
            if word >> 56 == 3 { _ = nameRef(bits & rawPayloadMask) }
        }
    }

    private func encode(records: UnsafeMutablePointer<hitch_record>, from begin: Int, to used: Int, tid: Int32, name: String, role: String) {
        let thread = encoder.threadRef(pid: pid, tid: UInt64(UInt32(bitPattern: tid)), name: name.isEmpty ? "thread \(tid)" : name,
                                       role: role.isEmpty ? nil : role)
        var i = begin
        while i < used {
            let r = records[i]
            guard let kind = RawKind(rawValue: r.w1 >> 56) else { i += 1; continue }
            let count = kind.recordCount
            guard i + count <= used else { break }
            let payload = r.w1 & rawPayloadMask
            switch kind {
            case .complete:
                encoder.complete(thread: thread, category: nameRef(r.w2), name: nameRef(payload),
                                 begin: r.w0, end: r.w3)
            case .instant:
                encoder.instant(thread: thread, category: nameRef(r.w2), name: nameRef(payload), ticks: r.w0)
            case .completeArgs, .instantArgs:
                let category = nameRef(r.w2), eventName = nameRef(payload)
                resolveArguments(records[i + 1])
                encoder.beginEvent(kind == .completeArgs ? .durationComplete : .instant, thread: thread,
                                   category: category, name: eventName, ticks: r.w0)
                arguments(records[i + 1])
                encoder.endEvent(trailing: kind == .completeArgs ? r.w3 : nil)
            case .asyncBegin:
                let category = nameRef(r.w2), eventName = nameRef(payload), parentArg = encoder.stringRef(HitchArgument.parent)
                encoder.beginEvent(.asyncBegin, thread: thread, category: category, name: eventName, ticks: r.w0)
                if records[i + 1].w0 != 0 { encoder.argUnsigned(parentArg, records[i + 1].w0) }
                encoder.endEvent(trailing: r.w3)
            case .asyncEnd:
                let category = nameRef(r.w2), eventName = nameRef(payload)
                let durationArg = encoder.stringRef(HitchArgument.durationNs), selfArg = encoder.stringRef(HitchArgument.selfNs)
                let r1 = records[i + 1]
                let converter = TraceClock.converter
                encoder.beginEvent(.asyncEnd, thread: thread, category: category, name: eventName, ticks: r.w0)
                encoder.argSigned(durationArg, converter.nanoseconds(fromTicks: r.w0 &- r1.w0))
                encoder.argSigned(selfArg, converter.nanoseconds(fromTicks: r1.w1))
                encoder.endEvent(trailing: r.w3)
            case .counter:
                encoder.counter(thread: thread, category: nameRef(r.w2), name: nameRef(payload),
                                ticks: r.w0, value: Double(bitPattern: r.w3))
            case .interactionBegin, .interactionEnd:
                encoder.interaction(isBegin: kind == .interactionBegin, thread: thread, ticks: r.w0,
                                    kind: nameRef(payload), id: r.w2)
            case .frameBegan:
                let r1 = records[i + 1]
                encoder.frameBegan(thread: thread, ticks: r.w0, frameID: r.w2, vsyncTicks: r.w3, targetTicks: r1.w0,
                                   periodNs: Int64(bitPattern: r1.w1))
            case .frameCommitted:
                encoder.frameMark(.frameCommitted, thread: thread, ticks: r.w0, frameID: r.w2)
            case .frameRenderEnded:
                encoder.frameMark(.frameRenderEnded, thread: thread, ticks: r.w0, frameID: r.w2)
            case .framePresented:
                encoder.frameMark(.framePresented, thread: thread, ticks: r.w0, frameID: r.w2)
            case .body:
                encoder.body(thread: thread, viewType: nameRef(payload), identity: r.w2, begin: r.w0, end: r.w3)
            case .layout:
                encoder.layout(thread: thread, begin: r.w0, end: r.w2, viewCount: UInt32(truncatingIfNeeded: payload))
            case .invalidation:
                let stackWord = records[i + 1].w0
                encoder.invalidation(thread: thread, ticks: r.w0, source: nameRef(payload),
                                     target: nameRef(r.w2), targetIdentity: r.w3,
                                     stack: stackWord == 0 ? nil : UInt32(truncatingIfNeeded: stackWord - 1))
            case .inferenceOp:
                let r1 = records[i + 1]
                encoder.inferenceOp(thread: thread, name: nameRef(payload), computeUnit: nameRef(r.w2 & rawPayloadMask),
                                    layer: Int32(truncatingIfNeeded: r1.w0), tokenIndex: Int32(truncatingIfNeeded: r1.w0 >> 32),
                                    bytesRead: r1.w1, bytesWritten: r1.w2, flops: r1.w3,
                                    byteKind: InferenceByteKind(rawValue: UInt8(truncatingIfNeeded: r.w2 >> 56)) ?? .unspecified,
                                    begin: r.w0, end: r.w3)
            case .viewLifetime:
                let r1 = records[i + 1]
                encoder.viewLifetime(thread: thread, ticks: r.w0, viewType: nameRef(payload),
                                     change: ViewLifetimeChange(rawValue: UInt8(truncatingIfNeeded: r1.w1)) ?? .built,
                                     identity: r.w2, parentIdentity: r.w3, position: Int64(bitPattern: r1.w0),
                                     reason: ViewLifetimeReason(rawValue: UInt8(truncatingIfNeeded: r1.w1 >> 8)) ?? .structuralChange)
            case .token:
                encoder.token(thread: thread, ticks: r.w0, stage: TokenStage(rawValue: UInt8(truncatingIfNeeded: payload)) ?? .produced,
                              index: Int64(bitPattern: r.w2))
            case .threadState:
                let r1 = records[i + 1]
                func optional(_ word: UInt64) -> Int64? { word == UInt64.max ? nil : Int64(bitPattern: word) }
                encoder.threadState(thread: thread, ticks: r.w0,
                                    frameID: r.w2, phase: FramePhase(rawValue: UInt8(truncatingIfNeeded: payload)) ?? .frameBegan,
                                    cpuNs: Int64(bitPattern: r.w3), runnableWaitNs: optional(r1.w0),
                                    voluntarySwitches: optional(r1.w1), involuntarySwitches: optional(r1.w2))
            }
            i += count
        }
    }

    /// Side items (metadata, samples, drops) carry only a tid. The recorder's registry holds the
    /// thread's current name; the kernel's name is only a first guess for a thread the trace has
    /// not named, never allowed to undo a name its events gave it (the last thread record for a
    /// koid is the one readers keep). A side item drained after its thread exited finds neither.
    private func thread(tid: Int32) -> UInt8 {
        let koid = UInt64(UInt32(bitPattern: tid))
        let guessable = !encoder.hasThreadName(tid: koid) && kernelNamedThreads.insert(tid).inserted
        let name = registeredThreadName(tid: tid) ?? (guessable ? kernelThreadName(tid: tid) : nil)
        return encoder.threadRef(pid: pid, tid: koid, name: name)
    }

    func metadata(tid: Int32, ticks: UInt64, key: String, value: String) {
        let thread = thread(tid: tid)
        encoder.metadata(thread: thread, ticks: ticks, key: encoder.stringRef(key), value: encoder.stringRef(value))
    }

    func sample(tid: Int32, ticks: UInt64, stack: StackID) {
        encoder.sample(thread: thread(tid: tid), ticks: ticks, stack: stack.rawValue)
    }

    /// A hang the watchdog saw end, on the thread that hung.
    func hang(tid: Int32, begin: UInt64, end: UInt64, source: String) {
        encoder.hang(thread: thread(tid: tid), begin: begin, end: end, source: encoder.stringRef(source), type: 0)
    }

    /// The watchdog's capture of a hung thread, on that thread.
    func hangStack(tid: Int32, ticks: UInt64, sinceTicks: UInt64, stack: StackID?, systemCall: String, waitChannel: String, schedState: String) {
        let call = systemCall.isEmpty ? 0 : encoder.stringRef(systemCall), wait = waitChannel.isEmpty ? 0 : encoder.stringRef(waitChannel)
        let state = schedState.isEmpty ? 0 : encoder.stringRef(schedState)
        encoder.hangStack(thread: thread(tid: tid), ticks: ticks, sinceTicks: sinceTicks, stack: stack?.rawValue,
                          systemCall: call, waitChannel: wait, schedState: state)
    }

    func droppedEvents(count: UInt64) {
        encoder.droppedEvents(thread: thread(tid: selfTid), ticks: hitch_now(), count: count)
    }

    /// Machine counters, on the writer's own thread (it read them).
    func machineState(_ reading: hitch_machine_reading) {
        encoder.machineState(thread: thread(tid: selfTid), ticks: hitch_now(),
                             stealNs: reading.has_steal != 0 ? reading.steal_ns : nil,
                             cpuPressureSomeUs: reading.has_cpu_pressure != 0 ? reading.cpu_pressure_some_us : nil,
                             cgroupThrottledUs: reading.has_cgroup_throttled != 0 ? reading.cgroup_throttled_us : nil,
                             onlineCPUs: reading.online_cpus)
    }

    /// A context switch from a perf ring, as an FXT context switch record (the other side of the
    /// switch is not known: it is written as thread koid 0).
    func schedSwitch(_ change: hitch_sched_switch, ticks: UInt64) {
        // Drained after the fact: the thread may have exited, and a guessed name must not
        // replace the one its own events gave it.
        let thread = encoder.threadRef(pid: pid, tid: UInt64(UInt32(bitPattern: change.tid)), name: registeredThreadName(tid: change.tid))
        encoder.contextSwitch(cpu: change.cpu, ticks: ticks, thread: thread,
                              direction: change.switched_in != 0 ? .switchedIn : .switchedOut, preempted: change.preempted != 0)
    }

    private func registeredThreadName(tid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard hitch_thread_name_of(tid, &buffer, buffer.count) != 0 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func kernelThreadName(tid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard hitch_platform_thread_name_of(tid, &buffer, buffer.count) != 0 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
