import Foundation
import Testing
import HitchReader

/// A process that ends without `stop()` (exit, SIGKILL, a fatal signal) keeps what it recorded.
/// Each test runs `hitch-record-probe` (Tests/RecordProbe), which records 1,000 numbered instants
/// on its main thread and 1,000 on another thread that stays alive, then ends as asked.
struct TraceExitTests {
    static let probe: String? = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("hitch-record-probe").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }()

    /// Runs the probe; returns it once it printed "recorded" (or ended), and its stdout pipe.
    private func launch(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.probe))
        process.arguments = arguments
        // No backtracer in the child: it would add seconds to a fault and is not under test.
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        process.standardOutput = Pipe()
        try process.run()
        return process
    }

    private func waitForLine(_ process: Process) {
        _ = (process.standardOutput as! Pipe).fileHandleForReading.availableData
    }

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

    @Test(.enabled(if: TraceExitTests.probe != nil)) func exitWithoutStopWritesEveryEvent() throws {
        let path = temporaryTracePath("exit")
        defer { unlink(path) }
        let process = try launch(["exit", path])
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        // The flush interval is 60 s, so only the exit hook can have written them; the last event
        // was recorded right before exit(0).
        #expect(try probeCounts(path) == ["main": 1000, "other": 1000])
    }

    @Test(.enabled(if: TraceExitTests.probe != nil)) func sigkillAfterOneQuietSecondLosesNothingOlderThanTheFlushInterval() throws {
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

    @Test(.enabled(if: TraceExitTests.probe != nil), arguments: ["TERM", "INT", "SEGV", "ABRT"])
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
}
