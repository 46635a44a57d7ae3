import Foundation
import Testing

// One suite per problem, each reproducing it through the built binary.

private let naive = HitchCLI.trace("feed-naive-120hz.fxt")
private let tuned = HitchCLI.trace("feed-tuned-120hz.fxt")
private let llm = HitchCLI.trace("llm-q4_0-120hz.fxt")

/// 1. `diff` called the fix a regression (totals not per frame, off-main work judged, views only in
/// the new run counted, no verdict).
@Suite struct DiffVerdictTests {
    @Test func theFixIsBetter() throws {
        let r = try HitchCLI.run(["diff", naive, tuned])
        #expect(r.status == 0, "\(r.stderr)")
        // The verdict leads with the 120 Hz hitch time ratio, which the fix lowers (figures vary with
        // each re-recording of Traces/, so the test reads them from the line).
        #expect(r.firstLine.hasPrefix("better: hitch time ratio at 120 Hz "), "\(r.firstLine)")
        let figures = r.firstLine.dropFirst("better: hitch time ratio at 120 Hz ".count)
            .split(separator: " ").prefix(3).map(String.init)
        if figures.count == 3, let before = Double(figures[0]), let after = Double(figures[2]) {
            #expect(figures[1] == "→" && after < before, "\(r.firstLine)")
        } else {
            Issue.record("no 'A → B' figures in \(r.firstLine)")
        }
        #expect(r.stdout.contains("Regressions (0)"))
        // Off-main and self-time figures are information; views of one side are listed apart.
        #expect(r.stdout.contains("Only in new"))
        // The threshold applies to everything: nothing is judged beyond 10000%.
        let huge = try HitchCLI.run(["diff", naive, tuned, "--threshold", "10000"])
        #expect(huge.status == 0)
        #expect(huge.firstLine.hasPrefix("no change"))
    }

    @Test func aTraceAgainstItselfIsNoChange() throws {
        let r = try HitchCLI.run(["diff", tuned, tuned])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.firstLine.hasPrefix("no change"), "\(r.firstLine)")
    }

    @Test func aPlantedRegressionFailsAndIsNamed() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try HitchCLI.syntheticTrace(at: dir + "/base.fxt", slowFrameOneIn: 97)
        try HitchCLI.syntheticTrace(at: dir + "/worse.fxt", slowFrameOneIn: 48)
        let r = try HitchCLI.run(["diff", "base.fxt", "worse.fxt", "--format", "markdown", "-o", "diff.md"], in: dir)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("hitch time ratio at 120 Hz"), "\(r.stderr)")
        let markdown = try String(contentsOfFile: dir + "/diff.md", encoding: .utf8)
        #expect(markdown.contains("**worse: hitch time ratio at 120 Hz"), "\(markdown)")
        // The reverse is a fix; JUnit marks the regressions as failures.
        #expect(try HitchCLI.run(["diff", "worse.fxt", "base.fxt"], in: dir).firstLine.hasPrefix("better:"))
        let junit = try HitchCLI.run(["diff", "base.fxt", "worse.fxt", "--format", "junit"], in: dir)
        #expect(junit.stdout.contains("<failure message=\"hitches.120.hitchTimeRatioMsPerS"))
        let json = try HitchCLI.run(["diff", "base.fxt", "worse.fxt", "--format", "json"], in: dir)
        #expect(json.stdout.contains("\"outcome\" : \"worse\""))
    }

    @Test func theHTMLComparisonOpensWithTheSameVerdict() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let diff = try HitchCLI.run(["diff", naive, tuned])
        #expect(try HitchCLI.run(["report", naive, tuned, "-o", dir + "/compare.html"]).status == 0)
        let html = try String(contentsOfFile: dir + "/compare.html", encoding: .utf8)
        #expect(diff.firstLine.hasPrefix("better: "))
        // The page holds the same line, escaped as HTML text (a stage name in quotes becomes &#39;).
        let escaped = diff.firstLine.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
        #expect(html.contains("<strong>" + escaped + "</strong>"), "\(diff.firstLine)")
    }
}

/// 2. `check` passed budgets it could not evaluate.
@Suite struct CheckTests {
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

/// 3. Outputs could destroy files.
@Suite struct OutputSafetyTests {
    @Test func anOutputThatIsAnInputIsRefused() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: tuned, toPath: dir + "/copy.fxt")
        let original = try Data(contentsOf: URL(fileURLWithPath: dir + "/copy.fxt"))
        let export = try HitchCLI.run(["export", "copy.fxt", "--format", "folded", "-o", "copy.fxt"], in: dir)
        #expect(export.status == 2)
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.fxt", withDestinationPath: "copy.fxt")
        let analyze = try HitchCLI.run(["analyze", "copy.fxt", "-o", "link.fxt"], in: dir)
        #expect(analyze.status == 2)
        #expect(analyze.stderr.contains("input"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/copy.fxt")) == original)
    }

    @Test func aFailedWriteRemovesOnlyItsTemporaryFile() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/full", withDestinationPath: "/dev/full")
        let r = try HitchCLI.run(["analyze", tuned, "-o", "full"], in: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("full"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/full")) == "/dev/full")
        // A failed write over a regular file leaves the old contents (the rename never happened).
        try "old".write(toFile: dir + "/report.txt", atomically: true, encoding: .utf8)
        #expect(try HitchCLI.run(["analyze", dir + "/missing.fxt", "-o", "report.txt"], in: dir).status == 2)
        #expect(try String(contentsOfFile: dir + "/report.txt", encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["full", "report.txt"])
    }

    @Test func dashIsStandardOutputAndDevicesAreWrittenInPlace() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try HitchCLI.run(["analyze", tuned, "-o", "-"], in: dir)
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("hitch analyze"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/-"))
        #expect(try HitchCLI.run(["analyze", tuned, "-o", "/dev/null"]).status == 0)
        var status = stat()
        #expect(stat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)
        // A new file is written whole, with the usual permissions.
        #expect(try HitchCLI.run(["analyze", tuned, "--format", "json", "-o", dir + "/a.json"]).status == 0)
        #expect(stat(dir + "/a.json", &status) == 0 && status.st_mode & 0o777 != 0o600)
        #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/a.json"))) is [String: Any])
    }
}

/// 4 and 5. One spelling and one parser per setting; no input silently ignored or replaced.
@Suite struct OptionTests {
    @Test func sizesParseOneWayEverywhere() throws {
        let bare = try HitchCLI.run(["analyze", llm, "--device-budget", "1.2"])
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("1.2GB"))
        for size in ["1.2GB", "1.2G", "1200M", "1200MB", "1144MiB"] {
            #expect(try HitchCLI.run(["analyze", llm, "--device-budget", size, "-o", "/dev/null"]).status == 0, "\(size)")
            #expect(try HitchCLI.run(["budget", "--device-budget", size]).status == 0, "\(size)")
        }
        let old = try HitchCLI.run(["report", llm, "--device-budget-mb", "1200", "-o", "/dev/null"])
        #expect(old.status == 2)
        #expect(old.stderr.contains("--device-budget 1200MB"))
    }

    /// `hitch bench import` measures every format in one run, beside the FXT reader (small inputs:
    /// the figures are the benchmark's, not the test's).
    @Test func benchImportReportsEveryFormatBesideTheReader() throws {
        let r = try HitchCLI.run(["bench", "import", "--size", "512KB", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: [String: Double]]
        #expect(Set(object?.keys.map { $0 } ?? []) == ["fxt", "framestats", "perfetto", "xctrace"])
        for (format, figures) in object ?? [:] {
            #expect((figures["megabytesPerSecond"] ?? 0) > 0 && (figures["frames"] ?? 0) > 0, "\(format)")
        }
        #expect(object?["fxt"]?["toReaderRatio"] == 1)
        #expect(try HitchCLI.run(["bench", "import", "--formats", "pdf"]).status == 2)
    }

    @Test func extraArgumentsAndOutOfRangeParametersAreErrors() throws {
        let budget = try HitchCLI.run(["budget", "1B"])
        #expect(budget.status == 2)
        #expect(budget.stderr.contains("'1B'"))
        let params = try HitchCLI.run(["budget", "--params", "70B"])
        #expect(params.status == 2)
        #expect(params.stderr.contains("20B"))
        #expect(try HitchCLI.run(["bench", "analyze", "extra"]).status == 2)
        #expect(try HitchCLI.run(["record", "llm", "-o", "/dev/null", "stray"]).status == 2)
        let from = try HitchCLI.run(["export", tuned, "--format", "chrome", "--from", "1", "-o", "/dev/null"])
        #expect(from.status == 2)
        #expect(from.stderr.contains("--from"))
        let flag = try HitchCLI.run(["analyze", tuned, "--merge=yes"])
        #expect(flag.status == 2)
    }
}

/// 6. `analyze A B` merged anything.
@Suite struct MergeTests {
    @Test func onlyRunsOfOneWorkloadMerge() throws {
        let different = try HitchCLI.run(["analyze", naive, tuned])
        #expect(different.status == 2)
        #expect(different.stderr.contains("--merge"))
        #expect(try HitchCLI.run(["analyze", tuned, llm]).status == 2)
        let twice = try HitchCLI.run(["analyze", tuned, tuned])
        #expect(twice.status == 2)
        #expect(twice.stderr.contains("same file"))
        let merged = try HitchCLI.run(["analyze", naive, tuned, "--merge"])
        #expect(merged.status == 0)
        #expect(merged.firstLine.contains(naive) && merged.firstLine.contains(tuned), "\(merged.firstLine)")
    }

    @Test func runsOfOneWorkloadMergeWithoutAsking() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try HitchCLI.syntheticTrace(at: dir + "/a.fxt", seed: 1, frames: 300)
        try HitchCLI.syntheticTrace(at: dir + "/b.fxt", seed: 2, frames: 300)
        let r = try HitchCLI.run(["analyze", "a.fxt", "b.fxt"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.firstLine.contains("a.fxt, b.fxt"))
    }
}

/// 7. Errors name the file and say what to do.
@Suite struct ErrorTests {
    @Test func errorsNameTheFileAndTheNextStep() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try HitchCLI.run(["export", tuned, "--format", "chrome", "-o", dir + "/t.json"]).status == 0)
        // Chrome JSON is imported where a trace is taken, and analyzes as the trace it came from.
        let fromJSON = try HitchCLI.run(["analyze", dir + "/t.json", "--format", "json"])
        let fromFXT = try HitchCLI.run(["analyze", tuned, "--format", "json"])
        #expect(fromJSON.status == 0 && fromFXT.status == 0)
        let hitches = { (text: String) throws -> String in
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            return String(describing: (object?["hitches"] as? [String: Any])?.sorted { $0.key < $1.key }.map(\.key) ?? [])
                + String(describing: ((object?["hitches"] as? [String: Any])?["120"] as? [String: Any])?["totalHitchMs"] ?? "none")
        }
        #expect(try hitches(fromJSON.stdout) == hitches(fromFXT.stdout))
        let forced = try HitchCLI.run(["analyze", tuned, "--input-format", "framestats"])
        #expect(forced.status == 2)
        #expect(forced.stderr.contains("\(tuned): line 1: a ---PROFILEDATA--- block"), "\(forced.stderr)")
        let check = try HitchCLI.run(["check", "--budget", dir + "/none.json", dir + "/t.json"])
        #expect(check.status == 2 && check.stderr.contains("none.json"), "\(check.stderr)")
        let directory = try HitchCLI.run(["import", "chrome", dir, "-o", dir + "/x.fxt"])
        #expect(directory.status == 2)
        #expect(directory.stderr.contains("is a directory"))
        let analyzeDirectory = try HitchCLI.run(["analyze", dir])
        #expect(analyzeDirectory.stderr.contains("is a directory"))
        let proc = try HitchCLI.run(["report", tuned, "-o", "/proc/x.html"])
        #expect(proc.status == 2)
        #expect(proc.stderr.contains("/proc/x.html") && proc.stderr.contains("cannot create a file in '/proc'"), "\(proc.stderr)")
        let missing = try HitchCLI.run(["analyze", dir + "/missing.fxt"])
        #expect(missing.stderr.contains("missing.fxt"))
    }
}

/// 8. swift-argument-parser's conventions.
@Suite struct ConventionTests {
    @Test func versionHelpAndUsage() throws {
        let version = try HitchCLI.run(["--version"])
        #expect(version.status == 0)
        #expect(!version.stdout.isEmpty)
        let help = try HitchCLI.run(["help", "analyze"])
        #expect(help.stdout.hasPrefix("USAGE: hitch analyze"))
        #expect(try HitchCLI.run(["help", "record", "feed"]).stdout.hasPrefix("USAGE: hitch record feed"))
        let bare = try HitchCLI.run([])
        #expect(bare.status == 2)
        #expect(bare.stdout.isEmpty)
        #expect(bare.stderr.contains("USAGE: hitch <subcommand>"))
    }

    @Test func didYouMean() throws {
        let subcommand = try HitchCLI.run(["anlyze", tuned])
        #expect(subcommand.status == 2)
        #expect(subcommand.stderr.contains("did you mean 'analyze'?"))
        let option = try HitchCLI.run(["analyze", tuned, "--refrsh", "60"])
        #expect(option.status == 2)
        #expect(option.stderr.contains("did you mean '--refresh'?"), "\(option.stderr)")
        #expect(try HitchCLI.run(["bench", "analyse"]).stderr.contains("did you mean 'analyze'?"))
    }

    @Test func everySubcommandsHelpHasTheSections() throws {
        let commands = ["info", "analyze", "check", "diff", "report", "export", "import", "record", "bench", "budget", "demo",
                        "generate", "record feed", "record llm", "bench record", "bench sample", "bench analyze", "bench decode"]
        for command in commands {
            let r = try HitchCLI.run(command.split(separator: " ").map(String.init) + ["--help"])
            #expect(r.status == 0, "\(command)")
            for section in ["USAGE: hitch " + command, "OPTIONS:", "EXAMPLE", "-h, --help"] {
                #expect(r.stdout.contains(section), "\(command) --help lacks \(section)")
            }
            let takesArguments = ["info", "analyze", "check", "diff", "report", "export", "import"].contains(command)
            if takesArguments { #expect(r.stdout.contains("ARGUMENTS:"), "\(command) --help lacks ARGUMENTS:") }
        }
    }
}

@Suite struct GenerateCommandTests {
    /// `bench decode --write-gguf` writes a small synthetic model; `generate` runs it from the file.
    @Test func aWrittenModelGeneratesItsTokensAsJSON() throws {
        let directory = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let model = directory + "/tiny.gguf"
        let shape = ["--dim", "64", "--layers", "1", "--heads", "4", "--kv-heads", "2", "--ffn", "128", "--vocab", "300", "--context", "64"]
        let write = try HitchCLI.run(["bench", "decode", "--write-gguf", model, "--weights", "q4_1"] + shape)
        #expect(write.status == 0, "\(write.stderr)")
        let run = try HitchCLI.run(["generate", "--model", model, "--prompt", "abc", "--tokens", "5", "--threads", "1", "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        struct Report: Decodable { var promptTokens: [Int]; var tokens: [Int]; var margins: [Float] }
        let report = try JSONDecoder().decode(Report.self, from: Data(run.stdout.utf8))
        // The byte-level vocabulary: "abc" is three byte tokens (the bytes' own ids).
        #expect(report.promptTokens == [97, 98, 99])
        #expect(report.tokens.count == 5 && report.tokens.allSatisfy { (0..<300).contains($0) })
        #expect(report.margins.count == 5 && report.margins.allSatisfy { $0 >= 0 })
        // Greedy is deterministic (the ids and gaps; the tokens/s is a measurement).
        let again = try HitchCLI.run(["generate", "--model", model, "--prompt", "abc", "--tokens", "5", "--threads", "2", "--format", "json"])
        let second = try JSONDecoder().decode(Report.self, from: Data(again.stdout.utf8))
        #expect(second.tokens == report.tokens && second.margins == report.margins)
    }

    @Test func badInputIsOneLineAndExitTwo() throws {
        let missing = try HitchCLI.run(["generate", "--prompt", "x"])
        #expect(missing.status == 2 && missing.stderr.contains("--model"))
        let notGGUF = try HitchCLI.run(["generate", "--model", HitchCLI.root + "/README.md", "--prompt", "x"])
        #expect(notGGUF.status == 2 && notGGUF.stderr.contains("not a GGUF file"))
        #expect(notGGUF.stderr.split(separator: "\n").count == 1)
        // q3_K is a ggml type the engine does not decode: refused, naming the flag.
        let type = try HitchCLI.run(["bench", "decode", "--write-gguf", "/tmp/x.gguf", "--weights", "q3_K"])
        #expect(type.status == 2 && type.stderr.contains("--weights"))
    }
}

/// 9. `--process` picks the app of a Perfetto trace with several in every command that takes the
/// trace directly, as in `hitch import perfetto`; without it, every one refuses with the same line.
@Suite struct ProcessOptionTests {
    static let trace = HitchCLI.root + "/Tests/Fixtures/import/perfetto-sched-60hz.pftrace"

    @Test func everyAnalysisCommandTakesProcess() throws {
        let truth = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath:
            HitchCLI.root + "/Tests/Fixtures/import/perfetto-sched-60hz.truth.json"))) as? [String: Any]
        let app = try #require((truth?["app"] as? [String: Any])?["name"] as? String)
        let other = try #require((truth?["otherApp"] as? [String: Any])?["pid"] as? Int)
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let imported = try HitchCLI.run(["import", "perfetto", Self.trace, "-o", dir + "/t.fxt"])
        #expect(imported.status == 2)
        let refusal = imported.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!refusal.contains("\n") && refusal.contains("--process") && refusal.contains(app), "\(refusal)")
        for command in [["analyze"], ["report", "-o", dir + "/r.html"], ["diff", Self.trace]] {
            let refused = try HitchCLI.run(command + [Self.trace])
            #expect(refused.status == 2, "\(command)")
            #expect(refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == refusal, "\(command): \(refused.stderr)")
        }

        let analyzed = try HitchCLI.run(["analyze", Self.trace, "--process", app, "--format", "json"])
        #expect(analyzed.status == 0, "\(analyzed.stderr)")
        let byPid = try HitchCLI.run(["analyze", Self.trace, "--process", String(other), "--format", "json"])
        #expect(byPid.status == 0, "\(byPid.stderr)")
        #expect(analyzed.stdout != byPid.stdout)
        #expect(try HitchCLI.run(["report", Self.trace, "--process", app, "-o", dir + "/r.html"]).status == 0)
        #expect(try HitchCLI.run(["diff", Self.trace, Self.trace, "--process", app]).status == 0)
        let budgets = dir + "/budgets.json"
        try #"{"budgets": [{"metric": "droppedEvents", "max": 0}]}"#.write(toFile: budgets, atomically: true, encoding: .utf8)
        let check = try HitchCLI.run(["check", Self.trace, "--process", app, "--budget", budgets])
        #expect(check.status == 0, "\(check.stderr)")
        let checkRefused = try HitchCLI.run(["check", Self.trace, "--budget", budgets])
        #expect(checkRefused.status == 2 && checkRefused.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == refusal, "\(checkRefused.stderr)")
        let history = try HitchCLI.run(["history", "add", Self.trace, "--process", app, "--db", dir + "/h.db", "--commit", "abc"])
        #expect(history.status == 0, "\(history.stderr)")

        let notPerfetto = try HitchCLI.run(["analyze", tuned, "--process", app])
        #expect(notPerfetto.status == 2 && notPerfetto.stderr.contains("--process") && notPerfetto.stderr.contains("is fxt"), "\(notPerfetto.stderr)")
        let empty = try HitchCLI.run(["analyze", Self.trace, "--process", ""])
        #expect(empty.status == 2 && empty.stderr.contains("takes a process name or pid"), "\(empty.stderr)")
    }
}
