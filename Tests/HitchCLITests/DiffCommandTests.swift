import Foundation
import Testing

/// `hitch diff`: a verdict first (better, worse, no change) from the hitch time ratio per frame, the
/// regressions named, the same verdict in every format and atop the HTML comparison.
@Suite struct DiffCommandTests {
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
