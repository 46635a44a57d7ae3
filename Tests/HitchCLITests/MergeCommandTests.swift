import Foundation
import Testing

/// `hitch summarize` and `hitch merge` run as a user runs them (docs/FLEET.md).
@Suite struct MergeCommandTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Hitch figures keyed by rate, less the worst window's run index (runs in one analysis, traces' own
    /// runs in a summary).
    static func hitches(_ analysis: [String: Any]) throws -> NSDictionary {
        var hitches = try #require(analysis["hitches"] as? [String: Any])
        for (key, value) in hitches {
            var figures = try #require(value as? [String: Any])
            var window = try #require(figures["worstWindow"] as? [String: Any])
            window["run"] = 0
            figures["worstWindow"] = window
            hitches[key] = figures
        }
        return hitches as NSDictionary
    }

    /// Two traces summarized and merged give the figures `hitch analyze` gives for both as runs; the
    /// merged state merged with a third gives the figures of all three merged at once, to the byte.
    @Test func mergedSummariesMatchAnalyzeAndMergeAgain() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (seed, slow) in [(5, 97), (6, 48), (7, 97)] as [(UInt64, Int64)] {
            try HitchCLI.syntheticTrace(at: "\(dir)/t\(seed).fxt", seed: seed, slowFrameOneIn: slow, frames: 900)
        }
        let summarized = try HitchCLI.run(["summarize", "\(dir)/t5.fxt", "\(dir)/t6.fxt", "\(dir)/t7.fxt", "-o", "\(dir)/s"])
        #expect(summarized.status == 0, "\(summarized.stderr)")
        let merged = try HitchCLI.run(["merge", "\(dir)/s/t5.summary.json", "\(dir)/s/t6.summary.json", "--format", "json"])
        let analyzed = try HitchCLI.run(["analyze", "\(dir)/t5.fxt", "\(dir)/t6.fxt", "--format", "json"])
        #expect(merged.status == 0 && analyzed.status == 0, "\(merged.stderr) \(analyzed.stderr)")
        let fleet = try #require(try Self.json(merged.stdout)["fleet"] as? [String: Any])
        #expect(try Self.hitches(fleet) == Self.hitches(try Self.json(analyzed.stdout)))
        #expect((try Self.json(merged.stdout)["traces"] as? Int) == 2)

        let state = try HitchCLI.run(["merge", "\(dir)/s/t6.summary.json", "\(dir)/s/t5.summary.json", "--format", "state", "-o", "\(dir)/part.json"])
        #expect(state.status == 0, "\(state.stderr)")
        let twoSteps = try HitchCLI.run(["merge", "\(dir)/s/t7.summary.json", "\(dir)/part.json", "--format", "json"])
        let atOnce = try HitchCLI.run(["merge", "\(dir)/s", "--format", "json"])
        #expect(twoSteps.status == 0 && atOnce.status == 0)
        #expect(twoSteps.stdout == atOnce.stdout)
        let html = try HitchCLI.run(["merge", "\(dir)/s", "--format", "html"])
        #expect(html.stdout.contains("Content-Security-Policy") && html.stdout.contains("Worst traces"))
    }

    /// A trace that cannot be read is one line naming it; the others are summarized; exit 2.
    @Test func aTraceThatCannotBeReadIsReportedAndTheOthersSummarized() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try HitchCLI.syntheticTrace(at: "\(dir)/good.fxt", frames: 120)
        try Data("not a trace at all\n".utf8).write(to: URL(fileURLWithPath: "\(dir)/bad.fxt"))
        let result = try HitchCLI.run(["summarize", "\(dir)/bad.fxt", "\(dir)/good.fxt", "\(dir)/missing.fxt", "-o", "\(dir)/s"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("bad.fxt") && result.stderr.contains("missing.fxt") && result.stderr.contains("2 of 3 traces could not be summarized"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/s") == ["good.summary.json"])
        let alone = try HitchCLI.run(["summarize", "\(dir)/good.fxt", "--dimension", "appVersion=9.9", "--as", "s3://bucket/good.fxt"])
        let summary = try Self.json(alone.stdout)
        #expect(summary["path"] as? String == "s3://bucket/good.fxt")
        #expect((summary["dimensions"] as? [String: String])?["appVersion"] == "9.9")
        #expect(summary["format"] as? String == "hitch-trace-summary" && summary["version"] as? Int == 3)
    }

    /// What would count a trace twice, what is not a summary, and fleets grouped differently are
    /// refused in one line; options that store need --db.
    @Test func mergeRefusesWhatItCannotMergeExactly() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try HitchCLI.syntheticTrace(at: "\(dir)/a.fxt", frames: 120)
        _ = try HitchCLI.run(["summarize", "\(dir)/a.fxt", "-o", "\(dir)/a.summary.json"])
        try FileManager.default.copyItem(atPath: "\(dir)/a.summary.json", toPath: "\(dir)/copy.json")
        let twice = try HitchCLI.run(["merge", "\(dir)/a.summary.json", "\(dir)/copy.json"])
        #expect(twice.status == 2 && twice.stderr.contains("both summarize") && twice.stderr.contains("each trace counts once"))
        try Data("{\"traceEvents\": []}".utf8).write(to: URL(fileURLWithPath: "\(dir)/chrome.json"))
        let notSummary = try HitchCLI.run(["merge", "\(dir)/chrome.json"])
        #expect(notSummary.status == 2 && notSummary.stderr.contains("is not a summary"))
        _ = try HitchCLI.run(["merge", "\(dir)/a.summary.json", "--by", "device", "--format", "state", "-o", "\(dir)/by-device.json"])
        let grouped = try HitchCLI.run(["merge", "\(dir)/by-device.json", "--by", "os"])
        #expect(grouped.status == 2 && grouped.stderr.contains("grouped differently"))
        let badBy = try HitchCLI.run(["merge", "\(dir)/a.summary.json", "--by", "appVersion,"])
        #expect(badBy.status == 2 && badBy.stderr.contains("--by"))
        let noDB = try HitchCLI.run(["merge", "\(dir)/a.summary.json", "--commit", "abc"])
        #expect(noDB.status == 2 && noDB.stderr.contains("give --db"))
    }

    /// `--db` stores the fleet's figures as one run (SQLite here; PostgreSQL in scripts/check-fleet.sh),
    /// once: the same fleet again stores nothing.
    @Test func theFleetIsStoredOnceInTheHistory() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try HitchCLI.syntheticTrace(at: "\(dir)/a.fxt", seed: 3, slowFrameOneIn: 48, frames: 600)
        _ = try HitchCLI.run(["summarize", "\(dir)/a.fxt", "-o", "\(dir)/s/"])
        let db = "\(dir)/history.sqlite"
        let first = try HitchCLI.run(["merge", "\(dir)/s", "--format", "json", "--db", db, "--commit", "c0ffee"])
        #expect(first.status == 0 && first.stderr.contains("stored the fleet's figures"), "\(first.stderr)")
        let again = try HitchCLI.run(["merge", "\(dir)/s", "--db", db, "--commit", "c0ffee", "-o", "/dev/null"])
        #expect(again.stderr.contains("already stored"))
        let shown = try HitchCLI.run(["history", "show", "hitches.120.hitchTimeRatioMsPerS", "--branch", "fleet", "--db", db, "--format", "json"])
        let values = try #require(try Self.json(shown.stdout)["values"] as? [[String: Any]])
        let fleet = try #require(try Self.json(first.stdout)["fleet"] as? [String: Any])
        let ratio = try #require((fleet["hitches"] as? [String: Any])?["120"] as? [String: Any])["hitchTimeRatioMsPerS"] as? Double
        #expect(values.count == 1 && values[0]["value"] as? Double == ratio)
    }
}
