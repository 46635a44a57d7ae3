import Foundation
import Testing
import HitchReader

/// Hostile input everywhere a user passes a file to `hitch`: traces, Chrome JSON and
/// budgets get exit 0/1 or a one-line error and exit 2, never a crash or a hang; outputs land only
/// where `-o` says; a failed write is an error, never a silent exit 0. Runs the built `hitch`.
@Suite(.enabled(if: FaultSupport.hitchExecutable != nil)) struct HostileInputTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func files(in relative: String) -> [String] {
        let directory = repository.appendingPathComponent(relative)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().map { directory.appendingPathComponent($0).path }
    }

    /// Runs hitch and checks the CLI contract: no signal, no hang, exit 0/1/2, and on exit 2 exactly
    /// one line on stderr starting "hitch: error:".
    /// `noFileWrites` runs hitch with RLIMIT_FSIZE 0 and SIGXFSZ ignored: every write to a regular
    /// file fails with EFBIG, as on a full disk (pipes are not limited).
    static func expectContract(_ arguments: [String], allowed: Set<Int32> = [0, 1, 2], noFileWrites: Bool = false,
                               sourceLocation: SourceLocation = #_sourceLocation) throws -> (status: Int32, stderr: String) {
        let hitch = try #require(FaultSupport.hitchExecutable)
        let run = noFileWrites
            ? try FaultSupport.run("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\"", hitch] + arguments, timeout: 30)
            : try FaultSupport.run(hitch, arguments, timeout: 30)
        let label = arguments.map { $0.replacingOccurrences(of: repository.path + "/", with: "") }.joined(separator: " ")
        #expect(!run.timedOut, "hitch \(label) did not finish in 30 s", sourceLocation: sourceLocation)
        #expect(allowed.contains(run.status), "hitch \(label) exited \(run.status): \(run.stderr.prefix(300))", sourceLocation: sourceLocation)
        if run.status == 2 {
            // With `--format json` the one line is a JSON object {"error": …}; otherwise "hitch: error: …".
            let jsonErrors = zip(arguments, arguments.dropFirst()).contains { $0 == "--format" && $1 == "json" }
            let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: true)
            let isOneError = lines.count == 1 && (jsonErrors ? isJSONError(lines[0]) : lines[0].hasPrefix("hitch: error:"))
            #expect(isOneError, "hitch \(label): \(run.stderr.prefix(300))", sourceLocation: sourceLocation)
        }
        return (run.status, run.stderr)
    }

    static func isJSONError(_ line: Substring) -> Bool {
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return object?["error"] is String
    }

    /// A scratch directory inside its own parent, so a test can see every file a command created.
    static func sandbox(_ name: String) throws -> (parent: String, work: String) {
        let parent = FaultSupport.temporaryPath(name)
        let work = parent + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        return (parent, work)
    }

    static func allFiles(under path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }

    @Test func hostileTracesGiveOneLineErrorsNotCrashes() throws {
        let box = try Self.sandbox("traces")
        defer { try? FileManager.default.removeItem(atPath: box.parent) }
        var random = SystemRandomNumberGenerator()
        let noise = box.work + "/noise.fxt"
        _ = FileManager.default.createFile(atPath: noise, contents: Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        let magicThenNoise = box.work + "/magic-noise.fxt"
        var bytes = withUnsafeBytes(of: UInt64(0x0016_5478_4604_0010).littleEndian) { Array($0) }
        bytes += (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        _ = FileManager.default.createFile(atPath: magicThenNoise, contents: Data(bytes))
        let empty = box.work + "/empty.fxt"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let inputs = Self.files(in: "Tests/Fuzz/corpus/reader") + Self.files(in: "Tests/Fixtures/regressions")
            + [noise, magicThenNoise, empty, box.work, box.work + "/missing.fxt"]
        for input in inputs {
            _ = try Self.expectContract(["info", input])
            _ = try Self.expectContract(["analyze", input, "--format", "json"])
        }
    }

    @Test func hostileChromeJSONGivesOneLineErrorsNotCrashes() throws {
        let box = try Self.sandbox("chrome")
        defer { try? FileManager.default.removeItem(atPath: box.parent) }
        let generated: [(String, Data)] = [
            ("deep.json", Data((String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)).utf8)),
            ("deep-object.json", Data((String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)).utf8)),
            ("long-string.json", Data(("[{\"name\":\"" + String(repeating: "x", count: 8 << 20) + "\",\"ph\":\"i\",\"ts\":0}]").utf8)),
            ("many-events.json", Data(("[" + String(repeating: "{\"name\":\"e\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":1},", count: 100_000) + "]").utf8)),
            ("binary.json", Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7919) })),
        ]
        var inputs = Self.files(in: "Tests/Fuzz/corpus/chrome")
        for (name, data) in generated {
            let path = box.work + "/" + name
            _ = FileManager.default.createFile(atPath: path, contents: data)
            inputs.append(path)
        }
        for (index, input) in inputs.enumerated() {
            _ = try Self.expectContract(["import", "chrome", input, "-o", box.work + "/out-\(index).fxt"])
            _ = try Self.expectContract(["analyze", input, "--format", "json"])
        }
    }

    @Test func hostileBudgetFilesGiveOneLineErrors() throws {
        let box = try Self.sandbox("budgets")
        defer { try? FileManager.default.removeItem(atPath: box.parent) }
        let trace = Self.repository.appendingPathComponent("Tests/Fuzz/corpus/reader/every-kind.fxt").path
        let cases: [(String, Data)] = [
            ("empty.json", Data()),
            ("deep.json", Data(("{\"budgets\":" + String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000) + "}").utf8)),
            ("huge.json", Data(("{\"budgets\":[], \"pad\":\"" + String(repeating: " ", count: 17 << 20) + "\"}").utf8)),
            ("nan.json", Data(#"{"budgets": [{"metric": "hitches.120.hitchCount", "max": NaN}]}"#.utf8)),
        ]
        var inputs = Self.files(in: "Tests/Fuzz/corpus/budget") + [box.work, box.work + "/missing.json", "/dev/zero"]
            + Self.files(in: "Tests/Fixtures/regressions").filter { $0.contains("/budget-") }
        for (name, data) in cases {
            _ = FileManager.default.createFile(atPath: box.work + "/" + name, contents: data)
            inputs.append(box.work + "/" + name)
        }
        for input in inputs {
            _ = try Self.expectContract(["check", trace, "--budget", input])
        }
    }

    /// A trace whose names and metadata are paths and markup: every output lands exactly where
    /// `-o` says and nowhere else (nothing named after trace content, no stray temporary files).
    @Test func outputsLandOnlyWhereTheUserSaid() throws {
        let box = try Self.sandbox("outputs")
        defer { try? FileManager.default.removeItem(atPath: box.parent) }
        let trace = box.work + "/hostile.fxt"
        let writer = try TraceFileWriter(path: trace)
        let evil = ["../../escaped", "/tmp/absolute-escape", "..", "<script>alert(1)</script>", "a/../../b", "\u{0}nul"]
        let main = writer.thread(name: "../../thread-escape", threadID: 1)
        for (index, name) in evil.enumerated() {
            writer.setMetadata(name, name, thread: main)
            let t = Int64(index) * 8_333_333
            writer.write(TraceEvent(timestampNs: t, thread: main, payload: .frameBegan(FrameBegan(frameID: UInt64(index + 1), vsyncNs: t, targetNs: t + 8_333_333, periodNs: 8_333_333))))
            writer.write(TraceEvent(timestampNs: t + 1000, thread: main, payload: .intervalComplete(category: writer.string("stage"), name: writer.string(name), endNs: t + 9_000_000)))
            writer.write(TraceEvent(timestampNs: t + 9_100_000, thread: main, payload: .frameCommitted(frameID: UInt64(index + 1))))
        }
        _ = try writer.close()
        let out = box.work + "/out"
        for arguments in [
            ["report", trace, "-o", out + "/report.html"],
            ["report", trace, trace, "-o", out + "/compare.html"],
            ["export", trace, "--format", "chrome", "-o", out + "/trace.json"],
            ["export", trace, "--format", "folded", "-o", out + "/stacks.txt"],
            ["analyze", trace, "--format", "json", "-o", out + "/analysis.json"],
        ] {
            let result = try Self.expectContract(arguments, allowed: [0])
            _ = result
        }
        _ = try Self.expectContract(["import", "chrome", out + "/trace.json", "-o", out + "/reimported.fxt"], allowed: [0])
        let expected = ["hostile.fxt", "out", "out/analysis.json", "out/compare.html", "out/reimported.fxt", "out/report.html",
                        "out/stacks.txt", "out/trace.json"]
        #expect(Self.allFiles(under: box.work) == expected)
        #expect(Self.allFiles(under: box.parent) == ["work"] + expected.map { "work/" + $0 })
        #expect(!FileManager.default.fileExists(atPath: "/tmp/absolute-escape"))
    }

    /// Standard output that cannot be written (a full device) is an error (exit 2, one line), never
    /// exit 0 with the output lost, never a crash.
    @Test func standardOutputOnAFullDeviceIsAnError() throws {
        let hitch = try #require(FaultSupport.hitchExecutable)
        let trace = Self.repository.appendingPathComponent("Tests/Fuzz/corpus/reader/every-kind.fxt").path
        for arguments in [["info", trace], ["analyze", trace], ["analyze", trace, "--format", "json"], ["export", trace, "--format", "chrome"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: hitch)
            process.arguments = arguments
            process.environment = ["SWIFT_BACKTRACE": "enable=no", "PATH": "/usr/bin:/bin"]
            // Standard output only: a file handle on /dev/full, never `-o /dev/full` (an atomic write
            // would rename a regular file over the device node when run as root).
            let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
            process.standardOutput = full
            let err = Pipe()
            process.standardError = err
            try process.run()
            process.waitUntilExit()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .exit && process.terminationStatus == 2,
                    "hitch \(arguments.first!) with stdout on a full device: \(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus), stderr: \(stderr.prefix(200))")
        }

    }

    /// `-o` on a full file system (a 4 KB tmpfs the test fills, where it may mount; else every file
    /// write fails with EFBIG under RLIMIT_FSIZE 0): exit 2 with one line for every command that writes a file.
    @Test func outputOnAFullFileSystemIsAnError() throws {
        let trace = Self.repository.appendingPathComponent("Tests/Fuzz/corpus/reader/every-kind.fxt").path
        let box = try Self.sandbox("full-fs")
        defer { try? FileManager.default.removeItem(atPath: box.parent) }
        let mountPoint = box.work + "/tiny"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        var mounted = false
        if getuid() == 0 {
            mounted = try FaultSupport.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4k", "tmpfs", mountPoint], timeout: 20).status == 0
        }
        defer { if mounted { _ = try? FaultSupport.run("/bin/umount", [mountPoint], timeout: 20) } }
        let json = box.work + "/trace.json"
        _ = try Self.expectContract(["export", trace, "--format", "chrome", "-o", json], allowed: [0])
        // Fill the file system, so even a small output cannot be written.
        if mounted { _ = FileManager.default.createFile(atPath: mountPoint + "/filler", contents: Data(count: 4096)) }
        for arguments in [
            ["analyze", trace, "--format", "json", "-o", mountPoint + "/a.json"],
            ["analyze", trace, "-o", mountPoint + "/a.txt"],
            ["export", trace, "--format", "folded", "-o", mountPoint + "/f.txt"],
            ["report", trace, "-o", mountPoint + "/r.html"],
            ["export", trace, "--format", "chrome", "-o", mountPoint + "/c.json"],
            ["import", "chrome", json, "-o", mountPoint + "/i.fxt"],
        ] {
            _ = try Self.expectContract(arguments, allowed: [2], noFileWrites: !mounted)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: mountPoint)) ?? [] where name != "filler" {
                try? FileManager.default.removeItem(atPath: mountPoint + "/" + name)
            }
        }
    }
}
