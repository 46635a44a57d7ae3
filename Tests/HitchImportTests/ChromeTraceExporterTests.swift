import Foundation
import Testing
import HitchAnalysis
import HitchImport
import HitchReader
import HitchTestSupport
import HitchTrace

@Suite struct ChromeTraceExporterTests {
    /// `hitch import chrome`: the JSON through the importer and the sink into an FXT file.
    static func importChrome(_ json: String, to path: String) throws {
        let sink = try ImportSink(path: path, keepsFileOrder: ImportFormat.chrome.keepsFileOrder)
        try ChromeTraceImporter().importBytes(Array(json.utf8), name: "export.json", into: sink)
        _ = try sink.finish()
    }

    /// A name a script in an HTML page or a viewer would run, were it not escaped.
    static func hostile(_ name: String) -> String { "<script>document.title='pwned'</script> " + name }

    func analyze(_ list: TraceEventList) throws -> Analysis {
        var analysis = try Analyzer.analyze([list])
        analysis.runs = analysis.runs.map { var run = $0; run.path = "run"; return run }
        return analysis
    }

    func imported(_ trace: ImportedTrace) -> TraceEventList {
        var list = TraceEventList(events: trace.events, strings: trace.strings, threadNames: trace.threadNames)
        _ = list.intern("")
        return list
    }

    @Test func exportThenImportKeepsEveryFigure() throws {
        var original = RoundTripTrace.make()
        let expected = try analyze(original)
        #expect(expected.recorded.frameCount > 200)   // frames the analyzer judges (it may set aside overlapping ones)
        #expect(expected.recorded.hitchCount > 0)
        #expect(expected.decode != nil)
        #expect(!expected.invalidations.isEmpty)
        #expect(!expected.samples.folded.isEmpty)
        #expect(expected.identityChurn?.unstableIdentity.map(\.position) == [0, 1, 2])

        let json = try ChromeTraceExporter.exportToString(&original)
        // Valid JSON for any other reader.
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect((object?["traceEvents"] as? [Any])?.isEmpty == false)

        let trace = try ChromeTraceImporter.read(bytes: Array(json.utf8))
        #expect(trace.warnings.isEmpty, "\(trace.warnings)")
        let roundTripped = try analyze(imported(trace))
        #expect(roundTripped == expected)
        if roundTripped != expected {
            // Name the first differing line of the two analyses' JSON, so a failure says what was lost.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let a = String(decoding: try encoder.encode(expected), as: UTF8.self).split(separator: "\n")
            let b = String(decoding: try encoder.encode(roundTripped), as: UTF8.self).split(separator: "\n")
            if let index = a.indices.first(where: { $0 >= b.count || a[$0] != b[$0] }), index < b.count {
                Issue.record("first difference at line \(index): \(a[max(0, index - 12)...index].joined(separator: " ")) vs \(b[index])")
            }
        }
    }

    @Test func importedTraceWrittenAsFXTAnalyzesTheSame() throws {
        var original = RoundTripTrace.make(seed: 11, frames: 120)
        let expected = try analyze(original)
        let json = try ChromeTraceExporter.exportToString(&original)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-roundtrip-\(getpid()).fxt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.importChrome(json, to: path)
        var fromFile = try Analyzer.analyze(paths: [path])
        fromFile.runs = fromFile.runs.map { var run = $0; run.path = "run"; return run }
        #expect(fromFile.recorded == expected.recorded)
        #expect(fromFile.hitches == expected.hitches)
        #expect(fromFile.stages == expected.stages)
        #expect(fromFile.views == expected.views)
        #expect(fromFile.invalidations == expected.invalidations)
        #expect(fromFile.identityChurn == expected.identityChurn)
        #expect(fromFile.decode == expected.decode)
        #expect(fromFile.tokens == expected.tokens)
        #expect(fromFile.samples == expected.samples)
        #expect(fromFile.droppedEvents == expected.droppedEvents)
    }

    /// The recorded traces in Traces/ (real recorder output: per-thread buffer order, many threads)
    /// analyze the same after FXT -> Chrome JSON -> FXT.
    @Test(arguments: ["feed-naive-120hz.fxt", "feed-tuned-120hz.fxt", "llm-newest4-120hz.fxt", "llm-q4_0-120hz.fxt"])
    func recordedTracesRoundTrip(_ file: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let original = root.appendingPathComponent("Traces").appendingPathComponent(file).path
        try #require(FileManager.default.fileExists(atPath: original), "the recorded traces are committed in Traces/")
        var reader = try TraceReader(path: original)
        let json = try ChromeTraceExporter.exportToString(&reader)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-rt-\(getpid())-\(file)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.importChrome(json, to: path)
        var expected = try Analyzer.analyze(paths: [original])
        var roundTripped = try Analyzer.analyze(paths: [path])
        expected.runs = expected.runs.map { var run = $0; run.path = "run"; return run }
        roundTripped.runs = roundTripped.runs.map { var run = $0; run.path = "run"; return run }
        #expect(expected.recorded.frameCount > 0)
        #expect(roundTripped == expected)
    }

    @Test func exportEscapesHostileNamesAndDrawsFlows() throws {
        var list = RoundTripTrace.make(frames: 20, names: Self.hostile)
        let json = try ChromeTraceExporter.exportToString(&list)
        #expect(!json.contains("<script"))
        #expect(json.contains("\\u003cscript\\u003e"))
        #expect(json.contains("\"ph\":\"s\""))
        #expect(json.contains("\"ph\":\"f\""))
        #expect(json.contains("\"stackFrames\":{\"0\""))
        let trace = try ChromeTraceImporter.read(bytes: Array(json.utf8))
        #expect(trace.strings.contains(Self.hostile("FeedRow")))
    }

    @Test func exportIsDeterministic() throws {
        var a = RoundTripTrace.make(frames: 30), b = RoundTripTrace.make(frames: 30)
        #expect(try ChromeTraceExporter.exportToString(&a) == ChromeTraceExporter.exportToString(&b))
    }
}
