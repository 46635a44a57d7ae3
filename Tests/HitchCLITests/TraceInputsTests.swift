import Foundation
import Testing

/// `TraceInputs`: other tools' traces are taken where an FXT trace is, errors name the file and the
/// next step, and `--process` picks the app of a Perfetto trace with several in every command that
/// takes the trace directly, as in `hitch import perfetto`; without it, every one refuses with the same line.
@Suite struct TraceInputsTests {
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

    static let trace = HitchCLI.root + "/Tests/Fixtures/import/perfetto-sched-60hz.pftrace"

    @Test func everyAnalysisCommandTakesProcess() throws {
        let truth = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath:
            HitchCLI.root + "/Tests/Fixtures/import/perfetto-sched-60hz.truth.json"))) as? [String: Any]
        let app = try #require((truth?["app"] as? [String: Any])?["name"] as? String)
        let other = try #require((truth?["otherApp"] as? [String: Any])?["pid"] as? Int)
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let imported = try HitchCLI.run(["import", "perfetto", TraceInputsTests.trace, "-o", dir + "/t.fxt"])
        #expect(imported.status == 2)
        let refusal = imported.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!refusal.contains("\n") && refusal.contains("--process") && refusal.contains(app), "\(refusal)")
        for command in [["analyze"], ["report", "-o", dir + "/r.html"], ["diff", TraceInputsTests.trace]] {
            let refused = try HitchCLI.run(command + [TraceInputsTests.trace])
            #expect(refused.status == 2, "\(command)")
            #expect(refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == refusal, "\(command): \(refused.stderr)")
        }

        let analyzed = try HitchCLI.run(["analyze", TraceInputsTests.trace, "--process", app, "--format", "json"])
        #expect(analyzed.status == 0, "\(analyzed.stderr)")
        let byPid = try HitchCLI.run(["analyze", TraceInputsTests.trace, "--process", String(other), "--format", "json"])
        #expect(byPid.status == 0, "\(byPid.stderr)")
        #expect(analyzed.stdout != byPid.stdout)
        #expect(try HitchCLI.run(["report", TraceInputsTests.trace, "--process", app, "-o", dir + "/r.html"]).status == 0)
        #expect(try HitchCLI.run(["diff", TraceInputsTests.trace, TraceInputsTests.trace, "--process", app]).status == 0)
        let budgets = dir + "/budgets.json"
        try #"{"budgets": [{"metric": "droppedEvents", "max": 0}]}"#.write(toFile: budgets, atomically: true, encoding: .utf8)
        let check = try HitchCLI.run(["check", TraceInputsTests.trace, "--process", app, "--budget", budgets])
        #expect(check.status == 0, "\(check.stderr)")
        let checkRefused = try HitchCLI.run(["check", TraceInputsTests.trace, "--budget", budgets])
        #expect(checkRefused.status == 2 && checkRefused.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == refusal, "\(checkRefused.stderr)")
        let history = try HitchCLI.run(["history", "add", TraceInputsTests.trace, "--process", app, "--db", dir + "/h.db", "--commit", "abc"])
        #expect(history.status == 0, "\(history.stderr)")

        let notPerfetto = try HitchCLI.run(["analyze", tuned, "--process", app])
        #expect(notPerfetto.status == 2 && notPerfetto.stderr.contains("--process") && notPerfetto.stderr.contains("is fxt"), "\(notPerfetto.stderr)")
        let empty = try HitchCLI.run(["analyze", TraceInputsTests.trace, "--process", ""])
        #expect(empty.status == 2 && empty.stderr.contains("takes a process name or pid"), "\(empty.stderr)")
    }
}
