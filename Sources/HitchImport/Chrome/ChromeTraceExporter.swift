import HitchReader
import HitchTrace

// Chrome trace-event JSON export (chrome://tracing, Perfetto UI, speedscope, Firefox Profiler).
// Streams: one pass over the events, output flushed in chunks, memory bounded by the distinct stacks.
//
// Mapping (docs/REPORTS.md, "Chrome trace-event JSON"): stages and generic intervals are B/E/X slices; frames are
// async slices (cat hitch.frame) from frame start to present with commit and render end as steps; body
// evaluations, layout passes and inference ops are X slices with their figures in args; invalidations
// are instants plus a flow arrow from the write to the invalidated view's next body evaluation;
// counters are C events; samples are P events pointing into stackFrames; metadata, stack definitions
// and symbols travel as M events that viewers ignore and `hitch import chrome` reads back. Times are
// microseconds with three decimals, so nanoseconds survive the round trip exactly.

public struct ChromeTraceExporter {
    /// Receives the JSON text in chunks.
    private let sink: (String) throws -> Void
    private var buffer = ""
    private var firstEvent = true
    private var seenThreads = Set<UInt32>()
    private var pendingFlows: [FlowKey: [UInt64]] = [:]
    private var nextFlowID: UInt64 = 1
    private var openInteractions: [String: [UInt64]] = [:]
    private var nextInteractionID: UInt64 = 1
    // Stack frames as a trie of (parent node, address) -> node, resolved to names at the end.
    private var trie: [TrieKey: Int] = [:]
    private var nodes: [(parent: Int, address: UInt64)] = []
    private var stackLeaf: [UInt32: Int] = [:]
    private var symbols: [(address: UInt64, size: UInt64, function: String)] = []

    private struct FlowKey: Hashable { var target: String; var identity: UInt64 }
    private struct TrieKey: Hashable { var parent: Int; var address: UInt64 }

    static let maxPendingFlows = 100_000

    /// Stack frames show full demangled names instead of simplified ones (the symbol records keep both).
    private let fullNames: Bool

    public init(fullNames: Bool = false, sink: @escaping (String) throws -> Void) { self.fullNames = fullNames; self.sink = sink }

    /// Exports every event of `input`.
    public static func export<Input: TraceInput>(_ input: inout Input, fullNames: Bool = false, sink: @escaping (String) throws -> Void) throws {
        var exporter = ChromeTraceExporter(fullNames: fullNames, sink: sink)
        try exporter.run(&input)
    }

    /// The whole export as one string (tests, small traces).
    public static func exportToString<Input: TraceInput>(_ input: inout Input) throws -> String {
        let collector = TextCollector()
        try export(&input) { collector.text += $0 }
        return collector.text
    }

    mutating func run<Input: TraceInput>(_ input: inout Input) throws {
        buffer += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hitch export\"},\"traceEvents\":[\n"
        while let event = try input.nextEvent() {
            try convert(event, input)
            if buffer.utf8.count >= 1 << 20 { try flush() }
        }
        buffer += "\n],\"stackFrames\":{"
        try writeStackFrames()
        buffer += "}}\n"
        try flush()
    }

    private mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        try sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: Events

    private mutating func begin(_ phase: String, _ thread: ThreadID, _ timestampNs: Int64?, category: String, name: String) {
        buffer += firstEvent ? "" : ",\n"
        firstEvent = false
        buffer += "{\"ph\":\"" + phase + "\",\"pid\":1,\"tid\":" + String(thread.rawValue)
        if let timestampNs { buffer += ",\"ts\":" + ChromeTime.microsecondsText(timestampNs) }
        if !category.isEmpty { buffer += ",\"cat\":"; appendString(category) }
        buffer += ",\"name\":"
        appendString(name)
    }

    private mutating func end() { buffer += "}" }

    private mutating func args(_ fields: [(HitchArgument, ArgValue)]) { args(fields.map { ($0.0.name, $0.1) }) }

    /// An interval's or instant's app arguments (docs/FORMAT.md §5), when it has any.
    private mutating func appArguments<Input: TraceInput>(_ arguments: EventArguments, _ input: Input) {
        guard !arguments.isEmpty else { return }
        args(arguments.all.map { argument in
            let value: ArgValue
            switch argument.value {
            case .int(let v): value = .int(v)
            case .uint(let v): value = .int(v)
            case .double(let v): value = .double(v)
            case .string(let id): value = .string(input.string(id))
            }
            return (input.string(argument.name), value)
        })
    }

    private mutating func args(_ fields: [(String, ArgValue)]) {
        buffer += ",\"args\":{"
        for (index, field) in fields.enumerated() {
            if index > 0 { buffer += "," }
            appendString(field.0)
            buffer += ":"
            switch field.1 {
            case .string(let text): appendString(text)
            case .integer(let value): buffer += value
            case .double(let value): buffer += value.isFinite ? String(value) : "null"
            case .bool(let flag): buffer += flag ? "true" : "false"
            case .hexArray(let values):
                buffer += "[" + values.map { "\"0x" + String($0, radix: 16) + "\"" }.joined(separator: ",") + "]"
            }
        }
        buffer += "}"
    }

    private enum ArgValue {
        case string(String)
        case integer(String)
        case double(Double)
        case bool(Bool)
        case hexArray([UInt64])
        static func int(_ value: some BinaryInteger) -> ArgValue { .integer(String(value)) }
        static func hex(_ value: UInt64) -> ArgValue { .string("0x" + String(value, radix: 16)) }
    }

    private mutating func duration(_ ns: Int64) { buffer += ",\"dur\":" + ChromeTime.microsecondsText(max(0, ns)) }

    private mutating func ensureThread<Input: TraceInput>(_ thread: ThreadID, _ input: Input) {
        guard seenThreads.insert(thread.rawValue).inserted else { return }
        begin("M", thread, nil, category: "", name: ChromeWord.threadName)
        args([(ChromeWord.threadNameArgument, .string(input.threadName(thread)))])
        end()
    }

    private mutating func convert<Input: TraceInput>(_ event: TraceEvent, _ input: Input) throws {
        let ts = event.timestampNs
        let thread = event.thread
        switch event.payload {
        case .stackDefinition, .symbol, .metadata: break
        default: ensureThread(thread, input)
        }
        func s(_ id: StringID) -> String { input.string(id) }
        let frame = HitchCategory.frame.name
        switch event.payload {
        case let .intervalBegin(category, name):
            begin("B", thread, ts, category: s(category), name: s(name)); appArguments(input.arguments, input); end()
        case let .intervalEnd(category, name):
            begin("E", thread, ts, category: s(category), name: s(name)); appArguments(input.arguments, input); end()
        case let .intervalComplete(category, name, endNs):
            begin("X", thread, ts, category: s(category), name: s(name)); duration(endNs - ts); appArguments(input.arguments, input); end()
        case let .instant(category, name):
            begin("i", thread, ts, category: s(category), name: s(name)); buffer += ",\"s\":\"t\""; appArguments(input.arguments, input); end()
        case let .counter(name, value):
            begin("C", thread, ts, category: "", name: s(name)); args([(.value, .double(value))]); end()
        case let .frameBegan(began):
            begin("b", thread, ts, category: frame, name: ChromeWord.frameSlice); buffer += ",\"id\":\"0x\(String(began.frameID, radix: 16))\""
            args([(.frameID, .int(began.frameID)), (.vsyncNs, .int(began.vsyncNs)), (.targetNs, .int(began.targetNs)), (.periodNs, .int(began.periodNs))]); end()
        case let .frameCommitted(frameID):
            begin("n", thread, ts, category: frame, name: ChromeWord.commitStep); buffer += ",\"id\":\"0x\(String(frameID, radix: 16))\""
            args([(.frameID, .int(frameID))]); end()
        case let .frameRenderEnded(frameID):
            begin("n", thread, ts, category: frame, name: ChromeWord.renderEndStep); buffer += ",\"id\":\"0x\(String(frameID, radix: 16))\""
            args([(.frameID, .int(frameID))]); end()
        case let .framePresented(frameID):
            begin("e", thread, ts, category: frame, name: ChromeWord.frameSlice); buffer += ",\"id\":\"0x\(String(frameID, radix: 16))\""
            args([(.frameID, .int(frameID))]); end()
        case let .bodyEvaluation(body):
            let viewType = s(body.viewType)
            begin("X", thread, ts, category: HitchCategory.body.name, name: viewType); duration(body.endNs - ts)
            args([(.identity, .int(body.identity))]); end()
            // Finish the flow arrows of invalidations waiting for this view's next evaluation.
            if let flows = pendingFlows.removeValue(forKey: FlowKey(target: viewType, identity: body.identity)) {
                for flow in flows {
                    begin("f", thread, ts, category: HitchCategory.invalidation.name, name: ChromeWord.invalidationFlow)
                    buffer += ",\"id\":\(flow),\"bp\":\"e\""; end()
                }
            }
        case let .invalidation(invalidation):
            let source = s(invalidation.source), target = s(invalidation.target)
            begin("i", thread, ts, category: HitchCategory.invalidation.name, name: source + " → " + target); buffer += ",\"s\":\"t\""
            var fields: [(HitchArgument, ArgValue)] = [(.source, .string(source)), (.target, .string(target)), (.targetIdentity, .int(invalidation.targetIdentity))]
            if let stack = invalidation.stack { fields.append((.stack, .int(stack.rawValue))) }
            args(fields); end()
            if pendingFlows.count < ChromeTraceExporter.maxPendingFlows {
                let flow = nextFlowID
                nextFlowID += 1
                pendingFlows[FlowKey(target: target, identity: invalidation.targetIdentity), default: []].append(flow)
                begin("s", thread, ts, category: HitchCategory.invalidation.name, name: ChromeWord.invalidationFlow); buffer += ",\"id\":\(flow)"; end()
            }
        case let .viewLifetime(lifetime):
            begin("i", thread, ts, category: HitchCategory.view.name, name: s(lifetime.viewType)); buffer += ",\"s\":\"t\""
            args([(.change, .string(lifetime.change.name)), (.identity, .int(lifetime.identity)),
                  (.parentIdentity, .int(lifetime.parentIdentity)), (.position, .int(lifetime.position)),
                  (.reason, .string(lifetime.reason.name))]); end()
        case let .layoutPass(endNs, viewCount):
            begin("X", thread, ts, category: HitchCategory.layout.name, name: HitchEventName.layout.name); duration(endNs - ts)
            args([(.viewCount, .int(viewCount))]); end()
        case let .inferenceOp(op):
            begin("X", thread, ts, category: HitchCategory.op.name, name: s(op.name)); duration(op.endNs - ts)
            var fields: [(HitchArgument, ArgValue)] = [
                (.layer, .int(op.layer)), (.computeUnit, .string(s(op.computeUnit))), (.tokenIndex, .int(op.tokenIndex)),
                (.bytesRead, .int(op.bytesRead)), (.bytesWritten, .int(op.bytesWritten)), (.flops, .int(op.flops))]
            if op.byteKind != .unspecified { fields.append((.byteKind, .string(op.byteKind.name))) }
            args(fields); end()
        case let .token(token):
            begin("i", thread, ts, category: HitchCategory.token.name, name: token.stage.name); buffer += ",\"s\":\"t\""
            args([(.index, .int(token.index))]); end()
        case let .interactionBegin(kind):
            let name = s(kind)
            let id = nextInteractionID
            nextInteractionID += 1
            openInteractions[name, default: []].append(id)
            begin("b", thread, ts, category: HitchCategory.interaction.name, name: name); buffer += ",\"id\":\"i\(id)\""; end()
        case let .interactionEnd(kind):
            let name = s(kind)
            var id: UInt64 = 0
            if var open = openInteractions[name], !open.isEmpty { id = open.removeFirst(); openInteractions[name] = open }
            begin("e", thread, ts, category: HitchCategory.interaction.name, name: name); buffer += ",\"id\":\"i\(id)\""; end()
        case let .asyncIntervalBegin(category, name, id):
            begin("b", thread, ts, category: s(category), name: s(name)); buffer += ",\"id\":\"a\(id)\""; end()
        case let .asyncIntervalEnd(interval):
            begin("e", thread, ts, category: s(interval.category), name: s(interval.name)); buffer += ",\"id\":\"a\(interval.id)\""
            args([(.durationNs, .int(interval.durationNs)), (.selfNs, .int(interval.selfNs))]); end()
        case let .sample(stack):
            begin("P", thread, ts, category: HitchCategory.sample.name, name: HitchEventName.sample.name)
            if let leaf = stackLeaf[stack.rawValue] { buffer += ",\"sf\":\"\(leaf)\"" }
            args([(.stack, .int(stack.rawValue))]); end()
        case let .stackDefinition(stack, addresses):
            begin("M", thread, ts, category: "", name: ChromeWord.stackEvent)
            args([(.stack, .int(stack.rawValue)), (.addresses, .hexArray(addresses))]); end()
            defineStack(stack.rawValue, addresses: addresses)
        case let .symbol(symbol):
            begin("M", thread, ts, category: "", name: ChromeWord.symbolEvent)
            args([(.address, .hex(symbol.address)), (.size, .int(symbol.size)), (.function, .string(s(symbol.function))),
                  (.image, .string(s(symbol.image))), (.offset, .int(symbol.offset))]); end()
            if symbols.count < 4_000_000 {
                symbols.append((symbol.address, symbol.size, Symbol.displayName(function: s(symbol.function), image: s(symbol.image), offset: symbol.offset, fullNames: fullNames)))
            }
        case let .metadata(key, value):
            begin("M", thread, ts, category: "", name: ChromeWord.metadataEvent)
            args([(.key, .string(s(key))), (.value, .string(s(value)))]); end()
        case let .droppedEvents(count):
            begin("i", thread, ts, category: ChromeWord.droppedCategory, name: ChromeWord.droppedName); buffer += ",\"s\":\"g\""
            args([(.count, .int(count))]); end()
        case let .threadState(reading):
            begin("i", thread, ts, category: HitchCategory.sched.name, name: HitchEventName.threadState.name); buffer += ",\"s\":\"t\""
            var fields: [(HitchArgument, ArgValue)] = [(.frameID, .int(reading.frameID)), (.phase, .string(reading.phase.name)), (.cpuNs, .int(reading.cpuNs))]
            if let wait = reading.runnableWaitNs { fields.append((.runnableWaitNs, .int(wait))) }
            if let voluntary = reading.voluntarySwitches { fields.append((.voluntarySwitches, .int(voluntary))) }
            if let involuntary = reading.involuntarySwitches { fields.append((.involuntarySwitches, .int(involuntary))) }
            args(fields); end()
        case let .machineState(reading):
            begin("i", thread, ts, category: HitchCategory.sched.name, name: HitchEventName.machineState.name); buffer += ",\"s\":\"g\""
            var fields: [(HitchArgument, ArgValue)] = []
            if let steal = reading.stealNs { fields.append((.stealNs, .int(steal))) }
            if let pressure = reading.cpuPressureSomeUs { fields.append((.cpuPressureSomeUs, .int(pressure))) }
            if let throttled = reading.cgroupThrottledUs { fields.append((.cgroupThrottledUs, .int(throttled))) }
            fields.append((.onlineCPUs, .int(reading.onlineCPUs)))
            args(fields); end()
        case let .schedSwitch(change):
            begin("i", thread, ts, category: HitchCategory.sched.name, name: HitchEventName.schedSwitch.name); buffer += ",\"s\":\"t\""
            var fields: [(HitchArgument, ArgValue)] = [(.direction, .string(change.direction.name)), (.preempted, .bool(change.preempted))]
            if change.cpu != SchedSwitch.unknownCPU { fields.append((.cpu, .int(Int64(change.cpu)))) }
            args(fields); end()
        }
    }

    // MARK: Stacks

    /// Adds a stack (innermost first) to the trie, root = outermost frame, remembering its leaf node.
    private mutating func defineStack(_ stack: UInt32, addresses: [UInt64]) {
        var parent = -1
        for address in addresses.reversed() {
            let key = TrieKey(parent: parent, address: address)
            if let node = trie[key] { parent = node; continue }
            let node = nodes.count
            nodes.append((parent, address))
            trie[key] = node
            parent = node
        }
        if parent >= 0 { stackLeaf[stack] = parent }
    }

    private mutating func writeStackFrames() throws {
        let sorted = symbols.sorted { $0.address < $1.address }
        func name(for address: UInt64) -> String {
            var low = 0, high = sorted.count
            while low < high {
                let mid = (low + high) / 2
                if sorted[mid].address <= address { low = mid + 1 } else { high = mid }
            }
            if low > 0 {
                let symbol = sorted[low - 1]
                if address < symbol.address &+ max(symbol.size, 1) { return symbol.function }
            }
            return "0x" + String(address, radix: 16)
        }
        for (index, node) in nodes.enumerated() {
            if index > 0 { buffer += "," }
            buffer += "\"\(index)\":{\"name\":"
            appendString(name(for: node.address))
            if node.parent >= 0 { buffer += ",\"parent\":\"\(node.parent)\"" }
            buffer += "}"
            if buffer.utf8.count >= 1 << 20 { try flush() }
        }
    }

    // MARK: JSON strings

    /// A JSON string literal. Besides what JSON requires, `<`, `>`, `&` and the line separators are
    /// \u-escaped so the file is safe to embed in HTML or a script.
    private mutating func appendString(_ text: String) {
        buffer += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": buffer += "\\\""
            case "\\": buffer += "\\\\"
            case "\n": buffer += "\\n"
            case "\r": buffer += "\\r"
            case "\t": buffer += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                buffer += "\\u" + hex4(scalar.value)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    buffer += "\\u" + hex4(scalar.value)
                } else {
                    buffer.unicodeScalars.append(scalar)
                }
            }
        }
        buffer += "\""
    }

    private func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Accumulates exported text; used only within one `exportToString` call, never shared.
private final class TextCollector {
    var text = ""
}
