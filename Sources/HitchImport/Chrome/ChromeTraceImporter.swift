#if canImport(Glibc)
import Glibc
#endif
import HitchReader
import HitchTrace

// Chrome trace-event JSON -> the decoded event model. Reads both the JSON Array Format (`[...]`, the
// closing bracket optional, as the format allows) and the JSON Object Format
// (`{"traceEvents": [...], "stackFrames": {...}, "metadata": {...}}`). Events `hitch export --format
// chrome` writes carry their exact figures in `args` (docs/REPORTS.md, "Chrome trace-event JSON"), so a round
// trip loses nothing the analyzer uses; events from other producers map to generic intervals, instants,
// counters and samples.

/// A trace held in memory: events in file order with their string and thread tables.
public struct ImportedTrace: Sendable {
    public var events: [TraceEvent] = []
    public var strings: [String] = []
    public var threadNames: [String] = []
    /// Things skipped on the way in (unsupported phases, unmatched ends), counted.
    public var warnings: [String] = []
    /// The arguments of intervals and instants that had any (at most two each), by index in `events`.
    public var arguments: [Int: EventArguments] = [:]

    public init() {}

    public func string(_ id: StringID) -> String {
        Int(id.rawValue) < strings.count ? strings[Int(id.rawValue)] : ""
    }
}

public struct ChromeImportError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}

public struct ChromeTraceImporter {
    /// Events are held in memory (stack frames may be defined after the samples that use them, and
    /// thread names after a thread's events); past this many, import stops with an error rather than
    /// exhausting memory.
    public var maxEvents = 20_000_000

    private var trace = ImportedTrace()
    private var stringIndex: [String: StringID] = [:]
    private var threadIndex: [String: ThreadID] = [:]
    private var openIntervals: [ThreadID: [(category: StringID, name: StringID)]] = [:]
    private var skipped: [String: Int] = [:]
    /// Samples that name a `stackFrames` node (`sf`), resolved once the whole file is read.
    private var framedSamples: [(eventIndex: Int, node: String)] = []
    private var stackFrames: [String: (name: String, parent: String?)] = [:]
    private var eventIndex = 0
    /// The time of the last timed event read: definitions (M events) take it, so the time sort keeps
    /// them where the producer put them (before the samples that use a stack, after what came first).
    private var lastTimestampNs = Int64.min

    public init() {}

    // MARK: Entry points

    public static func importFile(path: String) throws -> ImportedTrace {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ChromeImportError(message: "cannot open '\(path)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var importer = ChromeTraceImporter()
        var stream = JSONStream(fileDescriptor: fd)
        return try importer.run(&stream, name: path)
    }

    public static func importBytes(_ bytes: [UInt8], name: String = "input") throws -> ImportedTrace {
        var importer = ChromeTraceImporter()
        var stream = JSONStream(bytes: bytes)
        return try importer.run(&stream, name: name)
    }

    mutating func run(_ stream: inout JSONStream, name: String) throws -> ImportedTrace {
        do {
            try parse(&stream)
        } catch let error as JSONStreamError {
            throw ChromeImportError(message: "\(name): not valid Chrome trace JSON: \(error.description)")
        } catch let error as ChromeImportError {
            throw ChromeImportError(message: "\(name): \(error.message) (near byte \(stream.byteOffset))")
        }
        resolveFramedSamples()
        // Events keep their file order, as in an FXT file from the recorder (per-thread buffers, not one
        // global sort): the analyzer reads them the same way, so an exported trace comes back exactly.
        // Definitions (metadata, stacks, symbols) carry no time of their own: stamp them with the
        // trace's first time so they never stretch its duration.
        let firstTime = trace.events.first { $0.timestampNs != Int64.min }?.timestampNs ?? 0
        for index in trace.events.indices where trace.events[index].timestampNs == Int64.min {
            trace.events[index].timestampNs = firstTime
        }
        for (key, count) in skipped.sorted(by: { $0.key < $1.key }) { trace.warnings.append("skipped \(count) \(key)") }
        return trace
    }

    // MARK: Document structure

    private mutating func parse(_ stream: inout JSONStream) throws {
        guard let first = try stream.peekSignificant() else { throw ChromeImportError(message: "empty file") }
        if first == 0xEF { throw ChromeImportError(message: "starts with a byte-order mark; remove it") }
        if first == UInt8(ascii: "[") {
            try parseEventArray(&stream, allowUnterminated: true)
        } else if first == UInt8(ascii: "{") {
            _ = try stream.consume(UInt8(ascii: "{"))
            if try stream.consume(UInt8(ascii: "}")) { return }
            repeat {
                let key = try stream.readKey()
                switch key {
                case "traceEvents":
                    guard try stream.peekSignificant() == UInt8(ascii: "[") else {
                        throw ChromeImportError(message: "'traceEvents' is not an array")
                    }
                    try parseEventArray(&stream, allowUnterminated: false)
                case "stackFrames":
                    try parseStackFrames(&stream)
                case "metadata":
                    let value = try stream.readValue()
                    if case .object(let members) = value {
                        for member in members {
                            if let text = member.value.stringValue { addMetadata(member.key, text) }
                        }
                    }
                default:
                    try stream.skipValue()
                }
            } while try stream.consume(UInt8(ascii: ","))
            try stream.expect(UInt8(ascii: "}"), "',' or '}' after a top-level member")
        } else {
            throw ChromeImportError(message: "expected '[' or '{' at the start")
        }
        if try stream.peekSignificant() != nil { throw ChromeImportError(message: "unexpected data after the trace") }
    }

    private mutating func parseEventArray(_ stream: inout JSONStream, allowUnterminated: Bool) throws {
        try stream.expect(UInt8(ascii: "["), "'['")
        if try stream.consume(UInt8(ascii: "]")) { return }
        while true {
            let value = try stream.readValue()
            try convert(value)
            if try stream.consume(UInt8(ascii: ",")) {
                // The array format may end with a trailing comma and no bracket.
                if allowUnterminated, try stream.peekSignificant() == nil { return }
                continue
            }
            if try stream.consume(UInt8(ascii: "]")) { return }
            if allowUnterminated, try stream.peekSignificant() == nil { return }
            throw ChromeImportError(message: "expected ',' or ']' between events")
        }
    }

    private mutating func parseStackFrames(_ stream: inout JSONStream) throws {
        try stream.expect(UInt8(ascii: "{"), "'{' after \"stackFrames\"")
        if try stream.consume(UInt8(ascii: "}")) { return }
        repeat {
            let id = try stream.readKey()
            let frame = try stream.readValue()
            guard stackFrames.count < 5_000_000 else { throw ChromeImportError(message: "more than 5,000,000 stack frames") }
            stackFrames[id] = (frame["name"]?.stringValue ?? "?", frame["parent"]?.stringValue)
        } while try stream.consume(UInt8(ascii: ","))
        try stream.expect(UInt8(ascii: "}"), "',' or '}' in stackFrames")
    }

    // MARK: Tables

    private mutating func intern(_ text: String) -> StringID {
        if let id = stringIndex[text] { return id }
        let id = StringID(rawValue: UInt32(trace.strings.count))
        trace.strings.append(text)
        stringIndex[text] = id
        return id
    }

    private mutating func thread(_ event: JSONValue) -> ThreadID {
        let pid = event["pid"]?.stringValue ?? "0"
        let tid = event["tid"]?.stringValue ?? "0"
        let key = pid + "/" + tid
        if let id = threadIndex[key] { return id }
        let id = ThreadID(rawValue: UInt32(trace.threadNames.count))
        trace.threadNames.append(tid == "0" && pid == "0" ? "thread 0" : "thread \(tid)")
        threadIndex[key] = id
        return id
    }

    private mutating func append(_ timestampNs: Int64, _ thread: ThreadID, _ payload: TraceEvent.Payload) throws {
        guard trace.events.count < maxEvents else {
            throw ChromeImportError(message: "more than \(maxEvents) events; split the trace")
        }
        trace.events.append(TraceEvent(timestampNs: timestampNs, thread: thread, payload: payload))
    }

    private mutating func addMetadata(_ key: String, _ value: String) {
        trace.events.append(TraceEvent(timestampNs: lastTimestampNs, thread: ThreadID(rawValue: 0),
                                       payload: .metadata(key: intern(key), value: intern(value))))
        if trace.threadNames.isEmpty { trace.threadNames.append("thread 0") }
    }

    private mutating func skip(_ what: String) { skipped[what, default: 0] += 1 }

    /// Keeps the first two arguments of the event just appended (an interval's or instant's, from
    /// any producer): numbers with a fraction or exponent as doubles, other numbers as integers.
    private mutating func keepArguments(_ args: JSONValue) {
        guard case .object(let members) = args, !members.isEmpty else { return }
        var kept = EventArguments()
        for member in members {
            let value: EventArguments.Value
            switch member.value {
            case .number(let text):
                if let integer = Int64(text) { value = .int(integer) }
                else if let unsigned = UInt64(text) { value = .uint(unsigned) }
                else if let double = Double(text) { value = .double(double) }
                else { continue }
            case .string(let text): value = .string(intern(text))
            case .bool(let flag): value = .int(flag ? 1 : 0)
            default: continue
            }
            let argument = EventArguments.Argument(name: intern(member.key), value: value)
            if kept.first == nil { kept.first = argument } else { kept.second = argument; break }
        }
        if !kept.isEmpty { trace.arguments[trace.events.count - 1] = kept }
    }

    // MARK: Events

    /// A `hitch.sched` instant as the exporter writes it (args named as the FXT arguments), or nil.
    private func schedPayload(name: String, args: JSONValue) -> TraceEvent.Payload? {
        switch HitchEventName(name: name) {
        case .threadState?:
            guard let phase = args[.phase]?.stringValue.flatMap(FramePhase.init(name:)),
                  let cpuNs = args[.cpuNs]?.int64Value else { return nil }
            return .threadState(ThreadStateReading(
                frameID: args[.frameID]?.uint64Value ?? 0, phase: phase, cpuNs: cpuNs,
                runnableWaitNs: args[.runnableWaitNs]?.int64Value, voluntarySwitches: args[.voluntarySwitches]?.int64Value,
                involuntarySwitches: args[.involuntarySwitches]?.int64Value))
        case .machineState?:
            return .machineState(MachineStateReading(
                stealNs: args[.stealNs]?.int64Value, cpuPressureSomeUs: args[.cpuPressureSomeUs]?.int64Value,
                cgroupThrottledUs: args[.cgroupThrottledUs]?.int64Value,
                onlineCPUs: Int32(clamping: args[.onlineCPUs]?.int64Value ?? 0)))
        case .schedSwitch?:
            guard let direction = args[.direction]?.stringValue.flatMap(SwitchDirection.init(name:)) else { return nil }
            var preempted = false
            if case .bool(let flag)? = args[.preempted] { preempted = flag }
            let cpu = args[.cpu]?.int64Value.map { UInt16(clamping: $0) } ?? SchedSwitch.unknownCPU
            return .schedSwitch(SchedSwitch(direction: direction, preempted: preempted, cpu: cpu))
        default:
            return nil
        }
    }

    private mutating func convert(_ event: JSONValue) throws {
        eventIndex += 1
        guard case .object = event else { throw ChromeImportError(message: "event \(eventIndex) is not an object") }
        guard let phase = event["ph"]?.stringValue, !phase.isEmpty else {
            throw ChromeImportError(message: "event \(eventIndex) has no \"ph\"")
        }
        let category = event["cat"]?.stringValue ?? ""
        let name = event["name"]?.stringValue ?? ""
        let args = event["args"] ?? .object([])

        if phase == "M" {
            // Metadata events may carry a time (hitch's do); it keeps them in place in the time sort.
            if let tsText = event["ts"], let ts = ChromeTime.nanoseconds(fromMicroseconds: tsText) { lastTimestampNs = ts }
            try convertMetadata(event, name: name, args: args)
            return
        }
        guard let tsText = event["ts"] else { throw ChromeImportError(message: "event \(eventIndex) (ph '\(phase)') has no \"ts\"") }
        guard let ts = ChromeTime.nanoseconds(fromMicroseconds: tsText) else {
            throw ChromeImportError(message: "event \(eventIndex) has an invalid \"ts\"")
        }
        let thread = thread(event)
        lastTimestampNs = ts

        switch phase {
        case "X":
            guard let durText = event["dur"], let dur = ChromeTime.nanoseconds(fromMicroseconds: durText), dur >= 0 else {
                throw ChromeImportError(message: "event \(eventIndex) (ph 'X') has no valid \"dur\"")
            }
            let (end, overflow) = ts.addingReportingOverflow(dur)
            guard !overflow else { throw ChromeImportError(message: "event \(eventIndex): ts + dur overflows") }
            switch HitchCategory(name: category) {
            case .body?:
                try append(ts, thread, .bodyEvaluation(BodyEvaluation(viewType: intern(name), identity: args[.identity]?.uint64Value ?? 0, endNs: end)))
            case .layout?:
                let views = args[.viewCount]?.uint64Value ?? 0
                try append(ts, thread, .layoutPass(endNs: end, viewCount: UInt32(clamping: views)))
            case .op?:
                try append(ts, thread, .inferenceOp(InferenceOp(
                    name: intern(name), computeUnit: intern(args[.computeUnit]?.stringValue ?? ""),
                    layer: Int32(clamping: args[.layer]?.int64Value ?? -1), tokenIndex: Int32(clamping: args[.tokenIndex]?.int64Value ?? -1),
                    bytesRead: args[.bytesRead]?.uint64Value ?? 0, bytesWritten: args[.bytesWritten]?.uint64Value ?? 0,
                    flops: args[.flops]?.uint64Value ?? 0, endNs: end,
                    byteKind: args[.byteKind]?.stringValue.flatMap(InferenceByteKind.init(name:)) ?? .unspecified)))
            default:
                try append(ts, thread, .intervalComplete(category: intern(category), name: intern(name), endNs: end))
                keepArguments(args)
            }
        case "B":
            let interval = (intern(category), intern(name))
            openIntervals[thread, default: []].append(interval)
            try append(ts, thread, .intervalBegin(category: interval.0, name: interval.1))
            keepArguments(args)
        case "E":
            // An end names its interval optionally: a named end closes the innermost open interval of that
            // name (intervals that overlap without nesting stay as they were); an unnamed one the innermost.
            guard var open = openIntervals[thread], !open.isEmpty else { skip("'E' events without a matching 'B'"); return }
            var index = open.count - 1
            if !name.isEmpty, let named = open.lastIndex(where: { trace.strings[Int($0.name.rawValue)] == name }) { index = named }
            let closed = open.remove(at: index)
            openIntervals[thread] = open
            try append(ts, thread, .intervalEnd(category: closed.category, name: closed.name))
        case "i", "I", "R":
            switch HitchCategory(name: category) {
            case .token?:
                guard let stage = TokenStage(name: name) else { skip("token events with an unknown stage"); return }
                try append(ts, thread, .token(TokenEvent(stage: stage, index: args[.index]?.int64Value ?? 0)))
            case .invalidation?:
                let stack = args[.stack]?.uint64Value.map { StackID(rawValue: UInt32(clamping: $0)) }
                try append(ts, thread, .invalidation(Invalidation(
                    source: intern(args[.source]?.stringValue ?? name), target: intern(args[.target]?.stringValue ?? ""),
                    targetIdentity: args[.targetIdentity]?.uint64Value ?? 0, stack: stack)))
            case .view?:
                guard let change = args[.change]?.stringValue.flatMap(ViewLifetimeChange.init(name:)) else {
                    skip("view lifetime events with an unknown change"); return
                }
                let reason = args[.reason]?.stringValue.flatMap(ViewLifetimeReason.init(name:)) ?? .structuralChange
                try append(ts, thread, .viewLifetime(ViewLifetime(
                    change: change, viewType: intern(name), identity: args[.identity]?.uint64Value ?? 0,
                    parentIdentity: args[.parentIdentity]?.uint64Value ?? 0, position: args[.position]?.int64Value ?? 0,
                    reason: reason)))
            case .sched?:
                guard let payload = schedPayload(name: name, args: args) else { skip("hitch.sched events that are malformed"); return }
                try append(ts, thread, payload)
            default:
                if category == ChromeWord.droppedCategory {
                    try append(ts, thread, .droppedEvents(count: args[.count]?.uint64Value ?? 0))
                } else {
                    try append(ts, thread, .instant(category: intern(category), name: intern(name)))
                    keepArguments(args)
                }
            }
        case "C":
            guard case .object(let members) = args else { skip("counter events without args"); return }
            for member in members {
                guard let value = member.value.doubleValue else { continue }
                let counterName = member.key == HitchArgument.value.name ? name : name + "." + member.key
                try append(ts, thread, .counter(name: intern(counterName), value: value))
            }
        case "b", "e", "n":
            try convertAsync(phase: phase, category: category, name: name, args: args, id: event["id"], ts: ts, thread: thread)
        case "P":
            if category == HitchCategory.sample.name, let stack = args[.stack]?.uint64Value {
                try append(ts, thread, .sample(stack: StackID(rawValue: UInt32(clamping: stack))))
            } else if let node = event["sf"]?.stringValue {
                framedSamples.append((trace.events.count, node))
                try append(ts, thread, .sample(stack: StackID(rawValue: 0)))
            } else {
                skip("sample events without a stack")
            }
        case "s", "t", "f":
            // Flow arrows are drawn from the invalidation instants; nothing to keep.
            if category != HitchCategory.invalidation.name { skip("flow events") }
        default:
            skip("events of phase '\(phase.prefix(4))'")
        }
    }

    /// The id of an async interval `hitch export` wrote ("a" and the decimal id); nil for other producers' ids.
    private func asyncIntervalID(_ id: JSONValue?) -> UInt64? {
        guard let text = id?.stringValue, text.hasPrefix("a") else { return nil }
        return UInt64(text.dropFirst())
    }

    private mutating func convertAsync(phase: String, category: String, name: String, args: JSONValue, id: JSONValue?, ts: Int64, thread: ThreadID) throws {
        switch (HitchCategory(name: category), phase) {
        case (.frame?, "b"):
            guard let frameID = args[.frameID]?.uint64Value else { throw ChromeImportError(message: "event \(eventIndex): frame without args.frameID") }
            try append(ts, thread, .frameBegan(FrameBegan(frameID: frameID, vsyncNs: args[.vsyncNs]?.int64Value ?? ts,
                                                          targetNs: args[.targetNs]?.int64Value ?? ts, periodNs: args[.periodNs]?.int64Value ?? 0)))
        case (.frame?, "n"):
            guard let frameID = args[.frameID]?.uint64Value else { throw ChromeImportError(message: "event \(eventIndex): frame step without args.frameID") }
            switch name {
            case ChromeWord.commitStep: try append(ts, thread, .frameCommitted(frameID: frameID))
            case ChromeWord.renderEndStep: try append(ts, thread, .frameRenderEnded(frameID: frameID))
            default: skip("frame steps with an unknown name")
            }
        case (.frame?, "e"):
            guard let frameID = args[.frameID]?.uint64Value else { throw ChromeImportError(message: "event \(eventIndex): frame end without args.frameID") }
            if args[.presented] == .bool(false) { return }   // ends a frame that was never presented
            try append(ts, thread, .framePresented(frameID: frameID))
        case (.interaction?, "b"):
            try append(ts, thread, .interactionBegin(kind: intern(name)))
        case (.interaction?, "e"):
            try append(ts, thread, .interactionEnd(kind: intern(name)))
        case (_, "b") where asyncIntervalID(id) != nil:
            try append(ts, thread, .asyncIntervalBegin(category: intern(category), name: intern(name), id: asyncIntervalID(id)!))
        case (_, "e") where asyncIntervalID(id) != nil:
            try append(ts, thread, .asyncIntervalEnd(AsyncIntervalEnd(
                category: intern(category), name: intern(name), id: asyncIntervalID(id)!,
                durationNs: args[.durationNs]?.int64Value ?? -1, selfNs: args[.selfNs]?.int64Value ?? -1)))
        default:
            skip("async events of other producers")
        }
    }

    private mutating func convertMetadata(_ event: JSONValue, name: String, args: JSONValue) throws {
        switch name {
        case ChromeWord.threadName:
            let id = thread(event)
            if let threadName = args[ChromeWord.threadNameArgument]?.stringValue { trace.threadNames[Int(id.rawValue)] = threadName }
        case ChromeWord.metadataEvent:
            if let key = args[.key]?.stringValue, let value = args[.value]?.stringValue { addMetadata(key, value) }
        case ChromeWord.stackEvent:
            guard let stack = args[.stack]?.uint64Value, case .array(let list)? = args[.addresses] else {
                throw ChromeImportError(message: "event \(eventIndex): hitch_stack needs args.stack and args.addresses")
            }
            let addresses = list.compactMap(\.uint64Value)
            guard addresses.count == list.count else { throw ChromeImportError(message: "event \(eventIndex): a stack address is not a number") }
            try append(lastTimestampNs, thread(event), .stackDefinition(stack: StackID(rawValue: UInt32(clamping: stack)), addresses: addresses))
        case ChromeWord.symbolEvent:
            guard let address = args[.address]?.uint64Value else { throw ChromeImportError(message: "event \(eventIndex): hitch_symbol needs args.address") }
            try append(lastTimestampNs, thread(event), .symbol(Symbol(
                address: address, size: args[.size]?.uint64Value ?? 0, function: intern(args[.function]?.stringValue ?? ""),
                image: intern(args[.image]?.stringValue ?? ""), offset: args[.offset]?.uint64Value ?? 0)))
        case "process_name", "process_labels", "process_sort_index", "thread_sort_index":
            break
        default:
            skip("metadata events")
        }
    }

    /// Turns `sf` chains (other producers' samples) into stack definitions with one synthetic address
    /// per frame node and a symbol naming it, so they flow through the same symbolization as ours.
    private mutating func resolveFramedSamples() {
        guard !framedSamples.isEmpty else { return }
        var nodeAddress: [String: UInt64] = [:]
        var stackIDs: [String: StackID] = [:]
        var definitions: [TraceEvent] = []
        var nextStack: UInt32 = 1 << 30   // well clear of ids from hitch_stack events
        func address(of node: String) -> UInt64 {
            if let address = nodeAddress[node] { return address }
            let address = 0x1000 + UInt64(nodeAddress.count) * 16
            nodeAddress[node] = address
            definitions.append(TraceEvent(timestampNs: Int64.min, thread: ThreadID(rawValue: 0), payload: .symbol(Symbol(
                address: address, size: 16, function: intern(stackFrames[node]?.name ?? node), image: intern("json"), offset: 0))))
            return address
        }
        for (index, node) in framedSamples {
            if let id = stackIDs[node] {
                trace.events[index].payload = .sample(stack: id)
                continue
            }
            var addresses: [UInt64] = []
            var current: String? = node
            while let frame = current, addresses.count < 512 {
                addresses.append(address(of: frame))
                current = stackFrames[frame]?.parent
            }
            let id = StackID(rawValue: nextStack)
            nextStack += 1
            stackIDs[node] = id
            definitions.append(TraceEvent(timestampNs: Int64.min, thread: ThreadID(rawValue: 0), payload: .stackDefinition(stack: id, addresses: addresses)))
            trace.events[index].payload = .sample(stack: id)
        }
        // Definitions precede every use: they go first (the argument table's indices move with them).
        trace.events.insert(contentsOf: definitions, at: 0)
        if !trace.arguments.isEmpty {
            trace.arguments = Dictionary(uniqueKeysWithValues: trace.arguments.map { ($0.key + definitions.count, $0.value) })
        }
    }
}

/// Chrome's `ts` and `dur` are microseconds, possibly fractional; hitch writes nanosecond times as
/// microseconds with three decimals, parsed back here exactly (no floating point on that path).
public enum ChromeTime {
    public static func nanoseconds(fromMicroseconds value: JSONValue) -> Int64? {
        guard let text = value.stringValue else { return nil }
        return nanoseconds(fromMicroseconds: text)
    }

    public static func nanoseconds(fromMicroseconds text: String) -> Int64? {
        var digits = Substring(text)
        var negative = false
        if digits.hasPrefix("-") { negative = true; digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count <= 2, !parts[0].isEmpty, parts[0].count <= 16, parts[0].allSatisfy(\.isASCIIDigit),
           parts.count == 1 || (parts[1].count <= 3 && !parts[1].isEmpty && parts[1].allSatisfy(\.isASCIIDigit)),
           let whole = Int64(parts[0]) {
            var fraction: Int64 = 0
            if parts.count == 2 {
                let padded = String(parts[1]) + String(repeating: "0", count: 3 - parts[1].count)
                fraction = Int64(padded) ?? 0
            }
            let (scaled, overflow) = whole.multipliedReportingOverflow(by: 1000)
            let (ns, overflow2) = scaled.addingReportingOverflow(fraction)
            guard !overflow, !overflow2 else { return nil }
            return negative ? -ns : ns
        }
        guard let micros = Double(text), micros.isFinite, abs(micros) < 9.2e15 else { return nil }
        return Int64((micros * 1000).rounded())
    }

    /// Nanoseconds as microseconds with exactly three decimals ("12.345").
    public static func microsecondsText(_ ns: Int64) -> String {
        let magnitude = ns.magnitude
        let fraction = String(magnitude % 1000)
        return (ns < 0 ? "-" : "") + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension JSONValue {
    /// The member named by a vocabulary argument.
    subscript(_ argument: HitchArgument) -> JSONValue? { self[argument.name] }
}
