import Foundation
import Testing

/// `OutputFile`, every command's one checked writer: an output that is an input is refused, a failed
/// write leaves only what was there, `-o -` is standard output and devices are written in place.
@Suite struct OutputSafetyTests {
    @Test func anOutputThatIsAnInputIsRefused() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: tuned, toPath: dir + "/copy.fxt")
        let original = try Data(contentsOf: URL(fileURLWithPath: dir + "/copy.fxt"))
        let export = try HitchCLI.run(["export", "copy.fxt", "--format", "folded", "-o", "copy.fxt"], in: dir)
        #expect(export.status == 2)
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.fxt", withDestinationPath: "copy.fxt")
        let analyze = try HitchCLI.run(["analyze", "copy.fxt", "-o", "link.fxt"], in: dir)
        #expect(analyze.status == 2)
        #expect(analyze.stderr.contains("input"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/copy.fxt")) == original)
    }

    @Test func aFailedWriteRemovesOnlyItsTemporaryFile() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/full", withDestinationPath: "/dev/full")
        let r = try HitchCLI.run(["analyze", tuned, "-o", "full"], in: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("full"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/full")) == "/dev/full")
        // A failed write over a regular file leaves the old contents (the rename never happened).
        try "old".write(toFile: dir + "/report.txt", atomically: true, encoding: .utf8)
        #expect(try HitchCLI.run(["analyze", dir + "/missing.fxt", "-o", "report.txt"], in: dir).status == 2)
        #expect(try String(contentsOfFile: dir + "/report.txt", encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["full", "report.txt"])
    }

    @Test func dashIsStandardOutputAndDevicesAreWrittenInPlace() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try HitchCLI.run(["analyze", tuned, "-o", "-"], in: dir)
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("hitch analyze"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/-"))
        #expect(try HitchCLI.run(["analyze", tuned, "-o", "/dev/null"]).status == 0)
        var status = stat()
        #expect(stat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)
        // A new file is written whole, with the usual permissions.
        #expect(try HitchCLI.run(["analyze", tuned, "--format", "json", "-o", dir + "/a.json"]).status == 0)
        #expect(stat(dir + "/a.json", &status) == 0 && status.st_mode & 0o777 != 0o600)
        #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/a.json"))) is [String: Any])
    }
}
