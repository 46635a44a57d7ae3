import Foundation
import HitchAnalysis
import HitchReader
import HitchTestSupport

/// Runs the built `hitch` binary (it sits beside the test bundle) as a user would.
struct HitchCLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var firstLine: String { stdout.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "" }
    }

    /// The package root: Traces/ and docs/ paths are relative to it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The built `hitch` (`HitchBinary`; HITCH_BIN runs the tests against another build).
    static var binary: String { HitchBinary.path ?? "hitch (not built: swift build --build-tests)" }

    static func trace(_ name: String) -> String { root + "/Traces/" + name }

    /// Runs `hitch ARGS` in `directory` (default the package root); stdout and stderr captured whole.
    @discardableResult
    static func run(_ arguments: [String], in directory: String = root) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("out"), err = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// A fresh directory for a test's files.
    static func scratchDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-cli-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A synthetic feed-like trace (SyntheticTrace); `slowFrameOneIn` 48 has about twice the hitch time of 97.
    static func syntheticTrace(at path: String, seed: UInt64 = 5, slowFrameOneIn: Int64 = 97, frames: Int = 3000) throws {
        let writer = try TraceFileWriter(path: path)
        var generator = SyntheticTrace(seed: seed)
        generator.slowFrameOneIn = slowFrameOneIn
        _ = generator.write(to: writer, targetBytes: .max, maxFrames: frames)
        _ = try writer.close()
    }
}
