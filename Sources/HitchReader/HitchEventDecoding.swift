#if canImport(Glibc)
import Glibc
#endif
import HitchTrace

// How each of the project's events is read back from FXT: the inverse of HitchEventEncoding.swift
// (the mapping docs/FORMAT.md documents).

/// The reader's argument slots are the vocabulary's arguments (HitchVocabulary.swift), by raw value:
/// their string ids are `FixedStringIDs.argumentBase + rawValue` in every reader.
typealias Slot = HitchArgument
let slotCount = HitchArgument.allCases.count

enum ArgKind: UInt8 { case integer, unsigned, double, string }

/// The first two arguments of an event as decoded (name id, kind, bits), kept inline in the
/// reader's state: no allocation, two stores per argument.
struct RawArguments {
    var names: (UInt32, UInt32) = (0, 0)
    var kinds: (ArgKind, ArgKind) = (.unsigned, .unsigned)
    var bits: (UInt64, UInt64) = (0, 0)
    var count = 0

    @inline(__always) mutating func keep(name: UInt32, kind: ArgKind, bits value: UInt64) {
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

    static func argument(_ name: UInt32, _ kind: ArgKind, _ bits: UInt64) -> EventArguments.Argument {
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

extension ReaderCore {
    @inline(__always) func has(_ slot: Slot) -> Bool { argMask & (1 << UInt64(slot.rawValue)) != 0 }

    /// The string argument in `slot` as a word of `Word` whose ids start at `base`, if it is one.
    @inline(__always) func word<Word: RawRepresentable>(_ slot: Slot, base: UInt32, as: Word.Type) -> Word? where Word.RawValue == UInt8 {
        guard has(slot), argKinds[Int(slot.rawValue)] == ArgKind.string.rawValue else { return nil }
        let offset = UInt32(truncatingIfNeeded: argBits[Int(slot.rawValue)]) &- base
        return offset < 256 ? Word(rawValue: UInt8(offset)) : nil
    }

    /// The string id of the string argument in `slot` (0, the empty string, when absent or not a string).
    @inline(__always) func stringArgument(_ slot: Slot) -> UInt32 {
        has(slot) && argKinds[Int(slot.rawValue)] == ArgKind.string.rawValue ? UInt32(truncatingIfNeeded: argBits[Int(slot.rawValue)]) : 0
    }

    /// The last event's app arguments (empty for typed events, whose arguments are in their payload).
    var appArguments: EventArguments {
        guard hot.pointee.lastEventIsGeneric else { return EventArguments() }
        var kept = RawArguments()
        walkArguments { name, kind, bits in kept.keep(name: name, kind: kind, bits: bits); return kept.count < 2 }
        return kept.decoded
    }

    @inline(__always) func unsigned(_ slot: Slot) -> UInt64 {
        let bits = argBits[Int(slot.rawValue)]
        return argKinds[Int(slot.rawValue)] == ArgKind.double.rawValue ? UInt64(clamping: Int64(Double(bitPattern: bits).rounded(.towardZero).clampedToInt64)) : bits
    }

    @inline(__always) func signed(_ slot: Slot) -> Int64 { Int64(bitPattern: unsigned(slot)) }

    @inline(__always) func double(_ slot: Slot) -> Double {
        let bits = argBits[Int(slot.rawValue)]
        switch argKinds[Int(slot.rawValue)] {
        case ArgKind.double.rawValue: return Double(bitPattern: bits)
        case ArgKind.integer.rawValue: return Double(Int64(bitPattern: bits))
        default: return Double(bits)
        }
    }

    /// The value of the last event's first numeric argument (a counter without a `value` one), or 0.
    func firstNumericValue() -> Double {
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
    func walkArguments(_ body: (_ name: UInt32, _ kind: ArgKind, _ bits: UInt64) -> Bool) {
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
    func hitchPayload(eventType: UInt64, category: UInt32, name: UInt32, trailing: UInt64, into payload: inout TraceEvent.Payload) -> Bool {
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
                byteKind: word(.byteKind, base: ids.byteKindBase, as: InferenceByteKind.self) ?? .unspecified))
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
            guard let change = word(.change, base: ids.viewChangeBase, as: ViewLifetimeChange.self) else { return false }
            decoded = .viewLifetime(ViewLifetime(
                change: change, viewType: StringID(rawValue: name), identity: unsigned(.identity),
                parentIdentity: has(.parentIdentity) ? unsigned(.parentIdentity) : 0,
                position: has(.position) ? signed(.position) : 0,
                reason: word(.reason, base: ids.viewReasonBase, as: ViewLifetimeReason.self) ?? .structuralChange))
        case HitchCategory.token.rawValue where isInstant:
            let stage = name &- ids.tokenStageBase
            guard stage < 256, let tokenStage = TokenStage(rawValue: UInt8(stage)) else { return false }
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
    func threadStatePhase() -> FramePhase? {
        guard has(.phase), argKinds[Int(Slot.phase.rawValue)] == ArgKind.string.rawValue else { return nil }
        return FramePhase(name: cold.pointee.strings[Int(truncatingIfNeeded: argBits[Int(Slot.phase.rawValue)])])
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
