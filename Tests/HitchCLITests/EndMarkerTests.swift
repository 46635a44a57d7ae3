import Foundation
import HitchAnalysis
import HitchTestSupport
import Testing

// A recording says how it ended (the end-of-recording marker, docs/FORMAT.md): a gate refuses one
// whose recorder promised the marker and never wrote it (the app was killed between two flushes,
// which leaves only whole records), and accepts every clean end (stop(), exit without stop(),
// SIGTERM). Each recording is a real child process, `hitch-record-probe frames` (Tests/RecordProbe),
// that records 120 Hz frames.

@Suite(.serialized) struct EndMarkerTests {
    /// The probe SwiftPM builds beside `hitch`.
    static let probe: String? = HitchBinary.path.map { URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("hitch-record-probe").path }
        .flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }

    private static let budget = #"{"budgets": [{"metric": "hitches.120.hitchTimeRatioMsPerS", "max": 100000}]}"#

    /// Records with the probe until it ends as `end` says; `kill` is sent once it has recorded ten
    /// frames plus `afterMs` (nil: it ends by itself).
    private func record(_ end: String, into dir: String, name: String, kill signal: Int32? = nil, afterMs: UInt32 = 0) throws -> String {
        let path = dir + "/" + name
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.probe))
        process.arguments = ["frames", path, end]
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        if let signal {
            _ = output.fileHandleForReading.availableData   // "recorded": ten frames are in
            usleep(afterMs * 1000)
            kill(process.processIdentifier, signal)
        }
        process.waitUntilExit()
        return path
    }

    private func check(_ trace: String, in dir: String) throws -> HitchCLI.Result {
        let budgets = dir + "/budgets.json"
        try Self.budget.write(toFile: budgets, atomically: true, encoding: .utf8)
        return try HitchCLI.run(["check", trace, "--budget", budgets])
    }

    private func endMarker(_ trace: String) throws -> (EndMarker, String?) {
        let json = try HitchCLI.run(["analyze", trace, "--format", "json"])
        let run = try #require(try JSONDecoder().decode(Analysis.self, from: Data(json.stdout.utf8)).runs.first)
        return (run.endMarker, run.endedBy)
    }

    @Test(.enabled(if: EndMarkerTests.probe != nil)) func everyCleanEndIsMarkedAndAccepted() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (end, signal, endedBy) in [("stop", nil, "stop"), ("exit", nil, "exit"), ("forever", SIGTERM, "SIGTERM"), ("forever", SIGINT, "SIGINT")] as [(String, Int32?, String)] {
            let trace = try record(end, into: dir, name: "\(endedBy).fxt", kill: signal, afterMs: 200)
            let (marker, by) = try endMarker(trace)
            #expect(marker == .present && by == endedBy, "\(endedBy): \(marker) \(by ?? "none")")
            let result = try check(trace, in: dir)
            #expect(result.status == 0, "\(endedBy): exit \(result.status): \(result.stderr)")
        }
    }

    @Test(.enabled(if: EndMarkerTests.probe != nil)) func aKilledRecordingIsRefusedByEveryGate() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Killed at different moments: right after its tenth frame, and later, between flushes.
        for afterMs: UInt32 in [0, 350, 1130] {
            let trace = try record("forever", into: dir, name: "killed-\(afterMs).fxt", kill: SIGKILL, afterMs: afterMs)
            let (marker, _) = try endMarker(trace)
            #expect(marker == .missing, "killed after \(afterMs) ms: \(marker)")
            let result = try check(trace, in: dir)
            #expect(result.status == 2 && result.stderr.contains("cut short") && result.stderr.contains("end-of-recording marker")
                    && result.stderr.contains("--allow-cut-short"), "killed after \(afterMs) ms: exit \(result.status): \(result.stderr)")
            #expect(try check(trace, in: dir).stdout.isEmpty)
            let diff = try HitchCLI.run(["diff", trace, trace])
            #expect(diff.status == 2 && diff.stderr.contains("cut short"), "\(diff.stderr)")
            // Opting in judges what it has (a kill right after the tenth frame may leave none on disk yet).
            let allowed = try HitchCLI.run(["check", trace, "--budget", dir + "/budgets.json", "--allow-cut-short"])
            #expect(allowed.status == 0 || (afterMs == 0 && allowed.stderr.contains("no frames to judge")), "\(allowed.stderr)")
        }
    }

    @Test func aTraceThatPromisedNothingIsJudgedByItsRecordsAndSaysSo() throws {
        // A trace written by another writer (here the synthetic one, as an importer or an older
        // recorder writes): judged by whole records, and the evidence says why.
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try HitchCLI.syntheticTrace(at: dir + "/synthetic.fxt", frames: 600)
        let analysis = try JSONDecoder().decode(Analysis.self, from: Data(try HitchCLI.run(["analyze", dir + "/synthetic.fxt", "--format", "json"]).stdout.utf8))
        #expect(analysis.runs.first?.endMarker == .notPromised)
        #expect(analysis.evidence.endedCleanly && analysis.evidence.runsWithoutEndMarker == 1)
        #expect(analysis.evidence.summary.contains("no end-of-recording marker"), "\(analysis.evidence.summary)")
    }
}
