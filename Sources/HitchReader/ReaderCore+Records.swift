#if canImport(Glibc)
import Glibc
#endif
import HitchTrace

// FXT records as events: context switches, strings, kernel objects, events and their arguments,
// blobs (stack definitions, symbols).

extension ReaderCore {
    /// A legacy context switch record (scheduling type 0, docs/FORMAT.md "Thread states") as
    /// `schedSwitch` events: the outgoing thread switched out (preempted when its new state is
    /// "running"), the incoming one switched in; koid 0 (the unknown side) yields no event.
    func decodeContextSwitch(header: UInt64, at start: Int, size: Int, offset: UInt64, into event: inout TraceEvent) throws(TraceReadError) -> Bool {
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

    func decodeString(header: UInt64, at start: Int, size: Int, offset: UInt64) throws(TraceReadError) {
        let index = Int((header >> 16) & 0x7FFF)
        let length = Int((header >> 32) & 0x7FFF)
        guard 8 + length <= size else {
            warn(offset, "string record length \(length) exceeds its record (\(size) bytes); skipped")
            return
        }
        if index == 0 { return }
        fxtStrings[index] = try internBytes(at: start + 8, length: length, offset: offset)
    }

    func decodeKernelObject(header: UInt64, at start: Int, size: Int, offset: UInt64) throws(TraceReadError) {
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
    func threadRoleArgument(count: Int, cursor start: Int, limit: Int, offset: UInt64) throws(TraceReadError) -> UInt32? {
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
    func resolve(_ ref: UInt16, cursor: inout Int, limit: Int, offset: UInt64) throws(TraceReadError) -> UInt32? {
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

    func decodeEvent(header: UInt64, at start: Int, size: Int, offset: UInt64, into event: inout TraceEvent) throws(TraceReadError) -> Bool {
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
    func decodeCommonEvent(header: UInt64, at start: Int, size: Int, into event: inout TraceEvent) -> CommonDecode {
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
    enum CommonDecode { case event, skipped, general }

    /// The payload of an event whose record was read and checked: a typed event of the project's,
    /// else the generic event of its FXT type; false for the types the project does not use (flows).
    @inline(__always)
    func finishEvent(eventType: UInt64, timestampNs: Int64, thread: UInt32, category: UInt32, name: UInt32,
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
    @inline(__always) func store(_ decoded: TraceEvent.Payload, in payload: inout TraceEvent.Payload) {
        if case .stackDefinition = payload { payload = decoded; return }
        // Overwriting plain data: nothing to release, so initializing in place is a plain store.
        withUnsafeMutablePointer(to: &payload) { $0.initialize(to: decoded) }
    }

    @inline(__always)
    func decodeArguments(count: Int, cursor: inout Int, limit: Int, offset: UInt64) throws(TraceReadError) -> Bool {
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
    func parseArgument(at cursor: Int, limit: Int, offset: UInt64) throws(TraceReadError)
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

    func decodeBlob(header: UInt64, at start: Int, size: Int, offset: UInt64, into event: inout TraceEvent) throws(TraceReadError) -> Bool {
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
