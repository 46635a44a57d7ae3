import Foundation
import HitchTestSupport
import Testing
import HitchReader

struct TraceCrashTests {
    /// A process SIGKILLed while two threads record flat out leaves a file that reads cleanly up to
    /// its last complete record.
    @Test func sigkilledRecorderLeavesAReadableFile() throws {
        guard let hitch = HitchBinary.path else {
            Issue.record("the hitch executable is not built next to the tests (swift build first)")
            return
        }
        let path = temporaryTracePath("sigkill")
        defer { unlink(path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: hitch)
        process.arguments = ["bench", "record", "--crash-test", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Wait for the child to say it records, then for some data to reach the file.
        let ready = output.fileHandleForReading.availableData
        #expect(String(decoding: ready, as: UTF8.self).hasPrefix("recording"))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            if size > 256 << 10 { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
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
