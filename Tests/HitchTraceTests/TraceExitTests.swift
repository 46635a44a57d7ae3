import Foundation
import HitchReader
import HitchTestSupport
import Testing

/// A process that ends without `stop()` (exit, SIGKILL, a fatal signal) keeps what it recorded.
/// Each test runs `hitch-record-probe` (Tests/RecordProbe), which records 1,000 numbered instants
/// on its main thread and 1,000 on another thread that stays alive, then ends as asked.
struct TraceExitTests {
    private func launch(_ arguments: [String]) throws -> Process { try RecordingProbe.start(arguments) }
    private func waitForLine(_ process: Process) { RecordingProbe.waitForLine(process) }

    /// Instants per thread role name ("main", "other") in the trace at `path`.
    private func probeCounts(_ path: String) throws -> [String: Int] {
        var reader = try TraceReader(path: path)
        var counts: [String: Int] = [:]
        while let event = try reader.next() {
            if case .instant(let category, let name) = event.payload, reader.string(category) == "probe" {
                counts[reader.string(name), default: 0] += 1
            }
        }
        return counts
    }

    @Test(.enabled(if: RecordingProbe.path != nil)) func exitWithoutStopWritesEveryEvent() throws {
        let path = temporaryTracePath("exit")
        defer { unlink(path) }
        let process = try launch(["exit", path])
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        // The flush interval is 60 s, so only the exit hook can have written them; the last event
        // was recorded right before exit(0).
        #expect(try probeCounts(path) == ["main": 1000, "other": 1000])
    }

    @Test(.enabled(if: RecordingProbe.path != nil)) func sigkillAfterOneQuietSecondLosesNothingOlderThanTheFlushInterval() throws {
        let path = temporaryTracePath("quiet-kill")
        defer { unlink(path) }
        let process = try launch(["quiet", path])
        waitForLine(process)
        // Every event was recorded before "recorded"; 1 s is ten flush intervals (100 ms).
        Thread.sleep(forTimeInterval: 1)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(try probeCounts(path) == ["main": 1000, "other": 1000])
    }

    @Test(.enabled(if: RecordingProbe.path != nil), arguments: ["TERM", "INT", "SEGV", "ABRT"])
    func fatalSignalFlushesFirst(signal: String) throws {
        let path = temporaryTracePath("signal-\(signal)")
        defer { unlink(path) }
        let process = try launch(["signal", path, signal])
        if signal == "TERM" || signal == "INT" {
            waitForLine(process)
            kill(process.processIdentifier, signal == "TERM" ? SIGTERM : SIGINT)
        }
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        let expected: Int32 = ["TERM": SIGTERM, "INT": SIGINT, "SEGV": SIGSEGV, "ABRT": SIGABRT][signal]!
        #expect(process.terminationStatus == expected)
        // The flush interval is 60 s: only the signal handler's flush can have written them.
        #expect(try probeCounts(path) == ["main": 1000, "other": 1000])
    }

    /// A process SIGKILLed while two threads record flat out leaves a file that reads cleanly up to
    /// its last complete record.
    @Test(.enabled(if: RecordingProbe.path != nil)) func sigkilledWhileRecordingFlatOutLeavesAReadableFile() throws {
        let path = temporaryTracePath("sigkill")
        defer { unlink(path) }
        let process = try launch(["flat-out", path])
        // Wait for the child to say it records, then for some data to reach the file.
        #expect(RecordingProbe.waitForLine(process).hasPrefix("recording"))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, FaultSupport.fileSize(path) <= 256 << 10 { Thread.sleep(forTimeInterval: 0.01) }
        RecordingProbe.kill(process)
        #expect(process.terminationReason == .uncaughtSignal)

        var reader = try TraceReader(path: path)
        var bodies = 0
        while let event = try reader.next() {
            if case .bodyEvaluation = event.payload { bodies += 1 }
        }
        #expect(bodies > 1000)
        #expect(reader.metadata["workload"] == "crash-test")
        // At most the final record may be cut short.
        #expect(reader.warningCount <= 1)
        #expect(reader.warnings.allSatisfy { $0.message.contains("truncated") })
    }
}
