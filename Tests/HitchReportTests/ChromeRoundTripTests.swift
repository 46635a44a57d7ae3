import Foundation
import Testing
@testable import HitchReport
import HitchAnalysis
import HitchImport
import HitchReader
import HitchTrace

/// A seeded trace with every kind of event the analyzer reads: frames (some late), nested stages,
/// bodies, invalidations with stacks, layout, ops, tokens, counters, interactions, samples, symbols,
/// metadata and a drop count. Events are in time order, as a recorder's reader yields them.
enum RoundTripTrace {
    static func make(seed: UInt64 = 7, frames: Int = 240, names: (String) -> String = { $0 }) -> TraceEventList {
        var random = SampleRandom(state: seed)
        var list = TraceEventList()
        let main = list.thread("main"), render = list.thread(names("render")), worker = list.thread(names("inference"))
        let start: Int64 = 1_000_000_000
        var events: [(Int64, ThreadID, TraceEvent.Payload)] = []
        func add(_ t: Int64, _ thread: ThreadID, _ payload: TraceEvent.Payload) { events.append((t, thread, payload)) }
        let stage = list.intern("stage")
        let stageNames = ["filter", "sort", "layout", "commit"].map { list.intern(names($0)) }
        let views = ["FeedRow", "FeedList"].map { list.intern(names($0)) }
        let source = list.intern(names("FeedModel.query"))
        let ops = ["qkv", "attention", "down"].map { list.intern(names($0)) }
        let cpu = list.intern("cpu")
        let input = list.intern("input"), keystroke = list.intern("keystroke")
        let typing = list.intern("typing")
        let resident = list.intern("resident-bytes")
        for (key, value) in [("workload", names("feed")), ("peakBandwidthGBps", "10.5"), ("peakGFLOPS", "90"), ("promptTokens", "4"),
                             ("weightsBytes", "1000000"), ("kvCacheBytes", "20000"), ("refreshRateHz", "120")] {
            add(start, main, .metadata(key: list.intern(key), value: list.intern(value)))
        }
        let addresses: [UInt64] = [0x4010, 0x4020, 0x4030]
        add(start, main, .stackDefinition(stack: StackID(rawValue: 1), addresses: addresses))
        add(start, main, .stackDefinition(stack: StackID(rawValue: 2), addresses: [0x4040, 0x4030]))
        for (index, function) in ["FeedModel.filter", "FeedModel.apply", "main", "FeedModel.sort"].enumerated() {
            add(start, main, .symbol(Symbol(address: 0x4010 + UInt64(index) * 0x10, size: 0x10, function: list.intern(names(function)),
                                             image: list.intern("hitch"), offset: UInt64(index) * 0x10)))
        }
        let period: Int64 = 8_333_333
        add(start, main, .interactionBegin(kind: typing))
        for frame in 0..<frames {
            let vsync = start + Int64(frame) * period
            let late = frame % 17 == 3
            let work = late ? Int64(9_000_000 + random.next() * 20_000_000) : Int64(1_000_000 + random.next() * 3_000_000)
            if frame % 10 == 0 { add(vsync - 200_000, main, .instant(category: input, name: keystroke)) }
            add(vsync, main, .frameBegan(FrameBegan(frameID: UInt64(frame + 1), vsyncNs: vsync, targetNs: vsync + period, periodNs: period)))
            let first = stageNames[frame % 2]
            add(vsync + 10_000, main, .intervalBegin(category: stage, name: first))
            add(vsync + 20_000, main, .invalidation(Invalidation(source: source, target: views[0], targetIdentity: UInt64(frame % 5), stack: StackID(rawValue: 1))))
            add(vsync + 30_000, main, .intervalBegin(category: stage, name: stageNames[2]))
            add(vsync + 40_000, main, .bodyEvaluation(BodyEvaluation(viewType: views[0], identity: UInt64(frame % 5), endNs: vsync + 40_000 + work / 4)))
            if frame % 10 == 0 {
                // A keystroke rebuilds rows 0-2 under new ids (each row and its Text): identity churn.
                for position in 0..<3 {
                    let old = UInt64(10_000 + (frame - 10) * 10 + position), new = UInt64(10_000 + frame * 10 + position)
                    let at = vsync + 41_000 + Int64(position) * 100
                    if frame > 0 {
                        add(at, main, .viewLifetime(ViewLifetime(change: .tornDown, viewType: views[0], identity: old, parentIdentity: 777,
                                                                 position: Int64(position), reason: .identityRemoved)))
                        add(at + 10, main, .viewLifetime(ViewLifetime(change: .tornDown, viewType: views[1], identity: old << 8, parentIdentity: old,
                                                                      position: 0, reason: .parentRemoved)))
                    }
                    add(at + 20, main, .viewLifetime(ViewLifetime(change: .built, viewType: views[0], identity: new, parentIdentity: 777,
                                                                  position: Int64(position), reason: .newIdentity)))
                    add(at + 30, main, .viewLifetime(ViewLifetime(change: .built, viewType: views[1], identity: new << 8, parentIdentity: new,
                                                                  position: 0, reason: .parentBuilt)))
                }
            }
            add(vsync + 50_000 + work / 4, main, .layoutPass(endNs: vsync + 60_000 + work / 3, viewCount: 12))
            add(vsync + 70_000 + work / 3, main, .intervalEnd(category: stage, name: stageNames[2]))
            add(vsync + work / 2, main, .sample(stack: StackID(rawValue: frame % 2 == 0 ? 1 : 2)))
            add(vsync + work, main, .intervalEnd(category: stage, name: first))
            add(vsync + work + 10_000, main, .intervalComplete(category: stage, name: stageNames[3], endNs: vsync + work + 200_000))
            add(vsync + work + 210_000, main, .frameCommitted(frameID: UInt64(frame + 1)))
            let renderEnd = vsync + work + 210_000 + 2_000_000
            add(renderEnd, render, .frameRenderEnded(frameID: UInt64(frame + 1)))
            let present = ((renderEnd - start) / period + 1) * period + start
            add(present, render, .framePresented(frameID: UInt64(frame + 1)))
            add(vsync + 100_000, worker, .counter(name: resident, value: 1_000_000 + Double(frame) * 1000))
        }
        add(start + Int64(frames) * period, main, .interactionEnd(kind: typing))
        // A short decode run on the worker thread: per token, three ops, a produced and a shown token.
        var t = start + 5_000_000
        for token in 0..<12 {
            for (index, op) in ops.enumerated() {
                let duration = Int64(300_000 + index * 200_000)
                add(t, worker, .inferenceOp(InferenceOp(name: op, computeUnit: cpu, layer: Int32(index), tokenIndex: Int32(token),
                                                        bytesRead: 333_333 + UInt64(index), bytesWritten: 1024, flops: UInt64(700_000 * (index + 1)), endNs: t + duration)))
                t += duration
            }
            add(t, worker, .token(TokenEvent(stage: .produced, index: Int64(token))))
            add(t + 1_000_000, main, .token(TokenEvent(stage: .shown, index: Int64(token))))
        }
        add(start + 1_000, main, .droppedEvents(count: 5))
        events.sort { $0.0 < $1.0 }   // stable: same-time events keep their order
        for event in events { list.append(event.0, event.1, event.2) }
        return list
    }
}

@Suite struct ChromeRoundTripTests {
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

        let trace = try ChromeTraceImporter.importBytes(Array(json.utf8))
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
        let trace = try ChromeTraceImporter.importBytes(Array(json.utf8))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-roundtrip-\(getpid()).fxt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try trace.writeFXT(to: path)
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
        try ChromeTraceImporter.importBytes(Array(json.utf8)).writeFXT(to: path)
        var expected = try Analyzer.analyze(paths: [original])
        var roundTripped = try Analyzer.analyze(paths: [path])
        expected.runs = expected.runs.map { var run = $0; run.path = "run"; return run }
        roundTripped.runs = roundTripped.runs.map { var run = $0; run.path = "run"; return run }
        #expect(expected.recorded.frameCount > 0)
        #expect(roundTripped == expected)
    }

    @Test func exportEscapesHostileNamesAndDrawsFlows() throws {
        var list = RoundTripTrace.make(frames: 20, names: SampleAnalysis.hostile)
        let json = try ChromeTraceExporter.exportToString(&list)
        #expect(!json.contains("<script"))
        #expect(json.contains("\\u003cscript\\u003e"))
        #expect(json.contains("\"ph\":\"s\""))
        #expect(json.contains("\"ph\":\"f\""))
        #expect(json.contains("\"stackFrames\":{\"0\""))
        let trace = try ChromeTraceImporter.importBytes(Array(json.utf8))
        #expect(trace.strings.contains(SampleAnalysis.hostile("FeedRow")))
    }

    @Test func exportIsDeterministic() throws {
        var a = RoundTripTrace.make(frames: 30), b = RoundTripTrace.make(frames: 30)
        #expect(try ChromeTraceExporter.exportToString(&a) == ChromeTraceExporter.exportToString(&b))
    }
}

/// The identity-churn section and the estimated-figure labels, as each renderer shows them.
@Suite struct IdentityAndEstimateRenderingTests {
    @Test func identityChurnIsShownInTextJSONAndHTML() throws {
        let analysis = try Analyzer.analyze([RoundTripTrace.make(frames: 60)])
        let text = try TextReport.render(ReportInput(analysis: analysis))
        #expect(text.contains("Identity churn"))
        #expect(text.contains("LIKELY UNSTABLE IDENTITY at 3 places"))
        #expect(text.contains("FeedRow at position 0"))
        let json = String(decoding: try JSONEncoder().encode(analysis), as: UTF8.self)
        #expect(json.contains("\"unstableIdentity\""))
        let html = HTMLReport.render(analysis, title: "churn")
        #expect(html.contains("Identity churn"))
        #expect(html.contains("Likely unstable identity"))
    }

    @Test func estimatedModelMemoryIsLabelledEstimated() throws {
        let list = RoundTripTrace.make(frames: 30)
        let measured = try Analyzer.analyze([list])
        #expect(measured.decode?.memory.weightsBytesEstimated == false)
        #expect(!(try TextReport.render(ReportInput(analysis: measured))).contains("estimated"))
        // The same trace without the weightsBytes / kvCacheBytes metadata: the sizes are estimated.
        var stripped = TraceEventList()
        for event in list.events {
            if case .metadata(let key, _) = event.payload, ["weightsBytes", "kvCacheBytes"].contains(list.strings[Int(key.rawValue)]) { continue }
            stripped.append(event.timestampNs, event.thread, event.payload)
        }
        stripped.strings = list.strings
        stripped.threadNames = list.threadNames
        let estimated = try Analyzer.analyze([stripped])
        let memory = try #require(estimated.decode?.memory)
        #expect(memory.weightsBytesEstimated && memory.kvCacheBytesEstimated)
        #expect(try TextReport.render(ReportInput(analysis: estimated)).contains("(estimated from op bytes)"))
        #expect(HTMLReport.render(estimated, title: "estimated").contains("weights (estimated)"))
    }

    @Test func aPeakFromCacheSizedProbeArraysIsLabelled() throws {
        var list = RoundTripTrace.make(frames: 30)
        #expect(try !TextReport.render(ReportInput(analysis: Analyzer.analyze([list]))).contains("may be a cache figure"))
        list.append(1_000_000_000, list.thread("main"), .metadata(key: list.intern("bandwidthProbeMeetsCacheRule"), value: list.intern("false")))
        let analysis = try Analyzer.analyze([list])
        #expect(analysis.decode?.peakBandwidthMayBeCacheBound == true)
        #expect(try TextReport.render(ReportInput(analysis: analysis)).contains("the peak may be a cache figure"))
        #expect(HTMLReport.render(analysis, title: "cache").contains("may be a cache figure"))
    }
}
