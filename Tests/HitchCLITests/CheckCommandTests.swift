import Foundation
import Testing

/// `hitch check`: a budget on a figure the trace cannot give is an error naming the closest ones,
/// never a pass; optional budgets are skipped and say so.
@Suite struct CheckCommandTests {
    func check(_ budgets: String, _ extra: [String] = []) throws -> HitchCLI.Result {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try budgets.write(toFile: dir + "/budgets.json", atomically: true, encoding: .utf8)
        return try HitchCLI.run(["check", tuned, "--budget", dir + "/budgets.json"] + extra)
    }

    @Test func unknownFiguresAreErrorsWithTheClosestNames() throws {
        let stage = try check(#"{"budgets":[{"metric":"stages[filtr].p95Ms","max":4}]}"#)
        #expect(stage.status == 2)
        #expect(stage.stderr.contains("stages[filter].p95Ms"), "\(stage.stderr)")
        let view = try check(#"{"budgets":[{"metric":"views[FeedRoww].maxMs","max":4}]}"#)
        #expect(view.status == 2)
        #expect(view.stderr.contains("views[FeedRow].maxMs"), "\(view.stderr)")
        let key = try check(#"{"budgets":[{"metric":"hitches.120.hitchTimeRatioMsPerSS","max":4}]}"#)
        #expect(key.status == 2)
        // (The next closest, `appHitchTimeRatioMsPerS`, may follow it after a comma.)
        #expect(key.stderr.contains("hitches.120.hitchTimeRatioMsPerS;") || key.stderr.contains("hitches.120.hitchTimeRatioMsPerS ")
                || key.stderr.contains("hitches.120.hitchTimeRatioMsPerS,"), "\(key.stderr)")
    }

    @Test func aRateNamedInABudgetIsAnalyzed() throws {
        let r = try check(#"{"budgets":[{"metric":"hitches.90.hitchTimeRatioMsPerS","max":1000}]}"#, ["--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\"status\" : \"passed\""))
        #expect(r.stdout.contains("\"actual\""))
    }

    @Test func anEmptyBudgetFileIsAnError() throws {
        let r = try check(#"{"budgets":[]}"#)
        #expect(r.status == 2)
        #expect(r.stderr.contains("empty"))
    }

    @Test func optionalBudgetsAreSkippedAndSaySo() throws {
        let r = try check(#"{"budgets":[{"metric":"decode.tokensPerSecond","min":20,"optional":true},{"metric":"hitches.120.hitchCount","max":100}]}"#,
                          ["--format", "junit"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("<skipped"))
        #expect(r.stdout.contains("skipped=\"1\""))
        let required = try check(#"{"budgets":[{"metric":"decode.tokensPerSecond","min":20}]}"#)
        #expect(required.status == 2, "a required budget on a figure the trace lacks never passes")
    }

    @Test func jsonHoldsTheBudgetsOnlyAndHTMLIsRefused() throws {
        // A budget the trace meets whatever its recording (this test is about the output's shape).
        let r = try check(#"{"budgets":[{"metric":"hitches.120.hitchTimeRatioMsPerS","max":1000}]}"#, ["--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.utf8.count < 2000, "\(r.stdout.utf8.count) bytes")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["budgets", "traces", "passed", "failed", "skipped"])
        let html = try check(#"{"budgets":[{"metric":"hitches.120.hitchTimeRatioMsPerS","max":5}]}"#, ["--format", "html"])
        #expect(html.status == 2)
        #expect(html.stderr.contains("hitch report"))
    }
}
