import Foundation
import HitchTestSupport
import Testing

/// `record` shows one updating progress line when standard error is a terminal, and nothing but its
/// summary when it is not (a CI log, a pipe).
@Suite struct RecordProgressTests {
    @Test func quietWhenStandardErrorIsNotATerminal() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try HitchCLI.run(["record", "feed", "--variant", "tuned", "--seconds", "2", "--rows", "500", "-o", dir + "/t.fxt"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("\r") && !r.stderr.contains("recording feed"), "\(r.stderr)")
        #expect(r.stderr.contains("feed tuned @ "), "the summary line: \(r.stderr)")
    }

    /// Under a pseudo-terminal (util-linux `script`), the line is redrawn in place ("\r", then the
    /// line erased) and cleared before the summary.
    @Test func oneUpdatingLineOnATerminal() throws {
        let script = ["/usr/bin/script", "/bin/script"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let scriptPath = try #require(script, "util-linux 'script' (a pseudo-terminal for the test) is not installed")
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let command = "'\(HitchBinary.path ?? "hitch")' record feed --variant tuned --seconds 2 --rows 500 -o '\(dir)/t.fxt'"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: scriptPath)
        process.arguments = ["-q", "-e", "-c", command, "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        let updates = text.components(separatedBy: "\r\u{1B}[Krecording feed tuned: ").count - 1
        #expect(updates >= 2, "a line redrawn in place while recording: \(text.debugDescription)")
        #expect(text.contains(" s of 2 s, ") && text.contains(" MB written"), "\(text.debugDescription)")
        // Cleared before the summary, which starts its own line.
        #expect(text.contains("\r\u{1B}[Kfeed tuned @ "), "\(text.debugDescription)")
    }
}
