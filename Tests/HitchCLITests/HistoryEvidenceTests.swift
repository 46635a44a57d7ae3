import Foundation
import HitchHistoryTestSupport
import Testing
@testable import HitchHistory

// History that says what it knows: a short series' step is found, too few runs is said with the
// number needed, a typo'd branch and a wrong database are errors, a read-only database is read.
@Suite struct HistoryEvidenceTests {
    /// The hitch ratios of eight runs stored in order: tuned, then a regression, then the naive feed.
    static let hitchRatios = [6.29, 4.72, 37, 37, 593, 342, 593, 342]

    @Test func theEightRunSeriesFindsItsChangePointOnTheHitchRatio() throws {
        let points = ChangePointDetector.changePoints(in: Self.hitchRatios)
        #expect(points.map(\.index) == [4], "\(points)")
        let db = try HistoryFixtures.database(ratios: Self.hitchRatios)
        defer { HistoryFixtures.remove(db) }
        let (status, output, error) = try HitchCLI.history(["history", "check", "--metric", "hitches.120.hitchTimeRatioMsPerS", "--db", db])
        #expect(status == 1, "\(output) \(error)")
        #expect(error.contains("commit3..commit4"), "\(error)")
    }

    @Test func tooFewRunsIsSaidWithTheNumberNeeded() throws {
        let db = try HistoryFixtures.database(ratios: Array(Self.hitchRatios.prefix(5)))
        defer { HistoryFixtures.remove(db) }
        let (status, output, _) = try HitchCLI.history(["history", "check", "--db", db])
        #expect(status == 0)
        #expect(output.contains("too few runs to find change points: 5 on branch main, at least 6 needed"), "\(output)")
        let six = try HistoryFixtures.database(ratios: Array(Self.hitchRatios.prefix(6)))
        defer { HistoryFixtures.remove(six) }
        let enough = try HitchCLI.history(["history", "check", "--db", six])
        #expect(enough.1.contains("a change among the newest 2 runs shows once 3 runs follow it"), "\(enough.1)")
    }

    @Test func aTypoBranchAndAMissingDatabaseAreErrors() throws {
        let db = try HistoryFixtures.database(ratios: Self.hitchRatios)
        defer { HistoryFixtures.remove(db) }
        for command in [["check"], ["show", "hitches.120.hitchTimeRatioMsPerS"], ["report", "-o", "/dev/null"], ["list"]] {
            try HistoryCommandTests.expectOneLineExit2(["history"] + command + ["--branch", "mian", "--db", db], mentioning: "did you mean 'main'?")
        }
        let missing = HistoryFixtures.temporary("nowhere/history.sqlite")
        for command in [["check"], ["list"], ["report", "-o", "/dev/null"], ["prune", "--older-than", "1"]] {
            try HistoryCommandTests.expectOneLineExit2(["history"] + command + ["--db", missing], mentioning: "no history database")
        }
        #expect(!FileManager.default.fileExists(atPath: (missing as NSString).deletingLastPathComponent), "nothing is created")
    }

    @Test func aReadOnlyDatabaseIsCheckedAndReported() throws {
        let db = try HistoryFixtures.database(ratios: Self.hitchRatios)
        defer { chmod(db, 0o644); HistoryFixtures.remove(db) }
        // As a CI job that restores the database read-only: the file and its folder are not writable
        // (root ignores permission bits, so the read-only open itself is what is tested there).
        #expect(chmod(db, 0o444) == 0)
        let check = try HitchCLI.history(["history", "check", "--db", db])
        #expect(check.0 == 1 && !check.2.contains("readonly"), "\(check)")
        let page = HistoryFixtures.temporary("trend.html")
        defer { unlink(page) }
        let report = try HitchCLI.history(["history", "report", "-o", page, "--db", db])
        #expect(report.0 == 0, "\(report)")
        let list = try HitchCLI.history(["history", "list", "--db", db])
        #expect(list.0 == 0 && list.1.split(separator: "\n").count == 8, "\(list)")
    }
}
