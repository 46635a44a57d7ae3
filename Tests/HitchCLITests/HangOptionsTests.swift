import Foundation
import Testing

/// The hang thresholds on the command line (docs/METRICS.md "Hangs"): `--hang-ms` and
/// `--brief-hang-ms` in the commands that analyze, checked before any trace is read, and hang
/// budgets in `hitch check`.
@Suite struct HangOptionsTests {
    static let naive = HitchCLI.trace("feed-naive-120hz.fxt")
    static let tuned = HitchCLI.trace("feed-tuned-120hz.fxt")

    @Test func thresholdsAreAppliedAndSaidInTheOutput() throws {
        let strict = try HitchCLI.run(["analyze", Self.naive, "--format", "json", "--hang-ms", "60", "--brief-hang-ms", "30"])
        #expect(strict.status == 0, "\(strict.stderr)")
        let hangs = try #require((try JSONSerialization.jsonObject(with: Data(strict.stdout.utf8)) as? [String: Any])?["hangs"] as? [String: Any])
        #expect(hangs["hangThresholdMs"] as? Double == 60 && hangs["briefThresholdMs"] as? Double == 30)
        let defaults = try HitchCLI.run(["analyze", Self.naive, "--format", "json"])
        let byDefault = try #require((try JSONSerialization.jsonObject(with: Data(defaults.stdout.utf8)) as? [String: Any])?["hangs"] as? [String: Any])
        #expect(byDefault["hangThresholdMs"] as? Double == 250 && byDefault["briefThresholdMs"] as? Double == 100)
        // A lower threshold never finds fewer stretches.
        #expect((hangs["count"] as? Int ?? 0) + ((hangs["brief"] as? [String: Any])?["count"] as? Int ?? 0)
                >= (byDefault["count"] as? Int ?? 0) + ((byDefault["brief"] as? [String: Any])?["count"] as? Int ?? 0))
    }

    @Test func aBriefThresholdAboveTheHangsIsBadUsage() throws {
        for command in [["analyze", Self.naive], ["report", Self.naive], ["diff", Self.naive, Self.tuned]] {
            let result = try HitchCLI.run(command + ["--hang-ms", "100", "--brief-hang-ms", "200"])
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("--brief-hang-ms") && result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
        }
        let zero = try HitchCLI.run(["analyze", Self.naive, "--hang-ms", "0"])
        #expect(zero.status == 2 && zero.stderr.contains("--hang-ms"))
    }

    @Test func hangBudgetsGate() throws {
        let directory = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let budgets = directory + "/budgets.json"
        try #"{"budgets": [{"metric": "hangs.longestMs", "max": 250, "name": "no hang"}, {"metric": "hangs.rateSecondsPerHour", "max": 0}]}"#
            .write(toFile: budgets, atomically: true, encoding: .utf8)
        let tuned = try HitchCLI.run(["check", Self.tuned, "--budget", budgets])
        #expect(tuned.status == 0, "\(tuned.stdout)\(tuned.stderr)")
        let naive = try HitchCLI.run(["check", Self.naive, "--budget", budgets])
        #expect(naive.status == 1, "\(naive.stdout)\(naive.stderr)")
        let misspelled = directory + "/misspelled.json"
        try #"{"budgets": [{"metric": "hangs.longestMS", "max": 250}]}"#.write(toFile: misspelled, atomically: true, encoding: .utf8)
        let bad = try HitchCLI.run(["check", Self.tuned, "--budget", misspelled])
        #expect(bad.status == 2 && bad.stderr.contains("hangs.longestMs"), "\(bad.stderr)")
    }
}
