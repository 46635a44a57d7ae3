import HitchReader

// Writes an imported trace as FXT through the explicit-timestamp writer, so every importer ends in the
// same file format the recorder writes and the analyzer reads.

extension ImportedTrace {
    /// Writes the events (already in time order) to `path`; returns the bytes written.
    @discardableResult
    public func writeFXT(to path: String) throws -> UInt64 {
        let writer = try TraceFileWriter(path: path, ticksPerSecond: 1_000_000_000)
        let stringMap = strings.map { writer.string($0) }
        // Thread koids start well above the process koid (1) so no thread shares a koid with it.
        let threadMap = threadNames.enumerated().map { writer.thread(name: $0.element, threadID: 1000 + UInt64($0.offset)) }
        func s(_ id: StringID) -> StringID { Int(id.rawValue) < stringMap.count ? stringMap[Int(id.rawValue)] : writer.string("") }
        for (index, event) in events.enumerated() {
            var mapped = event
            mapped.thread = Int(event.thread.rawValue) < threadMap.count ? threadMap[Int(event.thread.rawValue)] : threadMap.first ?? writer.thread(name: "thread 0")
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
            case .frameBegan, .frameCommitted, .frameRenderEnded, .framePresented, .layoutPass, .token, .sample,
                 .stackDefinition, .droppedEvents, .threadState, .machineState, .schedSwitch:
                break
            }
            if arguments.isEmpty {
                writer.write(mapped)
            } else {
                var kept = arguments[index] ?? EventArguments()
                for keyPath in [\EventArguments.first, \EventArguments.second] {
                    guard var argument = kept[keyPath: keyPath] else { continue }
                    argument.name = s(argument.name)
                    if case .string(let value) = argument.value { argument.value = .string(s(value)) }
                    kept[keyPath: keyPath] = argument
                }
                writer.write(mapped, arguments: kept)
            }
        }
        return try writer.close()
    }
}
