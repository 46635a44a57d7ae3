import Foundation
import Testing

/// `hitch analyze A B`: runs of one workload merge; other traces only with --merge.
@Suite struct AnalyzeCommandTests {
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
