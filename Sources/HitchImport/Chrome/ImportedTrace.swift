import HitchReader

// A Chrome trace read whole (`ChromeTraceImporter.read`), then into the sink like every importer's
// events, in its file order (the sink keeps it: `ImportFormat.chrome.keepsFileOrder`), so a trace
// exported and imported again comes back as it was.

/// A trace held in memory: events in file order with their string and thread tables.
public struct ImportedTrace: Sendable {
    public var events: [TraceEvent] = []
    public var strings: [String] = []
    public var threadNames: [String] = []
    /// Things skipped on the way in (unsupported phases, unmatched ends), counted, by what they are.
    public var skipped: [(what: String, count: Int)] = []
    /// The skipped things as one line each ("skipped 3 flow events").
    public var warnings: [String] { skipped.map { "skipped \($0.count) \($0.what)" } }
    /// The arguments of intervals and instants that had any (at most two each), by index in `events`.
    public var arguments: [Int: EventArguments] = [:]

    public init() {}

    public func string(_ id: StringID) -> String {
        Int(id.rawValue) < strings.count ? strings[Int(id.rawValue)] : ""
    }
}

extension ImportedTrace {
    /// Emits the events, in their order, with their threads, strings and arguments, and counts what
    /// was skipped on the way in.
    func emit(into sink: ImportSink) {
        for (what, count) in skipped { sink.skip(what, count: count) }
        let stringMap = strings.map { sink.string($0) }
        // Thread koids start well above the process koid (1) so no thread shares a koid with it.
        let threadMap = threadNames.enumerated().map { sink.thread(pid: 1, tid: 1000 + UInt64($0.offset), name: $0.element) }
        func s(_ id: StringID) -> StringID { Int(id.rawValue) < stringMap.count ? stringMap[Int(id.rawValue)] : sink.string("") }
        for (index, event) in events.enumerated() {
            var mapped = event
            mapped.thread = Int(event.thread.rawValue) < threadMap.count ? threadMap[Int(event.thread.rawValue)]
                : threadMap.first ?? sink.thread(pid: 1, tid: 1000, name: "thread 0")
            switch event.payload {
            case let .intervalBegin(category, name): mapped.payload = .intervalBegin(category: s(category), name: s(name))
            case let .intervalEnd(category, name): mapped.payload = .intervalEnd(category: s(category), name: s(name))
            case let .intervalComplete(category, name, endNs): mapped.payload = .intervalComplete(category: s(category), name: s(name), endNs: endNs)
            case let .instant(category, name): mapped.payload = .instant(category: s(category), name: s(name))
            case let .counter(name, value): mapped.payload = .counter(name: s(name), value: value)
            case var .bodyEvaluation(body): body.viewType = s(body.viewType); mapped.payload = .bodyEvaluation(body)
            case var .invalidation(invalidation):
                invalidation.source = s(invalidation.source); invalidation.target = s(invalidation.target)
                mapped.payload = .invalidation(invalidation)
            case var .viewLifetime(lifetime): lifetime.viewType = s(lifetime.viewType); mapped.payload = .viewLifetime(lifetime)
            case var .inferenceOp(op): op.name = s(op.name); op.computeUnit = s(op.computeUnit); mapped.payload = .inferenceOp(op)
            case let .interactionBegin(kind): mapped.payload = .interactionBegin(kind: s(kind))
            case let .interactionEnd(kind): mapped.payload = .interactionEnd(kind: s(kind))
            case var .symbol(symbol): symbol.function = s(symbol.function); symbol.image = s(symbol.image); mapped.payload = .symbol(symbol)
            case let .metadata(key, value): mapped.payload = .metadata(key: s(key), value: s(value))
            case let .asyncIntervalBegin(category, name, id): mapped.payload = .asyncIntervalBegin(category: s(category), name: s(name), id: id)
            case var .asyncIntervalEnd(end): end.category = s(end.category); end.name = s(end.name); mapped.payload = .asyncIntervalEnd(end)
            case var .hang(hang): hang.source = s(hang.source); hang.type = s(hang.type); mapped.payload = .hang(hang)
            case var .hangStack(capture):
                capture.systemCall = s(capture.systemCall); capture.waitChannel = s(capture.waitChannel)
                mapped.payload = .hangStack(capture)
            case .frameBegan, .frameCommitted, .frameRenderEnded, .framePresented, .layoutPass, .token, .sample,
                 .stackDefinition, .droppedEvents, .threadState, .machineState, .schedSwitch:
                break
            }
            if arguments.isEmpty {
                sink.emit(mapped)
            } else {
                var kept = arguments[index] ?? EventArguments()
                for keyPath in [\EventArguments.first, \EventArguments.second] {
                    guard var argument = kept[keyPath: keyPath] else { continue }
                    argument.name = s(argument.name)
                    if case .string(let value) = argument.value { argument.value = .string(s(value)) }
                    kept[keyPath: keyPath] = argument
                }
                sink.emit(mapped, arguments: kept)
            }
        }
    }
}
