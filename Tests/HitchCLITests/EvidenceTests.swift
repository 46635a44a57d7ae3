import Foundation
import HitchAnalysis
import HitchReader
import Testing

// No evidence is not a pass: a gate (check, diff, history add) refuses a trace that recorded too
// little or was cut short, each analysis says what it stands on, and small samples are marked.

private let naive = HitchCLI.trace("feed-naive-120hz.fxt")
private let tuned = HitchCLI.trace("feed-tuned-120hz.fxt")
private let llm = HitchCLI.trace("llm-q4_0-120hz.fxt")

/// The first `bytes` of a bundled trace, as a crash or a cut copy leaves it.
private func cutCopy(of path: String, bytes: Int, into dir: String, name: String) throws -> String {
    let data = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(bytes)
    let out = dir + "/" + name
    try data.write(to: URL(fileURLWithPath: out))
    return out
}

private func budgetFile(in dir: String, _ json: String) throws -> String {
    let path = dir + "/budgets.json"
    try json.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

private let ratioBudget = #"{"budgets": [{"metric": "hitches.120.hitchTimeRatioMsPerS", "max": 10}]}"#

@Suite struct EvidenceGateTests {
    @Test func aTraceCutShortIsRefusedByEveryGateAndWarnedByAnalyze() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tiny = try cutCopy(of: naive, bytes: 100, into: dir, name: "tiny.fxt")
        let half = try cutCopy(of: naive, bytes: 1_000_001, into: dir, name: "half.fxt")
        let budgets = try budgetFile(in: dir, ratioBudget)
        for trace in [tiny, half] {
            let check = try HitchCLI.run(["check", trace, "--budget", budgets])
            #expect(check.status == 2, "\(check.stdout)")
            #expect(check.stderr.split(separator: "\n").count == 1 && check.stderr.contains("cut short") && check.stderr.contains("--allow-cut-short"), "\(check.stderr)")
            let diff = try HitchCLI.run(["diff", naive, trace])
            #expect(diff.status == 2 && diff.stderr.contains("cut short"), "\(diff.stderr)")
            let add = try HitchCLI.run(["history", "add", trace, "--commit", "abc", "--db", dir + "/h.sqlite"])
            #expect(add.status == 2 && add.stderr.contains("cut short"), "\(add.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/h.sqlite"), "a refused run must not create the database")
            // analyze reports what it has, and says so on stderr, not only in its last stdout line.
            let analyze = try HitchCLI.run(["analyze", trace])
            #expect(analyze.status == 0)
            #expect(analyze.stderr.contains("warning") && analyze.stderr.contains("cut short"), "\(analyze.stderr)")
        }
        // Opting in judges what the cut trace has.
        let allowed = try HitchCLI.run(["check", half, "--budget", budgets, "--allow-cut-short"])
        #expect(allowed.status == 1, "\(allowed.stderr)")   // the naive half is over budget
    }

    @Test func anEmptyTraceIsUngradedAndNotAPass() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tiny = try cutCopy(of: naive, bytes: 100, into: dir, name: "tiny.fxt")
        let json = try HitchCLI.run(["analyze", tiny, "--format", "json"])
        let analysis = try JSONDecoder().decode(Analysis.self, from: Data(json.stdout.utf8))
        #expect(analysis.evidence.framesJudged == 0 && !analysis.evidence.endedCleanly && analysis.evidence.runsCutShort == 1)
        #expect(analysis.hitches["120"]?.verdict == .ungraded && analysis.recorded.verdict == .ungraded)
        #expect(analysis.hitches["120"]?.organizerScale.grade == .ungraded)
    }

    @Test func aTraceWithoutFramesIsTooLittleUnlessTheMinimumIsLowered() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try HitchCLI.syntheticTrace(at: dir + "/none.fxt", frames: 0)
        try HitchCLI.syntheticTrace(at: dir + "/some.fxt", frames: 300)
        let budgets = try budgetFile(in: dir, #"{"budgets": [{"metric": "droppedEvents", "max": 0}]}"#)
        let refused = try HitchCLI.run(["check", "none.fxt", "--budget", budgets], in: dir)
        #expect(refused.status == 2 && refused.stderr.contains("no frames") && refused.stderr.contains("--min-frames"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(try HitchCLI.run(["check", "none.fxt", "--budget", budgets, "--min-frames", "0"], in: dir).status == 0)
        let diff = try HitchCLI.run(["diff", "some.fxt", "none.fxt"], in: dir)
        #expect(diff.status == 2 && diff.stderr.contains("no frames"), "\(diff.stderr)")
        let tooFew = try HitchCLI.run(["check", "some.fxt", "--budget", budgets, "--min-frames", "1000"], in: dir)
        #expect(tooFew.status == 2 && tooFew.stderr.contains("fewer than --min-frames 1000"), "\(tooFew.stderr)")
        #expect(try HitchCLI.run(["check", "some.fxt", "--budget", budgets], in: dir).status == 0)
    }

    @Test func anEmptyChromeImportIsAnError() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #"{"foo":1}"#.write(toFile: dir + "/foo.json", atomically: true, encoding: .utf8)
        let r = try HitchCLI.run(["import", "chrome", "foo.json", "-o", "foo.fxt"], in: dir)
        #expect(r.status == 2 && r.stderr.contains("no trace events"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/foo.fxt"))
    }

    @Test func everyAnalysisSaysWhatItStandsOn() throws {
        let text = try HitchCLI.run(["analyze", tuned])
        #expect(text.stdout.contains("evidence: ") && text.stdout.contains("frames judged over") && (text.stdout.contains("ended on a whole record") || text.stdout.contains("ended with its end-of-recording marker")))
        let markdown = try HitchCLI.run(["analyze", tuned, "--format", "markdown"])
        #expect(markdown.stdout.contains("Evidence: "))
        let json = try HitchCLI.run(["analyze", tuned, "--format", "json"])
        let analysis = try JSONDecoder().decode(Analysis.self, from: Data(json.stdout.utf8))
        #expect(analysis.evidence.framesJudged == analysis.recorded.frameCount && analysis.evidence.framesJudged > 1000)
        #expect(analysis.evidence.endedCleanly && !analysis.evidence.fewFrames && analysis.evidence.eventCount == analysis.eventCount)
        #expect(analysis.hitches["120"]?.frameTimeMs.count == analysis.hitches["120"]?.frameCount)
    }

    @Test func anEightFrameGradeSaysTheSampleIsSmall() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try HitchCLI.syntheticTrace(at: dir + "/eight.fxt", slowFrameOneIn: 4, frames: 8)
        let json = try HitchCLI.run(["analyze", "eight.fxt", "--format", "json"], in: dir)
        let analysis = try JSONDecoder().decode(Analysis.self, from: Data(json.stdout.utf8))
        #expect(analysis.recorded.frameCount <= 8 && analysis.recorded.frameCount > 0)
        #expect(analysis.recorded.fewFrames && analysis.evidence.fewFrames)
        let text = try HitchCLI.run(["analyze", "eight.fxt"], in: dir)
        #expect(text.stdout.contains("small sample"), "\(text.stdout)")
    }

    @Test func aBudgetOnAThinPercentileWarns() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let budgets = try budgetFile(in: dir, #"{"budgets": [{"metric": "stages[filter].p95Ms", "max": 1000}, {"metric": "hitches.120.frameTimeMs.p95", "max": 1000}]}"#)
        let r = try HitchCLI.run(["check", tuned, "--budget", budgets])
        #expect(r.status == 0)
        let warnings = r.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 1 && warnings[0].contains("stages[filter].p95Ms") && warnings[0].contains("fewer than the 100"), "\(r.stderr)")
        let json = try HitchCLI.run(["check", tuned, "--budget", budgets, "--format", "json"])
        #expect(json.stdout.contains("\"warning\""))
    }
}

@Suite struct ComparableRunsTests {
    @Test func aDiffOfDifferentWorkloadsIsRefused() throws {
        let r = try HitchCLI.run(["diff", naive, llm])
        #expect(r.status == 2 && r.stdout.isEmpty)
        #expect(r.stderr.contains("workload=feed") && r.stderr.contains("workload=llm") && r.stderr.contains("--cross-workload"), "\(r.stderr)")
        #expect(try HitchCLI.run(["diff", naive, llm, "--cross-workload"]).status != 2)
        // Variants of one workload are what diff is for.
        #expect(try HitchCLI.run(["diff", naive, tuned]).status == 0)
    }

    @Test func aDiffOfDifferentRecordedRatesIsRefusedUnlessAsked() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (name, periodNs) in [("a60.fxt", Int64(16_666_667)), ("b120.fxt", Int64(8_333_333))] {
            let writer = try TraceFileWriter(path: dir + "/" + name)
            var generator = SyntheticTrace(seed: 3)
            generator.periodNs = periodNs
            _ = generator.write(to: writer, targetBytes: .max, maxFrames: 200)
            _ = try writer.close()
        }
        let r = try HitchCLI.run(["diff", "a60.fxt", "b120.fxt"], in: dir)
        #expect(r.status == 2 && r.stderr.contains("60 Hz") && r.stderr.contains("120 Hz") && r.stderr.contains("--cross-rate"), "\(r.stderr)")
        #expect(try HitchCLI.run(["diff", "a60.fxt", "b120.fxt", "--cross-rate"], in: dir).status != 2)
    }
}

@Suite struct EvidenceRuleTests {
    @Test func percentilesNeedFiveValuesBeyondThem() {
        #expect(PercentileEvidence.minimumValues(forPercentile: 50) == 10)
        #expect(PercentileEvidence.minimumValues(forPercentile: 95) == 100)
        #expect(PercentileEvidence.minimumValues(forPercentile: 99) == 500)
        #expect(PercentileEvidence.level(ofKey: "p95Ms") == 95 && PercentileEvidence.level(ofKey: "p99") == 99)
        #expect(PercentileEvidence.level(ofKey: "peakGFLOPS") == nil && PercentileEvidence.level(ofKey: "p") == nil)
        #expect(PercentileEvidence.isThin(percentile: 95, count: 11) && !PercentileEvidence.isThin(percentile: 95, count: 100))
    }

    @Test func aFractionalRateIsOneKeyOfAPath() throws {
        let path = try MetricPath("hitches.59.94.hitchTimeRatioMsPerS")
        #expect(path.segments == [.key("hitches"), .key("59.94"), .key("hitchTimeRatioMsPerS")])
        let budgets = try BudgetFile.parse(Data(#"{"budgets": [{"metric": "hitches.59.94.hitchTimeRatioMsPerS", "max": 1}]}"#.utf8), path: "b.json")
        #expect(BudgetFile.refreshRates(in: budgets) == [59.94])
    }
}

@Suite struct OptionsThatDoWhatTheySayTests {
    @Test func theRecordedRateIsAlwaysJudged() throws {
        let r = try HitchCLI.run(["analyze", tuned, "--refresh", "90", "--format", "json"])
        let analysis = try JSONDecoder().decode(Analysis.self, from: Data(r.stdout.utf8))
        #expect(analysis.hitches["90"]?.source == .replay)
        #expect(analysis.hitches["120"]?.source == .recorded && analysis.hitches["120"] == {
            var recorded = analysis.recorded; recorded.periodMs = 1000.0 / 120; return recorded
        }())
    }

    @Test func anyRateRefreshAcceptsCanBeBudgeted() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let budgets = try budgetFile(in: dir, #"{"budgets": [{"metric": "hitches.59.94.hitchTimeRatioMsPerS", "max": 1000}]}"#)
        let r = try HitchCLI.run(["check", tuned, "--budget", budgets])
        #expect(r.status == 0 && r.stdout.contains("hitches.59.94.hitchTimeRatioMsPerS = "), "\(r.stdout) \(r.stderr)")
    }

    @Test func jsonFormatErrorsAreJSONOnStandardError() throws {
        for arguments in [["analyze", "no-such.fxt", "--format", "json"], ["diff", naive, llm, "--format=json"]] {
            let r = try HitchCLI.run(arguments)
            #expect(r.status == 2 && r.stdout.isEmpty)
            let object = try JSONSerialization.jsonObject(with: Data(r.stderr.utf8)) as? [String: String]
            #expect(object?["error"]?.isEmpty == false, "\(r.stderr)")
        }
        #expect(try HitchCLI.run(["analyze", "no-such.fxt"]).stderr.hasPrefix("hitch: error: "))
    }

    @Test func budgetPresetsSizeAsPublished() throws {
        let r = try HitchCLI.run(["budget", "--params", "1B", "--weights", "q4_0"])
        #expect(r.status == 0 && r.stdout.contains("1.24 B parameters"), "\(r.stdout)")
        let three = try HitchCLI.run(["budget", "--params", "3B", "--weights", "q4_0"])
        #expect(three.stdout.contains("3.21 B parameters"), "\(three.stdout)")
    }
}

@Suite struct OutputFolderTests {
    @Test func everyCommandCreatesAMissingOutputFolder() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let budgets = try budgetFile(in: dir, ratioBudget)
        let runs: [[String]] = [
            ["analyze", tuned, "-o", dir + "/a/analysis.txt"],
            ["check", tuned, "--budget", budgets, "--format", "junit", "-o", dir + "/b/budgets.xml"],
            ["diff", naive, tuned, "-o", dir + "/c/diff.txt"],
            ["export", tuned, "--format", "chrome", "-o", dir + "/d/trace.json"],
            ["report", tuned, "-o", dir + "/e/report.html"],
        ]
        for arguments in runs {
            let r = try HitchCLI.run(arguments)
            #expect(r.status != 2, "\(arguments): \(r.stderr)")
            #expect(FileManager.default.fileExists(atPath: arguments.last!), "\(arguments)")
        }
    }
}
