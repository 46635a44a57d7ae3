import Foundation
import Testing
import HitchTestSupport
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
            if let error = expectOneLineError(BudgetError.self, for: text, contains: expected, { _ = try BudgetFile.parse(Data(text.utf8), path: "b.json") }) {
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

    @Test func booleansAreNotNumbersButZeroIs() throws {
        #expect(throws: BudgetError.self) {
            try BudgetFile.parse(Data("{\"budgets\": [{\"metric\": \"hitches.120.hitchCount\", \"max\": true}]}".utf8), path: "b")
        }
        let ok = try BudgetFile.parse(Data("{\"budgets\": [{\"metric\": \"hitches.120.hitchCount\", \"max\": 0}]}".utf8), path: "b")
        #expect(ok.first?.max == 0)
    }
}
