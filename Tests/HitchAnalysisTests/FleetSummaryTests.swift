import Foundation
import HitchReader
import HitchAlgorithms
import HitchTrace
import Testing
@testable import HitchAnalysis

/// Summaries merge exactly: merged, they equal one analysis of their traces as runs; merging is
/// associative and commutative; a summary survives its JSON (docs/FLEET.md "Merging").
@Suite struct FleetSummaryTests {
    static let ms: Int64 = 1_000_000

    /// A seeded feed-like trace written to a file (SyntheticTrace), with dimensions in its metadata.
    static func syntheticTrace(seed: UInt64, frames: Int, slowFrameOneIn: Int64, threadStates: Bool,
                               metadata: [(MetadataKey, String)], in directory: String) throws -> String {
        let path = directory + "/synthetic-\(seed).fxt"
        let writer = try TraceFileWriter(path: path)
        for (key, value) in metadata { writer.setMetadata(key, value) }
        var generator = SyntheticTrace(seed: seed)
        generator.slowFrameOneIn = slowFrameOneIn
        generator.threadStates = threadStates
        _ = generator.write(to: writer, targetBytes: .max, maxFrames: frames)
        _ = try writer.close()
        return path
    }

    /// A decode session: prefill, then `tokens` steps of known bytes and times, on one machine's peak.
    static func decodeTrace(tokens: Int, stepNs: Int64) -> TraceEventList {
        var list = TraceEventList()
        let inference = list.thread("inference")
        let qkv = list.intern("qkv"), attention = list.intern("attention"), cpu = list.intern("cpu")
        let key = list.intern(MetadataKey.peakBandwidthGBps.name), value = list.intern("20")
        list.append(0, inference, .metadata(key: key, value: value))
        list.append(0, inference, .inferenceOp(InferenceOp(name: qkv, computeUnit: cpu, layer: 0, tokenIndex: 0,
                                                           bytesRead: 8_000_000, bytesWritten: 0, flops: 64_000_000, endNs: 3 * ms)))
        list.append(4 * ms, inference, .token(TokenEvent(stage: .produced, index: 0)))
        for k in 1...tokens {
            let start = 4 * ms + Int64(k - 1) * stepNs
            list.append(start, inference, .inferenceOp(InferenceOp(name: qkv, computeUnit: cpu, layer: 0, tokenIndex: Int32(k),
                                                                   bytesRead: 8_000_000, bytesWritten: 0, flops: 16_000_000, endNs: start + stepNs * 9 / 10)))
            list.append(start + stepNs * 9 / 10, inference, .inferenceOp(InferenceOp(name: attention, computeUnit: cpu, layer: 0, tokenIndex: Int32(k),
                                                                                     bytesRead: 1_000_000 + UInt64(k) * 1000, bytesWritten: 0, flops: 1_000_000,
                                                                                     endNs: start + stepNs)))
            list.append(start + stepNs, inference, .token(TokenEvent(stage: .produced, index: Int64(k))))
        }
        return list
    }

    /// A platform's hang table imported as hang events (no frames): one hang of `hangMs` and one
    /// brief stretch of 180 ms over 3.6 s, on the decode sessions' machine.
    static func hangTrace(hangMs: Int64) -> TraceEventList {
        var list = TraceEventList()
        let main = list.thread("main"), source = list.intern("instruments"), app = list.intern("app")
        // The machine the decode sessions ran on: the fleet's decode figures read the metadata every trace shares.
        list.append(0, main, .metadata(key: list.intern(MetadataKey.peakBandwidthGBps.name), value: list.intern("20")))
        list.append(0, main, .instant(category: app, name: list.intern("start")))
        list.append(1_000 * ms, main, .hang(Hang(endNs: (1_000 + hangMs) * ms, source: source, type: list.intern("Hang"))))
        list.append(3_000 * ms, main, .hang(Hang(endNs: 3_180 * ms, source: source, type: list.intern("Brief Unresponsiveness"))))
        list.append(3_600 * ms, main, .instant(category: app, name: list.intern("end")))
        return list
    }

    /// Hang figures but the list, which a merge keeps as the longest stretches and an analysis in time order.
    static func hangCounts(_ h: HangFigures?) -> HangFigures? {
        guard var h else { return nil }
        h.list = []
        h.listTruncated = false
        return h
    }

    /// The figures a merge must reproduce: every one but the worst window's run index, which
    /// counts runs in one analysis and traces' own runs in a summary (checked by path instead).
    static func comparable(_ a: Analysis) -> Analysis {
        var a = a
        a.recorded.worstWindow.run = 0
        for key in a.hitches.keys { a.hitches[key]!.worstWindow.run = 0 }
        return a
    }

    /// Several traces (feed-like ones at different hitch rates, with and without thread states; two
    /// decode sessions) summarized one by one and merged, against one analysis of all of them as
    /// runs: the hitch figures at every rate (percentiles included), the offenders, decode and counts
    /// are equal, not close. The traces start on one clock, so no replay continues across them, and
    /// they agree on the machine's peak bandwidth (decode's utilization reads it).
    @Test func mergedSummariesEqualOneAnalysisOfTheTracesAsRuns() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-fleet-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var paths: [String] = []
        for seed in UInt64(1)...4 {
            paths.append(try Self.syntheticTrace(seed: seed, frames: 600 + Int(seed) * 150, slowFrameOneIn: seed % 2 == 0 ? 48 : 97,
                                                 threadStates: seed >= 3,
                                                 metadata: [(.appVersion, "1.\(seed % 2)"), (.device, "d\(seed % 3)"), (.peakBandwidthGBps, "20")],
                                                 in: directory))
        }
        let decodes = [("decode-a", Self.decodeTrace(tokens: 12, stepNs: 20 * Self.ms)), ("decode-b", Self.decodeTrace(tokens: 7, stepNs: 31 * Self.ms)),
                       ("hangs-a", Self.hangTrace(hangMs: 600)), ("hangs-b", Self.hangTrace(hangMs: 900))]
        let options = AnalyzerOptions(refreshRatesHz: [60, 90, 120])

        var summaries: [TraceSummary] = []
        for path in paths {
            var analyzer = Analyzer(options: options)
            var reader = try TraceReader(path: path)
            try analyzer.add(&reader, path: path)
            summaries.append(analyzer.summary(path: path).summary)
        }
        for (name, list) in decodes {
            var analyzer = Analyzer(options: options)
            var input = list
            try analyzer.add(&input, path: name)
            summaries.append(analyzer.summary(path: name).summary)
        }
        // One analysis of every trace as runs, in path order (the merge's order for ties; the
        // temporary directory's paths sort before the decode sessions' names).
        var all = Analyzer(options: options)
        for path in paths {
            var reader = try TraceReader(path: path)
            try all.add(&reader, path: path)
        }
        for (name, list) in decodes {
            var input = list
            try all.add(&input, path: name)
        }
        let expected = all.finish()
        #expect(expected.recorded.hitchCount > 20 && expected.recorded.byCause.appWork.hitchCount > 0)
        #expect(expected.offenders.count > 3)

        let fleet = try #require(try FleetSummary.merged(summaries.reversed().map { FleetSummary($0) }))
        let figures = fleet.figures()
        let merged = Self.comparable(figures.fleet), analyzed = Self.comparable(expected)
        #expect(merged.recorded == analyzed.recorded)
        #expect(merged.hitches == analyzed.hitches)
        #expect(merged.recordedRates == analyzed.recordedRates)
        #expect(merged.offenders == analyzed.offenders)
        #expect(merged.decode == analyzed.decode)
        #expect(Self.hangCounts(merged.hangs) == Self.hangCounts(analyzed.hangs))
        #expect(analyzed.hangs?.count == 2 && analyzed.hangs?.brief.count == 2 && analyzed.hangs?.longestMs == 900)
        #expect(merged.hangs?.list.prefix(2).map { "\($0.trace ?? "") \($0.durationMs)" } == ["hangs-b 900.0", "hangs-a 600.0"])
        #expect(merged.eventCount == analyzed.eventCount && merged.droppedEvents == analyzed.droppedEvents)
        #expect(figures.worstWindowTraces["recorded"] == expected.runs[expected.recorded.worstWindow.run].path)
        #expect(figures.traces == 8 && figures.traceRatios.tracesWithFrames == 4 && figures.traceRatios.tracesWithoutFrames == 4)
        // Each trace's own ratio, and the group by app version, from the traces alone.
        let ratios = summaries.map { $0.analysis.recorded }.filter { $0.frameCount > 0 }.map(\.hitchTimeRatioMsPerS)
        #expect(figures.worstTraces.map(\.hitchTimeRatioMsPerS) == ratios.sorted(by: >))
        let grades = ratios.map(HitchGrading.appleTestGrade)
        #expect([figures.traceRatios.goodTraces, figures.traceRatios.warningTraces, figures.traceRatios.criticalTraces]
                == [HitchGrade.good, .warning, .critical].map { grade in grades.filter { $0 == grade }.count })
        let byVersion = try #require(figures.breakdowns.first { $0.dimensions == ["appVersion"] })
        let oneOne = try #require(byVersion.rows.first { $0.values == ["1.1"] })
        #expect(oneOne.traces == 2 && oneOne.recorded.frameCount == summaries.filter { $0.dimensions["appVersion"] == "1.1" }
            .reduce(0) { $0 + $1.analysis.recorded.frameCount })
    }

    // MARK: The algebra, on random summaries

    /// A random trace summary: totals of a few rates with sketches of up to 1,800 values (so merges
    /// of three cross the exact limit now and then), causes, offenders from a small pool, sometimes decode, dimensions.
    static func randomSummary(_ random: inout SeededGenerator, index: Int) -> TraceSummary {
        func int(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        func sketch(_ count: Int, scale: Int64) -> QuantileSketch {
            var s = QuantileSketch()
            for _ in 0..<count { s.add(Int64(random.next() % UInt64(scale)) - scale / 20) }
            return s
        }
        func hitchTotals(_ source: HitchSource, rateHz: Double) -> HitchTotals {
            var t = HitchTotals(source: source, rateHz: rateHz)
            let frames = int(1800)
            t.frameCount = frames
            t.frameTimes = sketch(frames, scale: 40 * ms)
            t.overruns = sketch(frames, scale: 20 * ms)
            for _ in 0..<min(frames, 200) { t.frameTimeHistogram.add(frameTimeNs: Int64(int(60)) * ms) }
            t.hitchCount = int(50)
            t.totalHitchNs = Int64(t.hitchCount) * Int64(int(20) + 1) * ms
            t.longestHitchNs = Int64(int(100)) * ms
            t.animatingNs = Int64(frames) * 8 * ms
            t.slowFrames = int(40)
            t.framesWithThreadStates = int(2) * frames
            for cause in HitchCause.allCases where int(2) == 0 { t.addHitch(cause, hitchNs: Int64(int(30)) * ms) }
            t.animatingFromFrames = true
            t.worstWindow = WorstWindowTotals(hitchNs: Int64(int(5)) * 10 * ms, hitchCount: int(4), run: 0, startMs: Double(int(9000)), trace: "trace-\(index)")
            return t
        }
        var totals = FigureTotals()
        totals.runs = 1
        totals.eventCount = UInt64(int(1_000_000))
        totals.droppedEvents = UInt64(int(3))
        totals.hitches.recorded = hitchTotals(.recorded, rateHz: 0)
        totals.hitches.recordedRates = [["60", "120"][int(2)]: totals.hitches.recorded.frameCount]
        totals.hitches.rates = ["60": hitchTotals(int(2) == 0 ? .recorded : .replay, rateHz: 60), "120": hitchTotals(.replay, rateHz: 120)]
        let names = ["filter", "sort", "FeedRow", "decodeImage", "layout", "swift_retain"]
        totals.offenders = OffenderTotals.canonical((0..<int(5)).map { _ in
            var o = OffenderTotals(kind: OffenderKind.allCases[int(3)], name: names[int(names.count)], WeightedHitch())
            o.weightPs = Int64(int(1_000_000)) * 1000
            o.onCPUNs = Int64(int(1_000_000))
            o.hitchingFrames = int(20)
            return o
        })
        if int(3) == 0 {
            var d = DecodeTotals()
            d.opCount = int(500) + 1
            d.tokens = int(200)
            d.decodeTokens = d.tokens
            d.decodeWeightBytes = UInt64(d.tokens) * 8_000_000
            d.steps = sketch(d.tokens, scale: 30 * ms)
            d.timeToFirstTokenSumNs = Int64(int(100)) * ms
            d.timeToFirstTokenCount = 1
            d.ops = ["qkv": DecodeOpTotals(count: d.tokens, totalNs: Int64(d.tokens) * 20 * ms, bytes: UInt64(d.tokens) * 8_000_000, flops: 16, computeUnit: "cpu")]
            totals.decode = d
        }
        if index % 2 == 0 {
            // Hangs, their longest stretches with equal durations across traces now and then (the order's ties).
            var h = HangTotals(hangThresholdNs: 250 * ms, briefThresholdNs: 100 * ms)
            h.recordedNs = Int64(int(600) + 1) * 100 * ms
            h.observed = int(4) > 0
            for _ in 0..<int(6) { h.hangs.add(Int64(250 + int(4) * 100) * ms) }
            for _ in 0..<int(6) { h.briefs.add(Int64(100 + int(3) * 50) * ms) }
            h.watchdogThresholdMs = int(2) == 0 ? nil : Double(50 * (int(3) + 1))
            h.keepWorst((0..<int(120)).map { i in
                var d = HangDetail()
                d.durationMs = Double(100 + int(5) * 100)
                d.startMs = Double(i * 1000)
                d.thread = "main"
                d.trace = "trace-\(index)"
                return d
            })
            totals.hangs = h
        }
        let dimensions = ["appVersion": ["1.0", "1.1", "2.0"][int(3)], "device": ["pixel", "iphone"][int(2)], "os": ["14", "15"][int(2)]]
        return TraceSummary(path: "trace-\(index)", dimensions: dimensions, metadata: ["workload": "feed", "host": "h\(int(2))"],
                            refreshRatesHz: [60, 120], warnings: [], totals: totals)
    }

    static func encoded(_ fleet: FleetSummary) throws -> Data { try JSONOutput.encoder(pretty: false).encode(fleet) }

    /// For random triples: (a ∪ b) ∪ c = a ∪ (b ∪ c) and a ∪ b = b ∪ a, as values and to the byte in
    /// JSON; and a fleet merged in any order and any grouping of partial merges is the same.
    @Test func mergingIsAssociativeAndCommutative() throws {
        var random = SeededGenerator(seed: 0x5EED_F1EE7)
        for trial in 0..<8 {
            let traces = (0..<3).map { Self.randomSummary(&random, index: trial * 3 + $0) }
            let (a, b, c) = (FleetSummary(traces[0]), FleetSummary(traces[1]), FleetSummary(traces[2]))
            var ab = a; try ab.merge(b)
            var ba = b; try ba.merge(a)
            var abThenC = ab; try abThenC.merge(c)
            var bc = b; try bc.merge(c)
            var aThenBC = a; try aThenBC.merge(bc)
            #expect(ab == ba, "trial \(trial): a ∪ b != b ∪ a")
            #expect(try Self.encoded(ab) == Self.encoded(ba))
            #expect(abThenC == aThenBC, "trial \(trial): (a ∪ b) ∪ c != a ∪ (b ∪ c)")
            #expect(try Self.encoded(abThenC) == Self.encoded(aThenBC))
            #expect(abThenC.figures() == aThenBC.figures())
        }
        // Twenty traces: one left fold, against a shuffled balanced tree of partial merges.
        let many = (0..<20).map { FleetSummary(Self.randomSummary(&random, index: 1000 + $0)) }
        let fold = try #require(try FleetSummary.merged(many))
        var shuffled = many
        for i in stride(from: shuffled.count - 1, to: 0, by: -1) { shuffled.swapAt(i, Int(random.next() % UInt64(i + 1))) }
        var level = shuffled
        while level.count > 1 {
            level = try stride(from: 0, to: level.count, by: 2).map { i in
                guard i + 1 < level.count else { return level[i] }
                var pair = level[i]; try pair.merge(level[i + 1]); return pair
            }
        }
        #expect(level[0] == fold)
        #expect(fold.traces == 20)
        #expect(fold.pathDigest == FleetSummary.hex((1000..<1020).reduce(UInt64(0)) { $0 &+ FleetSummary.pathHash("trace-\($1)") }))
    }

    /// A merged sketch is the sketch of every value: exact while there are at most 4,096, the same
    /// histogram past that, whichever way the values were split.
    @Test func mergedSketchesAreTheSketchOfEveryValue() {
        var random = SeededGenerator(seed: 42)
        for trial in 0..<40 {
            let count = Int(random.next() % 9000)
            let values = (0..<count).map { _ in Int64(random.next() % 50_000_000) - 1_000_000 }
            var whole = QuantileSketch()
            values.forEach { whole.add($0) }
            var parts = [QuantileSketch](repeating: QuantileSketch(), count: 1 + Int(random.next() % 5))
            for value in values { parts[Int(random.next() % UInt64(parts.count))].add(value) }
            var merged = QuantileSketch()
            for part in parts.reversed() { merged.merge(part) }
            #expect(merged == whole, "trial \(trial): \(count) values in \(parts.count) parts")
            #expect(merged.quantiles([0.5, 0.9, 0.99]) == whole.quantiles([0.5, 0.9, 0.99]))
            #expect(merged.relativeError == (count > QuantileSketch.exactLimit ? QuantileSketch.histogramRelativeError : 0))
        }
    }

    /// A summary reads back equal from its JSON; what is not a summary this hitch reads is one line.
    @Test func summariesRoundTripAndDamageIsRefused() throws {
        var random = SeededGenerator(seed: 7)
        let summary = Self.randomSummary(&random, index: 1)
        let data = try JSONOutput.encoder(pretty: false).encode(summary)
        guard case .trace(let back) = try SummaryFile.decode(data, name: "s.json") else { Issue.record("not read as a trace summary"); return }
        #expect(back == summary)
        var fleet = FleetSummary(summary)
        try fleet.merge(FleetSummary(Self.randomSummary(&random, index: 2)))
        guard case .fleet(let fleetBack) = try SummaryFile.decode(try Self.encoded(fleet), name: "f.json") else { Issue.record("not read as a fleet"); return }
        #expect(fleetBack == fleet)

        func refusal(_ text: String) -> String {
            do { _ = try SummaryFile.decode(Data(text.utf8), name: "x.json"); return "" } catch { return error.description }
        }
        #expect(refusal("[1, 2]").contains("not a summary"))
        #expect(refusal(#"{"format": "hitch-trace-summary", "version": 9}"#).contains("newer than this hitch reads"))
        #expect(refusal(#"{"format": "something-else", "version": 1}"#).contains("not hitch-trace-summary"))
        let text = String(decoding: data, as: UTF8.self)
        // A version 1 summary (no hangs) is read as it is, and a version 2 one (no hangs by type).
        #expect(text.contains(#""version":3"#) && !text.contains(#""hangs":"#))
        guard case .trace(let versionOne) = try SummaryFile.decode(Data(text.replacingOccurrences(of: #""version":3"#, with: #""version":1"#).utf8), name: "v1.json")
        else { Issue.record("version 1 not read"); return }
        #expect(versionOne.version == 1 && versionOne.totals == summary.totals)
        guard case .trace(let versionTwo) = try SummaryFile.decode(Data(text.replacingOccurrences(of: #""version":3"#, with: #""version":2"#).utf8), name: "v2.json")
        else { Issue.record("version 2 not read"); return }
        #expect(versionTwo.version == 2 && versionTwo.totals == summary.totals)
        let damaged = text.replacingOccurrences(of: #""count":"#, with: #""count":1"#)
        #expect(refusal(damaged).contains("damaged hitch-trace-summary"))
        // Fleets grouped differently, or judged at other rates, do not merge.
        var other = FleetSummary(summary, groupings: [["device"]])
        #expect(throws: SummaryError.self) { try other.merge(FleetSummary(summary)) }
    }

    /// The schema names every cause a summary's `byCause` can hold: a cause added to `HitchCause`
    /// that the schema lacks would make valid summaries fail validation.
    @Test func theSchemaListsEveryCause() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let schema = try String(contentsOf: root.appendingPathComponent("docs/summary.schema.json"), encoding: .utf8)
        let line = try #require(schema.split(separator: "\n").first { $0.contains("\"propertyNames\"") && $0.contains("appWork") })
        let listed = line.split(separator: "[").last!.split(separator: "]").first!.split(separator: ",")
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }
        #expect(listed == HitchCause.allCases.map(\.rawValue))
    }
}
