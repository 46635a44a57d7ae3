import Foundation
import HitchAnalysis
import HitchReader
import HitchTestSupport

/// The bundled traces the CLI tests read (Traces/).
let naive = HitchCLI.trace("feed-naive-120hz.fxt")
let tuned = HitchCLI.trace("feed-tuned-120hz.fxt")
let llm = HitchCLI.trace("llm-q4_0-120hz.fxt")

/// Runs the built `hitch` binary (it sits beside the test bundle) as a user would.
struct HitchCLI {
    typealias Result = ChildProcess.Result

    /// The package root: Traces/ and docs/ paths are relative to it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func trace(_ name: String) -> String { root + "/Traces/" + name }

    /// Runs `hitch ARGS` in `directory` (default the package root); stdout and stderr captured whole.
    @discardableResult
    static func run(_ arguments: [String], in directory: String = root, environment: [String: String?] = [:]) throws -> Result {
        try HitchBinary.run(arguments, in: directory, environment: environment)
    }

    /// Runs `hitch ARGS` without the environment's `HITCH_DB`: (exit status, stdout, stderr).
    static func history(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String, String) {
        var changes: [String: String?] = environment.mapValues { $0 }
        changes.updateValue(environment["HITCH_DB"], forKey: "HITCH_DB")   // unset unless given
        let r = try run(arguments, environment: changes)
        return (r.status, r.stdout, r.stderr)
    }

    /// A fresh path in the temporary directory.
    static func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "hitch-cli-\(getpid())-\(UInt32.random(in: 0 ... .max))-\(name)"
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
