import Foundation

/// Runs child processes for the tests that run an executable (the `hitch` binary, the recording probe).
public enum ChildProcess {
    /// What a child did: its exit status (the signal, when `terminationReason` says so), its whole
    /// standard output and error, and whether the time limit killed it.
    public struct Result: Sendable {
        public var status: Int32
        public var terminationReason: Process.TerminationReason
        public var stdout: String
        public var stderr: String
        public var timedOut: Bool
        public var firstLine: String { stdout.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "" }
    }

    /// Runs `executable ARGUMENTS` in `directory`, with `environment` laid over this process's
    /// (a nil value unsets a variable; `SWIFT_BACKTRACE` is off: a backtracer adds seconds to a
    /// fault and is not under test), standard input empty. Killed (SIGKILL) after `timeout` seconds.
    public static func run(_ executable: String, _ arguments: [String], in directory: String? = nil,
                           environment: [String: String?] = [:], timeout: Double = 600) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = self.environment(environment)
        process.standardInput = FileHandle.nullDevice
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = CapturedBytes(), errData = CapturedBytes()
        let readers = DispatchGroup()
        for (pipe, sink) in [(out, outData), (err, errData)] {
            readers.enter()
            Thread {
                sink.set(pipe.fileHandleForReading.readDataToEndOfFile())
                readers.leave()
            }.start()
        }
        let exited = DispatchSemaphore(value: 0)
        Thread {
            process.waitUntilExit()
            exited.signal()
        }.start()
        var timedOut = false
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
        }
        readers.wait()
        return Result(status: process.terminationStatus, terminationReason: process.terminationReason,
                      stdout: String(decoding: outData.get(), as: UTF8.self), stderr: String(decoding: errData.get(), as: UTF8.self),
                      timedOut: timedOut)
    }

    /// This process's environment with `changes` laid over it, and no backtracer.
    public static func environment(_ changes: [String: String?] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        for (key, value) in changes { environment[key] = value }
        return environment
    }
}

/// Bytes one thread captures and another reads afterwards. NSLock, not `Mutex`: on Linux a
/// contended Synchronization.Mutex waits in the (uninstrumented) standard library's futex path,
/// which ThreadSanitizer cannot see, so it would report false races (scripts/check-tsan.sh runs these).
public final class CapturedBytes: @unchecked Sendable {   // every access to `data` holds `lock`
    private let lock = NSLock()
    private var data = Data()
    public init() {}
    public func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    public func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}
