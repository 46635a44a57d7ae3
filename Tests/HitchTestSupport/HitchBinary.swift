import Foundation

/// The `hitch` executable tests run as a user would: `HITCH_BIN` when it names an executable
/// (another build, e.g. the previous one, to see a problem reproduced), else the one SwiftPM builds
/// beside the test bundle (`swift build --build-tests` builds it); nil when neither exists.
public enum HitchBinary {
    public static let path: String? = {
        if let path = ProcessInfo.processInfo.environment["HITCH_BIN"], FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        let starts = [(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")), CommandLine.arguments.first]
        for start in starts.compactMap({ $0 }) {
            var directory = URL(fileURLWithPath: start).deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("hitch").path
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate) {
                    return candidate
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        return nil
    }()
}
