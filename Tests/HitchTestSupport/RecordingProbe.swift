import Foundation

/// `hitch-record-probe` (Tests/RecordProbe): the one child the recorder's exit, crash and fault tests
/// start, kill and read back.
public enum RecordingProbe {
    /// The probe beside the test bundle; nil when it was not built.
    public static let path: String? = BuiltExecutable.path("hitch-record-probe")

    /// Starts `hitch-record-probe ARGUMENTS` (mode, trace path, ...) with its standard output on a
    /// pipe (`waitForLine` reads its announcement).
    public static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path ?? "hitch-record-probe (not built: swift build --build-tests)")
        process.arguments = arguments
        process.environment = ChildProcess.environment()
        process.standardOutput = Pipe()
        try process.run()
        return process
    }

    /// The probe's first output ("recorded", "recording"), or "" when it ended without one.
    @discardableResult
    public static func waitForLine(_ process: Process) -> String {
        String(decoding: (process.standardOutput as! Pipe).fileHandleForReading.availableData, as: UTF8.self)
    }

    /// Sends `signal` and waits for the probe to end.
    public static func kill(_ process: Process, signal: Int32 = SIGKILL) {
        Foundation.kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }
}
