import Foundation
import Testing
@testable import HitchReport
import HitchAnalysis
import HitchImport
@testable import HitchReader
@testable import HitchTrace

/// The event vocabulary (HitchVocabulary.swift) is spelled once: the reader's fixed ids follow it,
/// every entry round-trips through FXT and Chrome JSON, and docs/FORMAT.md's table agrees with it.
@Suite struct VocabularyTests {
    /// The reader interns the vocabulary's words first; each word's fixed id is its base plus its raw value.
    @Test func fixedStringIDsFollowTheVocabulary() {
        func check<Word: TraceWord & RawRepresentable>(_: Word.Type, base: UInt32) where Word.RawValue: BinaryInteger {
            for word in Word.allCases {
                let id = Int(base) + Int(word.rawValue)
                #expect(FixedStringIDs.words[id - 1] == word.name, "\(Word.self).\(word)")
            }
        }
        check(HitchArgument.self, base: FixedStringIDs.argumentBase)
        check(HitchCategory.self, base: FixedStringIDs.categoryBase)
        check(HitchEventName.self, base: FixedStringIDs.eventNameBase)
        check(HitchBlobName.self, base: FixedStringIDs.blobBase)
        check(TokenStage.self, base: FixedStringIDs.tokenStageBase)
        check(ViewLifetimeChange.self, base: FixedStringIDs.viewChangeBase)
        check(ViewLifetimeReason.self, base: FixedStringIDs.viewReasonBase)
        check(InferenceByteKind.self, base: FixedStringIDs.byteKindBase)
        check(SwitchDirection.self, base: FixedStringIDs.switchDirectionBase)
        // Fixed ids hold only if no word repeats (the reader interns each string once).
        #expect(Set(FixedStringIDs.words).count == FixedStringIDs.words.count, "a word repeats in FixedStringIDs.words")
        #expect(Int(FixedStringIDs.end) == FixedStringIDs.words.count + 1)
        #expect(HitchArgument.allCases.count <= 64, "the reader's slot mask is one 64-bit word")
        #expect(Set(HitchArgument.names).count == HitchArgument.allCases.count)
        #expect(HitchCategory.frame.name == "hitch.frame" && HitchBlobName.stack.name == "hitch.stack")
        #expect(ViewLifetimeReason.parentRemoved.name == "parentRemoved" && InferenceByteKind.kvCache.name == "kvCache")
        // Every typed payload has one schema entry.
        #expect(Set(HitchEventSchema.all.map(\.payload)).count == HitchEventSchema.all.count)
    }

    /// One event per schema entry and per word (token stages, view changes and reasons, byte kinds),
    /// plus generic intervals and instants with app arguments: written as FXT, read back, exported to
    /// Chrome JSON, imported, written as FXT again and read: the same events every time.
    @Test func everyEntryRoundTripsThroughFXTAndChrome() throws {
        let directory = FileManager.default.temporaryDirectory.path
        let first = directory + "/hitch-vocabulary-\(getpid()).fxt", second = directory + "/hitch-vocabulary-\(getpid())-2.fxt"
        defer { unlink(first); unlink(second) }
        let writer = try TraceFileWriter(path: first)
        let main = writer.thread(name: "main", threadID: 11, role: "main"), render = writer.thread(name: "render", threadID: 12)
        let s = writer.string
        var expected: [String] = []
        var t: Int64 = 5_000_000
        func write(_ thread: ThreadID, _ payload: TraceEvent.Payload, arguments: EventArguments = EventArguments()) {
            t += 1_000
            writer.write(TraceEvent(timestampNs: t, thread: thread, payload: payload), arguments: arguments)
        }
        write(main, .metadata(key: s("workload"), value: s("vocabulary")))
        write(main, .frameBegan(FrameBegan(frameID: 1, vsyncNs: 4_999_000, targetNs: 13_332_333, periodNs: 8_333_333)))
        write(main, .bodyEvaluation(BodyEvaluation(viewType: s("Row"), identity: 42, endNs: t + 5_000)))
        for change in ViewLifetimeChange.allCases {
            for reason in ViewLifetimeReason.allCases {
                write(main, .viewLifetime(ViewLifetime(change: change, viewType: s("Row"), identity: 9, parentIdentity: 3, position: -2, reason: reason)))
            }
        }
        write(main, .invalidation(Invalidation(source: s("Model.query"), target: s("Row"), targetIdentity: 42, stack: StackID(rawValue: 3))))
        write(main, .invalidation(Invalidation(source: s("Model.sort"), target: s("List"), targetIdentity: 1, stack: nil)))
        write(main, .layoutPass(endNs: t + 3_000, viewCount: 17))
        write(main, .frameCommitted(frameID: 1))
        write(render, .frameRenderEnded(frameID: 1))
        write(render, .framePresented(frameID: 1))
        for kind in InferenceByteKind.allCases {
            write(render, .inferenceOp(InferenceOp(name: s("op-\(kind.name)"), computeUnit: s("cpu"), layer: 3, tokenIndex: 7,
                                                  bytesRead: 5_000_000_000, bytesWritten: 12, flops: 99, endNs: t + 2_000, byteKind: kind)))
        }
        for stage in TokenStage.allCases { write(render, .token(TokenEvent(stage: stage, index: 7))) }
        write(main, .interactionBegin(kind: s("typing")))
        write(main, .interactionEnd(kind: s("typing")))
        write(main, .stackDefinition(stack: StackID(rawValue: 3), addresses: [0x4010, 0x4020]))
        write(main, .symbol(Symbol(address: 0x4010, size: 16, function: s("f"), image: s("hitch"), offset: 0x10)))
        write(main, .sample(stack: StackID(rawValue: 3)))
        write(main, .counter(name: s("resident-bytes"), value: 1.5e6))
        write(main, .droppedEvents(count: 4))
        for phase in FramePhase.allCases {
            write(render, .threadState(ThreadStateReading(frameID: 1, phase: phase, cpuNs: 1 << 40, runnableWaitNs: phase == .committed ? nil : 5_000,
                                                         voluntarySwitches: 9, involuntarySwitches: 1 << 33)))
        }
        write(main, .machineState(MachineStateReading(stealNs: 40_000_000, cpuPressureSomeUs: 17, cgroupThrottledUs: 3, onlineCPUs: 2)))
        write(main, .machineState(MachineStateReading(stealNs: nil, cpuPressureSomeUs: nil, cgroupThrottledUs: nil, onlineCPUs: 1)))
        for direction in SwitchDirection.allCases {
            for preempted in [false, true] { write(render, .schedSwitch(SchedSwitch(direction: direction, preempted: preempted))) }
        }
        // Generic events, with and without app arguments.
        let two = EventArguments(first: .init(name: s("rows"), value: .int(-120)), second: .init(name: s("kind"), value: .string(s("search"))))
        write(main, .intervalComplete(category: s("stage"), name: s("filter"), endNs: t + 9_000), arguments: two)
        write(main, .intervalComplete(category: s("stage"), name: s("sort"), endNs: t + 9_000))
        write(main, .instant(category: s("app"), name: s("tap")), arguments: EventArguments(first: .init(name: s("x"), value: .double(0.25))))
        write(main, .instant(category: s("app"), name: s("plain")))
        write(main, .intervalBegin(category: s("stage"), name: s("diff")), arguments: EventArguments(first: .init(name: s("n"), value: .int(3))))
        write(main, .intervalEnd(category: s("stage"), name: s("diff")))
        write(main, .asyncIntervalBegin(category: s("app"), name: s("load"), id: 77))
        write(render, .asyncIntervalEnd(AsyncIntervalEnd(category: s("app"), name: s("load"), id: 77, durationNs: 5_000, selfNs: 4_000)))
        _ = try writer.close()

        // FXT: every event reads back as written, app arguments included.
        var reader = try TraceReader(path: first)
        let fromFXT = try Self.describeAll(&reader)
        expected = fromFXT
        #expect(fromFXT.count == 2 + 1 + 10 + 2 + 1 + 3 + 4 + 4 + 2 + 2 + 1 + 1 + 1 + 5 + 2 + 4 + 8)
        #expect(fromFXT.contains("intervalComplete stage filter +8000 rows=int(-120) kind=string(search) @main"))
        #expect(fromFXT.contains("instant app tap x=double(0.25) @main"))
        #expect(fromFXT.contains("intervalBegin stage diff n=int(3) @main"))
        #expect(fromFXT.contains("inferenceOp op-kvCache cpu 3 7 5000000000 12 99 kvCache @render"))
        #expect(fromFXT.contains("inferenceOp op-unspecified cpu 3 7 5000000000 12 99 unspecified @render"))
        for schema in HitchEventSchema.all {
            #expect(fromFXT.contains { $0.hasPrefix(schema.payload + " ") }, "\(schema.payload) not in the trace")
        }

        // Chrome JSON: the exporter writes every vocabulary argument of the events, the importer reads them back.
        var exportReader = try TraceReader(path: first)
        let json = try ChromeTraceExporter.exportToString(&exportReader)
        for schema in HitchEventSchema.all {
            // Chrome carries trace metadata and drop counts as M events and global instants (`ChromeWord`).
            if schema.category != .meta { #expect(json.contains("\"cat\":\"\(schema.category.name)\""), "\(schema.payload)") }
            for argument in schema.arguments where ![.vsyncTicks, .targetTicks, .target].contains(argument.argument) {
                #expect(json.contains("\"\(argument.argument.name)\":"), "\(schema.payload).\(argument.argument.name)")
            }
        }
        #expect(json.contains("\"args\":{\"rows\":-120,\"kind\":\"search\"}"))
        let imported = try ChromeTraceImporter.importBytes(Array(json.utf8))
        var importedList = ImportedList(trace: imported)
        Self.expectSame(try Self.describeAll(&importedList), expected, "Chrome import")

        // Chrome -> FXT (hitch import chrome) -> read: the same again.
        try imported.writeFXT(to: second)
        var secondReader = try TraceReader(path: second)
        Self.expectSame(try Self.describeAll(&secondReader), expected, "Chrome -> FXT")
    }

    /// docs/FORMAT.md §3's table names, for each typed payload, the schema's category, fixed name and
    /// arguments with their types, in order.
    @Test func formatTableAgreesWithTheSchema() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/FORMAT.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        var rows: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 6 else { continue }
            rows[cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = Array(cells[1...])
        }
        for schema in HitchEventSchema.all {
            let row = try #require(rows[schema.payload], "docs/FORMAT.md has no row for \(schema.payload)")
            #expect(row[2] == "`\(schema.category.name)`", "\(schema.payload): category \(row[2])")
            if let name = schema.name { #expect(row[3].hasPrefix("`\(name.name)`"), "\(schema.payload): name \(row[3])") }
            let documented = Self.codeSpanArguments(row[4])
            let defined = schema.arguments.map { "\($0.argument.name): \($0.type.rawValue)" }
            #expect(documented == defined, "\(schema.payload): FORMAT.md says \(documented), the schema \(defined)")
        }
    }

    /// Line by line, so a failure names the event that differs.
    static func expectSame(_ lines: [String], _ expected: [String], _ what: String) {
        #expect(lines.count == expected.count, "\(what): \(lines.count) events, expected \(expected.count)")
        for (line, want) in zip(lines, expected) where line != want { #expect(line == want, "\(what)") }
    }

    /// "`name`: type" pairs in a table cell, in order.
    static func codeSpanArguments(_ cell: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "`([A-Za-z]+)`: (uint|int|double|string|bool)")
        return pattern.matches(in: cell, range: NSRange(cell.startIndex..., in: cell)).map {
            (cell as NSString).substring(with: $0.range(at: 1)) + ": " + (cell as NSString).substring(with: $0.range(at: 2))
        }
    }

    /// Every event of `input` as one line with its strings resolved.
    static func describeAll<Input: TraceInput>(_ input: inout Input) throws -> [String] {
        var lines: [String] = []
        while let event = try input.nextEvent() { lines.append(describe(event, input)) }
        return lines
    }

    static func describe<Input: TraceInput>(_ event: TraceEvent, _ input: Input) -> String {
        func s(_ id: StringID) -> String { input.string(id) }
        let t = event.timestampNs
        var text: String
        switch event.payload {
        case let .intervalBegin(c, n): text = "intervalBegin \(s(c)) \(s(n))"
        case let .intervalEnd(c, n): text = "intervalEnd \(s(c)) \(s(n))"
        case let .intervalComplete(c, n, end): text = "intervalComplete \(s(c)) \(s(n)) +\(end - t)"
        case let .instant(c, n): text = "instant \(s(c)) \(s(n))"
        case let .counter(n, v): text = "counter \(s(n)) \(v)"
        case let .frameBegan(f): text = "frameBegan \(f.frameID) \(f.vsyncNs - t) \(f.targetNs - t) \(f.periodNs)"
        case let .frameCommitted(id): text = "frameCommitted \(id)"
        case let .frameRenderEnded(id): text = "frameRenderEnded \(id)"
        case let .framePresented(id): text = "framePresented \(id)"
        case let .bodyEvaluation(b): text = "bodyEvaluation \(s(b.viewType)) \(b.identity) +\(b.endNs - t)"
        case let .invalidation(i): text = "invalidation \(s(i.source)) \(s(i.target)) \(i.targetIdentity) \(i.stack.map { "\($0.rawValue)" } ?? "-")"
        case let .viewLifetime(v): text = "viewLifetime \(s(v.viewType)) \(v.change.name) \(v.identity) \(v.parentIdentity) \(v.position) \(v.reason.name)"
        case let .layoutPass(end, count): text = "layoutPass +\(end - t) \(count)"
        case let .inferenceOp(o):
            text = "inferenceOp \(s(o.name)) \(s(o.computeUnit)) \(o.layer) \(o.tokenIndex) \(o.bytesRead) \(o.bytesWritten) \(o.flops) \(o.byteKind.name)"
        case let .token(k): text = "token \(k.stage.name) \(k.index)"
        case let .interactionBegin(k): text = "interactionBegin \(s(k))"
        case let .interactionEnd(k): text = "interactionEnd \(s(k))"
        case let .asyncIntervalBegin(c, n, id): text = "asyncIntervalBegin \(s(c)) \(s(n)) \(id)"
        case let .asyncIntervalEnd(e): text = "asyncIntervalEnd \(s(e.category)) \(s(e.name)) \(e.id) \(e.durationNs) \(e.selfNs)"
        case let .sample(stack): text = "sample \(stack.rawValue)"
        case let .stackDefinition(stack, addresses): return "stackDefinition \(stack.rawValue) \(addresses)"
        case let .symbol(y): return "symbol \(y.address) \(y.size) \(s(y.function)) \(s(y.image)) \(y.offset)"
        case let .metadata(k, v): return "metadata \(s(k)) \(s(v))"
        case let .droppedEvents(count): text = "droppedEvents \(count)"
        case let .threadState(r):
            text = "threadState \(r.frameID) \(r.phase.name) \(r.cpuNs) \(String(describing: r.runnableWaitNs)) \(String(describing: r.voluntarySwitches)) \(String(describing: r.involuntarySwitches))"
        case let .machineState(r):
            text = "machineState \(String(describing: r.stealNs)) \(String(describing: r.cpuPressureSomeUs)) \(String(describing: r.cgroupThrottledUs)) \(r.onlineCPUs)"
        case let .schedSwitch(c): text = "schedSwitch \(c.direction.name) \(c.preempted)"
        }
        for argument in input.arguments.all {
            let value: String
            switch argument.value {
            case .int(let v): value = "int(\(v))"
            case .uint(let v): value = "int(\(v))"
            case .double(let v): value = "double(\(v))"
            case .string(let id): value = "string(\(s(id)))"
            }
            text += " \(s(argument.name))=\(value)"
        }
        return text + (event.payload.kindName == "droppedEvents" ? "" : " @\(input.threadName(event.thread))")
    }
}

/// An imported Chrome trace as an analysis input, with its app arguments beside each event.
private struct ImportedList: TraceInput {
    let trace: ImportedTrace
    var position = 0
    var arguments = EventArguments()
    mutating func nextEvent() throws -> TraceEvent? {
        guard position < trace.events.count else { return nil }
        defer { position += 1 }
        arguments = trace.arguments[position] ?? EventArguments()
        return trace.events[position]
    }
    func string(_ id: StringID) -> String { trace.string(id) }
    func threadName(_ thread: ThreadID) -> String {
        Int(thread.rawValue) < trace.threadNames.count ? trace.threadNames[Int(thread.rawValue)] : "thread \(thread.rawValue)"
    }
    var progress: Double? { nil }
}
