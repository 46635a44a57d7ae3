import Foundation
import Testing
import HitchTrace
@testable import HitchAnalysis

private let ms = TraceBuilder.ms

@Suite struct BudgetTests {
    func analysis() throws -> Analysis {
        var b = TraceBuilder()
        for id in UInt64(0)..<24 {
            b.frame(id, vsyncNs: Int64(id) * 8_333_333, periodNs: 8_333_333, workNs: id == 6 ? 9 * ms : ms)
        }
        b.stage("filter", on: b.main, from: 0, to: 3 * ms)
        return try b.analyze()
    }

    @Test func budgetsPassFailAndSkip() throws {
        let json = """
        {"budgets": [
          {"metric": "hitches.120.hitchTimeRatioMsPerS", "max": 5},
          {"metric": "hitches.60.hitchCount", "max": 0},
          {"metric": "stages[filter].selfMs", "max": 2, "name": "filter is fast"},
          {"metric": "decode.tokensPerSecond", "min": 20, "optional": true}
        ]}
        """
        let budgets = try BudgetFile.parse(Data(json.utf8), path: "b.json")
        let outcomes = try BudgetFile.evaluate(budgets, against: try analysis())
        #expect(outcomes.map(\.passed) == [false, true, false, true])
        #expect(outcomes[0].message.contains("> max 5"))
        #expect(outcomes[2].name == "filter is fast")
        #expect(outcomes[2].actual == 3)
        #expect(outcomes[3].actual == nil)            // no decode figures in this trace: the optional budget is skipped
        #expect(outcomes[3].status == .skipped)
    }

    @Test func badBudgetFilesFailWithOneLine() throws {
        let cases: [(String, String)] = [
            ("{not json", "not valid JSON"),
            ("[]", "\"budgets\" list"),
            ("{\"budgets\": [{\"metric\": \"hitches.120.noSuchFigure\", \"max\": 1}]}", "unknown metric"),
            ("{\"budgets\": [{\"metric\": \"stagez[filter].selfMs\", \"max\": 1}]}", "unknown metric"),
            ("{\"budgets\": [{\"metric\": \"hitches.120.hitchCount\", \"max\": \"five\"}]}", "must be a number"),
            ("{\"budgets\": [{\"metric\": \"hitches.120.hitchCount\"}]}", "needs \"max\" or \"min\""),
            ("{\"budgets\": [{\"metric\": \"hitches.120.hitchCount\", \"maxx\": 1}]}", "unknown key"),
            ("{\"budgets\": [{\"metric\": \"hitches.120.verdict\", \"max\": 1}]}", "unknown metric"),
            ("{\"budgets\": [{\"metric\": \"stages[filter\", \"max\": 1}]}", "unclosed"),
        ]
        for (text, expected) in cases {
            do {
                _ = try BudgetFile.parse(Data(text.utf8), path: "b.json")
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(expected), "\(error.description)")
                #expect(!error.description.contains("\n"))
                #expect(error.description.contains("b.json"))
            }
        }
        #expect(throws: BudgetError.self) { try BudgetFile.load(path: "/nonexistent/budget.json") }
    }

    @Test func jsonCarriesTheKeysCIScriptsRead() throws {
        let object = try #require(try analysis().jsonObject() as? [String: Any])
        let hitches = try #require(object["hitches"] as? [String: Any])
        let at120 = try #require(hitches["120"] as? [String: Any])
        for key in ["hitchTimeRatioMsPerS", "hitchCount", "frameCount", "longestHitchMs", "verdict"] { #expect(at120[key] != nil, "\(key)") }
        let stage = try #require((object["stages"] as? [[String: Any]])?.first)
        for key in ["name", "count", "totalMs", "selfMs", "p95Ms", "mainThreadShare"] { #expect(stage[key] != nil, "\(key)") }
        #expect(object["droppedEvents"] != nil)
        // Every documented path is known to the schema.
        for path in ["hitches.120.verdict", "views[FeedRow].longUpdates", "invalidations[0].count", "decode.tokensPerSecond",
                     "decode.bytesPerToken", "decode.bandwidthGBps", "decode.peakBandwidthGBps", "decode.utilization", "decode.ops[qkv].bandwidthGBps"] {
            let metric = try MetricPath(path)
            #expect(metric.isKnown() || path.hasSuffix("verdict"), "\(path)")
        }
        // Deterministic bytes.
        #expect(try analysis().jsonData() == analysis().jsonData())
    }
}

@Suite struct DiffTests {
    func run(stallMs: Int64, seed: Int64) throws -> Analysis {
        var b = TraceBuilder()
        for id in UInt64(0)..<60 {
            let jitter = (Int64(id) * 7919 + seed * 104_729) % 300_000
            b.frame(id, vsyncNs: Int64(id) * 8_333_333, periodNs: 8_333_333, workNs: (id % 20 == 5 ? stallMs * ms : ms) + jitter)
        }
        b.stage("filter", on: b.main, from: 0, to: (2 + stallMs) * ms + seed * 10_000)
        return try b.analyze()
    }

    @Test func regressionAcrossRepeatedRunsIsSignificant() throws {
        let base = try (0..<3).map { try run(stallMs: 1, seed: $0) }
        let worse = try (0..<3).map { try run(stallMs: 12, seed: $0) }
        let c = RunComparison.compare(base: base, new: worse, thresholdPercent: 5)
        let filter = try #require(c.changes.first { $0.metric == "stages[filter].mainThreadMs" })
        #expect(filter.isRegression)
        #expect((filter.pValue ?? 1) < 0.05)
        #expect(c.regressions.contains { $0.metric == "hitches.120.hitchTimeRatioMsPerS" })
        #expect(c.verdict.outcome == .worse)
        // The reverse direction is an improvement, and identical sides change nothing.
        #expect(RunComparison.compare(base: worse, new: base, thresholdPercent: 5).regressions.isEmpty)
        #expect(RunComparison.compare(base: base, new: base, thresholdPercent: 5).regressions.isEmpty)
    }

    /// Moving one stage off the main thread raises the others' shares of main-thread time; that is
    /// not a regression. The compared figure is each stage's own fraction on the main thread.
    @Test func movingAStageOffTheMainThreadIsAnImprovement() throws {
        func run(decodeOnMain: Bool) throws -> Analysis {
            var b = TraceBuilder()
            let worker = b.list.thread("worker")
            for id in UInt64(0)..<4 {
                let vsync = Int64(id) * 8_333_333
                b.stage("filter", on: b.main, from: vsync + ms / 4, to: vsync + ms)
                b.stage("decode", on: decodeOnMain ? b.main : worker, from: vsync + ms, to: vsync + 3 * ms)
                b.frame(id, vsyncNs: vsync, periodNs: 8_333_333, workNs: 4 * ms)
            }
            return try b.analyze()
        }
        let c = RunComparison.compare(base: [try run(decodeOnMain: true)], new: [try run(decodeOnMain: false)], thresholdPercent: 5)
        #expect(c.improvements.contains { $0.metric == "stages[decode].mainThreadMs" })
        #expect(!c.regressions.contains { $0.metric.hasPrefix("stages[filter]") }, "\(c.regressions.map(\.metric))")
    }

    @Test func noisyDifferencesAreNotSignificant() {
        let p = RunComparison.welchTTest([10, 12, 9, 11], [11, 10, 12, 9.5])
        #expect(p > 0.5)
        let q = RunComparison.welchTTest([10, 10.1, 9.9], [20, 20.2, 19.8])
        #expect(q < 0.001)
        // Known value (checked by numerical integration of the t density): t = -3.794, df = 4.613, p = 0.01476.
        let r = RunComparison.welchTTest([19.8, 20.4, 19.6, 17.8, 18.5, 18.9], [28.2, 26.6, 20.1, 23.3, 25.2])
        #expect(abs(r - 0.014758) < 0.0001)
    }
}

@Suite struct FileTests {
    @Test func syntheticTraceRoundTripsThroughTheFXTReader() throws {
        let path = NSTemporaryDirectory() + "hitch-analysis-test-\(getpid()).fxt"
        defer { unlink(path) }
        let writer = try TraceFileWriter(path: path)
        var generator = SyntheticTrace(seed: 3)
        let written = generator.write(to: writer, targetBytes: .max, maxFrames: 2000)
        _ = try writer.close()
        let a = try Analyzer.analyze(paths: [path])
        #expect(a.recorded.frameCount == written.frames)
        #expect(a.metadata["workload"] == "synthetic")
        #expect(a.hitches["120"]?.source == .recorded)
        #expect((a.hitches["120"]?.hitchCount ?? 0) > 0)
        #expect(a.stages.contains { $0.name == "filter" && $0.mainThreadShare > 0 })
        #expect(a.stages.first { $0.name == "image decode" }?.threads == ["worker"])
        #expect(a.invalidations.first?.source == "FeedModel.query")
        // Merging the same trace twice doubles counts and keeps the ratio.
        let twice = try Analyzer.analyze(paths: [path, path])
        #expect(twice.recorded.frameCount == 2 * written.frames)
        #expect(abs((twice.hitches["120"]?.hitchTimeRatioMsPerS ?? 0) - (a.hitches["120"]?.hitchTimeRatioMsPerS ?? 0)) < 1e-9)
    }

    @Test func unreadableTracesThrowOneLineErrors() throws {
        #expect(throws: TraceReadError.self) { try Analyzer.analyze(paths: ["/nonexistent/trace.fxt"]) }
        let path = NSTemporaryDirectory() + "hitch-analysis-garbage-\(getpid()).fxt"
        defer { unlink(path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data("this is not a trace at all".utf8)))
        do {
            _ = try Analyzer.analyze(paths: [path])
            Issue.record("garbage was accepted")
        } catch let error as TraceReadError {
            #expect(!error.description.contains("\n"))
            #expect(error.description.contains("byte"))
        }
    }
}

@Suite struct BudgetValueTests {
    @Test func booleansAreNotNumbersButZeroIs() throws {
        #expect(throws: BudgetError.self) {
            try BudgetFile.parse(Data("{\"budgets\": [{\"metric\": \"hitches.120.hitchCount\", \"max\": true}]}".utf8), path: "b")
        }
        let ok = try BudgetFile.parse(Data("{\"budgets\": [{\"metric\": \"hitches.120.hitchCount\", \"max\": 0}]}".utf8), path: "b")
        #expect(ok.first?.max == 0)
    }
}
