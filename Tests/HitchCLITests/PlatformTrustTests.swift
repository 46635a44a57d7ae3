import Foundation
import HitchTestSupport
import Testing

/// An import on which Hitch and the recording platform disagree about more than 5% of the frames:
/// `analyze` and `report` say so before any figure, `check` fails with that reason whatever its
/// budgets say, `diff` calls nothing better or worse; `--accept-disagreement` opts out of the last two.
/// The trace is `make-frametimeline-truth.py`'s drifting one (SurfaceFlinger calls 15 of 120 frames
/// janky that the display showed on their vsync).
@Suite struct PlatformTrustTests {
    @Test func analyzeSaysItFirst() throws {
        let drifting = try FrameTimelineTraces.trace("frametimeline-drift-90hz")
        let text = try HitchCLI.run(["analyze", drifting])
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count > 2 && lines[1].hasPrefix("  NOT TRUSTED: Hitch and the recording platform disagree on 12.5% of the 120 frames"), "\(lines.prefix(3))")
        let markdown = try HitchCLI.run(["analyze", drifting, "--format", "markdown"])
        #expect(markdown.stdout.split(separator: "\n").dropFirst().first?.hasPrefix("> **Not trusted:** Hitch and the recording platform disagree") == true)
        let json = try HitchCLI.run(["analyze", drifting, "--format", "json"])
        #expect(json.stdout.contains("\"trusted\" : false") && json.stdout.contains("\"untrusted\" : \"Hitch and the recording platform"))
        // A trusted import says nothing of the kind.
        let trusted = try HitchCLI.run(["analyze", try FrameTimelineTraces.trace("frametimeline-60hz")])
        #expect(trusted.status == 0 && !trusted.stdout.contains("NOT TRUSTED"))
    }

    @Test func reportSaysItFirst() throws {
        let drifting = try FrameTimelineTraces.trace("frametimeline-drift-90hz")
        let output = HitchCLI.temporaryPath("drift.html")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let r = try HitchCLI.run(["report", drifting, "-o", output])
        #expect(r.status == 0, "\(r.stderr)")
        let html = try String(contentsOfFile: output, encoding: .utf8)
        let banner = try #require(html.range(of: "Not trusted: "))
        let figure = try #require(html.range(of: "ms/s hitch time"))
        #expect(banner.lowerBound < figure.lowerBound)
    }

    @Test func checkFailsWithTheReason() throws {
        let drifting = try FrameTimelineTraces.trace("frametimeline-drift-90hz")
        let budgets = HitchCLI.temporaryPath("budgets.json")
        defer { try? FileManager.default.removeItem(atPath: budgets) }
        try #"{"budgets": [{"metric": "hitches.90.hitchTimeRatioMsPerS", "max": 5}]}"#.write(toFile: budgets, atomically: true, encoding: .utf8)
        let refused = try HitchCLI.run(["check", drifting, "--budget", budgets])
        #expect(refused.status == 1)
        #expect(refused.firstLine.hasPrefix("FAIL  platform agreement: Hitch and the recording platform disagree on 12.5%"), "\(refused.stdout)")
        #expect(refused.stdout.contains("pass  hitches.90.hitchTimeRatioMsPerS"))
        #expect(refused.stderr.contains("1 budget broken: Hitch and the recording platform disagree"))
        let accepted = try HitchCLI.run(["check", drifting, "--budget", budgets, "--accept-disagreement"])
        #expect(accepted.status == 0 && !accepted.stdout.contains("platform agreement"), "\(accepted.stdout)")
        // A trusted import is graded as ever.
        let trusted = try HitchCLI.run(["check", try FrameTimelineTraces.trace("frametimeline-90hz"), "--budget", budgets])
        #expect(trusted.status == 1 && trusted.firstLine.hasPrefix("FAIL  hitches.90.hitchTimeRatioMsPerS"), "\(trusted.stdout)")
    }

    @Test func diffCallsNothingBetterOrWorse() throws {
        let drifting = try FrameTimelineTraces.trace("frametimeline-drift-90hz")
        let other = try FrameTimelineTraces.trace("frametimeline-90hz")
        let diff = try HitchCLI.run(["diff", drifting, other])
        #expect(diff.status == 0)
        #expect(diff.firstLine.hasPrefix("no verdict, neither better nor worse: the base run: Hitch and the recording platform disagree"), "\(diff.firstLine)")
        let accepted = try HitchCLI.run(["diff", drifting, other, "--accept-disagreement"])
        #expect(accepted.status == 1 && accepted.firstLine.hasPrefix("worse: "), "\(accepted.firstLine)")
    }
}
