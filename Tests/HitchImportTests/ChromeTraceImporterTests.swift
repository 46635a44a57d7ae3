import Foundation
import HitchImport
import HitchTestSupport
import Testing

@Suite struct ChromeTraceImporterTests {
    func importText(_ text: String) throws -> ImportedTrace {
        try ChromeTraceImporter.read(bytes: Array(text.utf8), name: "test.json")
    }

    @Test func readsTheArrayFormWithoutItsClosingBracket() throws {
        let trace = try importText("""
        [{"ph":"M","pid":1,"tid":7,"name":"thread_name","args":{"name":"main"}},
         {"ph":"X","pid":1,"tid":7,"ts":10.5,"dur":2,"cat":"stage","name":"filter"},
         {"ph":"B","pid":1,"tid":7,"ts":1,"name":"outer"},
         {"ph":"E","pid":1,"tid":7,"ts":20},
         {"ph":"C","pid":1,"tid":7,"ts":3,"name":"mem","args":{"value":5,"other":6}},
        """)
        #expect(trace.threadNames == ["main"])
        // File order is kept (as the recorder's FXT keeps its buffers' order).
        #expect(trace.events.map(\.timestampNs) == [10500, 1000, 20000, 3000, 3000])
        guard case .intervalComplete(_, let name, let end) = trace.events[0].payload else { Issue.record("not a complete"); return }
        #expect(trace.string(name) == "filter")
        #expect(end == 12500)
        guard case .intervalEnd(_, let endName) = trace.events[2].payload else { Issue.record("not an end"); return }
        #expect(trace.string(endName) == "outer")
        guard case .counter(let counter, let value) = trace.events[4].payload else { Issue.record("not a counter"); return }
        #expect(trace.string(counter) == "mem.other")
        #expect(value == 6)
    }

    @Test func readsTheObjectFormWithStackFramesAndMetadata() throws {
        let trace = try importText("""
        {"traceEvents":[{"ph":"P","pid":1,"tid":1,"ts":5,"sf":"2"},{"ph":"P","pid":1,"tid":1,"ts":6,"sf":"2"}],
         "stackFrames":{"1":{"name":"main"},"2":{"name":"work","parent":"1"}},
         "metadata":{"host":"box"},"displayTimeUnit":"ms","extra":[1,2,{"a":null}]}
        """)
        var stacks = 0, samples = 0, symbols = 0, metadata = 0
        var sampleStacks = Set<UInt32>()
        for event in trace.events {
            switch event.payload {
            case .stackDefinition(_, let addresses): stacks += 1; #expect(addresses.count == 2)
            case .sample(let stack): samples += 1; sampleStacks.insert(stack.rawValue)
            case .symbol: symbols += 1
            case .metadata(let key, let value): metadata += 1; #expect(trace.string(key) == "host"); #expect(trace.string(value) == "box")
            default: break
            }
        }
        #expect(stacks == 1 && samples == 2 && symbols == 2 && metadata == 1 && sampleStacks.count == 1)
    }

    @Test func microsecondsParseToExactNanoseconds() {
        #expect(ChromeTime.nanoseconds(fromMicroseconds: "12345.678") == 12_345_678)
        #expect(ChromeTime.nanoseconds(fromMicroseconds: "1.5") == 1500)
        #expect(ChromeTime.nanoseconds(fromMicroseconds: "-2.001") == -2001)
        #expect(ChromeTime.nanoseconds(fromMicroseconds: "1e3") == 1_000_000)
        #expect(ChromeTime.nanoseconds(fromMicroseconds: "abc") == nil)
        #expect(ChromeTime.microsecondsText(1_234_567) == "1234.567")
        #expect(ChromeTime.microsecondsText(-5) == "-0.005")
        for ns: Int64 in [0, 1, 999, 1000, 9_223_372_036_854_775, 1_700_000_000_123_456_789] {
            #expect(ChromeTime.nanoseconds(fromMicroseconds: ChromeTime.microsecondsText(ns)) == ns)
        }
    }

    /// Hostile and broken inputs: each gets a one-line error naming the problem; none crashes.
    @Test(arguments: [
        ("", "empty"),
        ("   ", "empty"),
        ("\u{FEFF}[]", "byte-order mark"),
        ("{\"traceEvents\": 5}", "not an array"),
        ("[1]", "not an object"),
        ("[{\"ts\":1}]", "no \"ph\""),
        ("[{\"ph\":\"X\",\"ts\":1}]", "\"dur\""),
        ("[{\"ph\":\"X\",\"ts\":1,\"dur\":-4}]", "\"dur\""),
        ("[{\"ph\":\"i\"}]", "no \"ts\""),
        ("[{\"ph\":\"i\",\"ts\":\"soon\"}]", "invalid \"ts\""),
        ("[{\"ph\":\"i\",\"ts\":1e400}]", "invalid \"ts\""),
        ("[{\"ph\":\"X\",\"ts\":9000000000000000,\"dur\":9000000000000000}]", "overflows"),
        ("[{\"ph\":\"i\",\"ts\":1,\"name\":\"unterminated}]", "unterminated string"),
        ("[{\"ph\":\"i\",\"ts\":1,\"name\":\"bad \\q escape\"}]", "invalid escape"),
        ("[{\"ph\":\"i\",\"ts\":1,\"name\":\"\u{1}\"}]", "control character"),
        ("[{\"ph\":\"i\",\"ts\":1} {\"ph\":\"i\"}]", "expected ','"),
        ("{\"traceEvents\":[]} trailing", "unexpected data"),
        ("[{\"ph\":\"i\",\"ts\":tru}]", "invalid literal"),
        ("[{\"ph\":\"i\",\"ts\":1,\"args\":{\"a\":-}}]", "invalid number"),
        ("[{\"ph\":\"b\",\"ts\":1,\"cat\":\"hitch.frame\"}]", "frameID"),
        ("[{\"ph\":\"M\",\"name\":\"hitch_stack\",\"args\":{\"stack\":1,\"addresses\":[\"zz\"]}}]", "not a number"),
        ("<html>", "expected '[' or '{'"),
    ])
    func brokenInputGetsOneClearLine(_ input: String, _ expected: String) {
        if let error = expectOneLineError(ChromeImportError.self, for: input, contains: expected, { _ = try importText(input) }) {
            #expect(error.description.hasPrefix("test.json"))
        }
    }

    @Test func deepNestingIsRefusedWithoutRecursingForever() {
        let deep = "[{\"ph\":\"i\",\"ts\":1,\"args\":" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}]"
        #expect(throws: ChromeImportError.self) { try importText(deep) }
        let deepSkipped = "{\"other\":" + String(repeating: "[", count: 100_000) + "}"
        #expect(throws: ChromeImportError.self) { try importText(deepSkipped) }
    }

    @Test func oversizedStringsAndValuesAreRefused() {
        let longName = "[{\"ph\":\"i\",\"ts\":1,\"name\":\"" + String(repeating: "a", count: 1_100_000) + "\"}]"
        #expect(throws: ChromeImportError.self) { try importText(longName) }
        let longNumber = "[{\"ph\":\"i\",\"ts\":" + String(repeating: "1", count: 100) + "}]"
        #expect(throws: ChromeImportError.self) { try importText(longNumber) }
        // A big skipped value is fine: it is never built.
        let bigSkipped = "{\"junk\":\"" + String(repeating: "x", count: 3_000_000) + "\",\"traceEvents\":[]}"
        #expect((try? importText(bigSkipped)) != nil)
    }

    @Test func surrogatesAndInvalidUTF8BecomeReplacementCharacters() throws {
        let trace = try importText("[{\"ph\":\"i\",\"ts\":1,\"name\":\"a\\ud800b\\udc00c\\ud83d\\ude00\"}]")
        #expect(trace.strings.contains("a\u{FFFD}b\u{FFFD}c😀"))
        var bytes = Array("[{\"ph\":\"i\",\"ts\":1,\"name\":\"x".utf8)
        bytes += [0xFF, 0xFE]
        bytes += Array("\"}]".utf8)
        let invalid = try ChromeTraceImporter.read(bytes: bytes)
        #expect(invalid.strings.contains { $0.hasPrefix("x\u{FFFD}") })
    }

    @Test func unknownPhasesAndUnmatchedEndsAreCountedNotFatal() throws {
        let trace = try importText("[{\"ph\":\"E\",\"ts\":1,\"tid\":1},{\"ph\":\"Z\",\"ts\":2},{\"ph\":\"O\",\"ts\":3,\"id\":\"1\"}]")
        #expect(trace.events.isEmpty)
        #expect(trace.warnings.count == 3)
    }

    @Test func seededGarbageNeverCrashes() {
        // Random mutations of a valid trace: every outcome is a trace or a clean error.
        let valid = Array("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":1.5,\"dur\":3,\"cat\":\"stage\",\"name\":\"a\\u0041\",\"args\":{\"k\":[1,2.5e3,true,null]}}]}".utf8)
        var state: UInt64 = 42
        var accepted = 0, rejected = 0
        for _ in 0..<2000 {
            var bytes = valid
            for _ in 0..<3 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let position = Int(state >> 33) % bytes.count
                let byte = UInt8(truncatingIfNeeded: state >> 17)
                switch (state >> 8) % 3 {
                case 0: bytes[position] = byte
                case 1: bytes.remove(at: position)
                default: bytes.insert(byte, at: position)
                }
                if bytes.isEmpty { bytes = [0x5B] }
            }
            do {
                _ = try ChromeTraceImporter.read(bytes: bytes)
                accepted += 1
            } catch {
                rejected += 1
                #expect(!"\(error)".contains("\n"))
            }
        }
        #expect(accepted + rejected == 2000)
        #expect(rejected > 0)
    }
}

/// Every fuzz seed and every fuzzer finding through the Chrome importer, in a child process (a trap
/// fails this test instead of killing the suite): what the fuzz target checks, kept as a plain test.
@Suite struct ChromeTraceImporterCorpusTests {
    static var inputs: [String] {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return ["Tests/Fuzz/corpus/chrome", "Tests/Fixtures/regressions"].flatMap { relative -> [String] in
            let directory = repository.appendingPathComponent(relative)
            return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
                .filter { relative.hasSuffix("chrome") || ($0.hasPrefix("chrome-") && $0.hasSuffix(".json")) }
                .map { directory.appendingPathComponent($0).path }
        }
    }

    @Test func chromeImporterImportsEverySeedAndFindingOrGivesOneLine() async throws {
        try #require(Self.inputs.count > 5)
        await #expect(processExitsWith: .success) {
            for path in ChromeTraceImporterCorpusTests.inputs {
                guard let bytes = FileManager.default.contents(atPath: path) else { exit(5) }
                do {
                    let trace = try ChromeTraceImporter.read(bytes: [UInt8](bytes), name: "input.json")
                    // Every string and thread an event names is in the imported tables.
                    for event in trace.events where Int(event.thread.rawValue) >= trace.threadNames.count { exit(7) }
                } catch {
                    if "\(error)".contains("\n") { exit(3) }
                }
            }
        }
    }
}
