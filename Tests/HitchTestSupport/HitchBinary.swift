import Foundation

/// The executables SwiftPM builds beside the test bundle (`swift build --build-tests` builds them).
public enum BuiltExecutable {
    /// The executable `name` beside the test bundle, or in a folder above it; nil when it was not built.
    public static func path(_ name: String) -> String? {
        let starts = [(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")), CommandLine.arguments.first]
        for start in starts.compactMap({ $0 }) {
            var directory = URL(fileURLWithPath: start).deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent(name).path
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate) {
                    return candidate
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        return nil
    }
}

/// The `hitch` executable tests run as a user would: `HITCH_BIN` when it names an executable
/// (another build, e.g. the previous one, to see a problem reproduced), else the one SwiftPM builds
/// beside the test bundle; nil when neither exists.
public enum HitchBinary {
    public static let path: String? = {
        if let path = ProcessInfo.processInfo.environment["HITCH_BIN"], FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        return BuiltExecutable.path("hitch")
    }()

    /// Runs `hitch ARGUMENTS` (see `ChildProcess.run`); a run of an unbuilt binary fails to launch.
    public static func run(_ arguments: [String], in directory: String? = nil, environment: [String: String?] = [:],
                           timeout: Double = 600) throws -> ChildProcess.Result {
        try ChildProcess.run(path ?? "hitch (not built: swift build --build-tests)", arguments, in: directory,
                             environment: environment, timeout: timeout)
    }
}
