import Foundation
import HitchTestSupport
import Synchronization
import HitchReader
@testable import HitchTrace

/// Helpers for the fault, load and hostile-input tests.
enum FaultSupport {
    /// The file's size in bytes (0 when it does not exist yet).
    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// A fresh path in the temporary directory.
    static func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "hitch-hardening-\(getpid())-\(UInt32.random(in: 0 ... .max))-\(name)"
    }

    /// The built `hitch` (`HitchBinary`); nil when it was not built.
    static var hitchExecutable: String? { HitchBinary.path }

    /// What reading a whole trace gave.
    struct ReadBack {
        var events: [TraceEvent] = []
        var error: TraceReadError?
        var warnings: [TraceReadWarning] = []
        var droppedEventCount: UInt64 = 0
        /// Event counts by "category/name" for intervals and instants, by view type for bodies.
        var counts: [String: Int] = [:]
        var threadNames: [ThreadID: String] = [:]
    }

    /// Reads every event of `path` to the end or to the first error.
    static func readAll(_ path: String, keepEvents: Bool = false) -> ReadBack {
        var result = ReadBack()
        var reader: TraceReader
        do { reader = try TraceReader(path: path) } catch { result.error = error; return result }
        // Counted by string ids while reading (cheap), named once at the end.
        var pairCounts: [UInt64: Int] = [:]
        var bodyCounts: [UInt32: Int] = [:]
        while true {
            let next: TraceEvent?
            do { next = try reader.next() } catch { result.error = error; break }
            guard let event = next else { break }
            if keepEvents { result.events.append(event) }
            switch event.payload {
            case let .intervalComplete(category, name, _), let .instant(category, name):
                pairCounts[UInt64(category.rawValue) << 32 | UInt64(name.rawValue), default: 0] += 1
            case let .bodyEvaluation(body):
                bodyCounts[body.viewType.rawValue, default: 0] += 1
            default:
                break
            }
            if result.threadNames[event.thread] == nil { result.threadNames[event.thread] = reader.threadName(event.thread) }
        }
        for (key, count) in pairCounts {
            let category = reader.string(StringID(rawValue: UInt32(key >> 32)))
            let name = reader.string(StringID(rawValue: UInt32(truncatingIfNeeded: key)))
            result.counts["\(category)/\(name)", default: 0] += count
        }
        for (id, count) in bodyCounts { result.counts[reader.string(StringID(rawValue: id)), default: 0] += count }
        result.warnings = reader.warnings
        result.droppedEventCount = reader.droppedEventCount
        return result
    }

    /// Starts the sampler, waiting (up to 60 s) while another test's sampling session is active.
    static func startSampler(_ configuration: SamplerConfiguration, recorder: TraceRecorder?,
                             onSample: (@Sendable (SampledStack) -> Void)? = nil) throws -> Sampler {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let result = Result { () throws(SamplerError) -> Sampler in
                try Sampler.start(configuration, recorder: recorder, onSample: onSample)
            }
            switch result {
            case let .success(sampler): return sampler
            case .failure(.alreadyRunning) where Date() < deadline: usleep(50_000)
            case let .failure(error): throw error
            }
        }
    }

    /// A field of /proc/self/status in kB (VmRSS, VmHWM).
    static func statusKB(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// Runs `body` on a thread and waits at most `seconds` for it; false if it did not finish (a hang).
    static func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// Runs a child process; returns its exit status, stdout and stderr. Kills it after `timeout` seconds.
    static func run(_ executable: String, _ arguments: [String], timeout: Double = 60,
                    currentDirectory: String? = nil) throws -> (status: Int32, stdout: String, stderr: String, timedOut: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
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
        return (process.terminationStatus, String(decoding: outData.get(), as: UTF8.self),
                String(decoding: errData.get(), as: UTF8.self), timedOut)
    }
}

/// A value shared between threads behind an NSLock. Not `Mutex`: on Linux a contended
/// Synchronization.Mutex waits in the (uninstrumented) standard library's futex path, which
/// ThreadSanitizer cannot see, so it reports false races on the data it protects; NSLock is a
/// pthread mutex, which TSan understands. These helpers run under scripts/check-tsan.sh.
final class Locked<Value>: @unchecked Sendable {   // every access to `value` holds `lock`
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// Per-thread event counts, each added once by its thread when it stops recording.
final class EventTally: Sendable {
    private let counts: Locked<[Int]>
    init(threads: Int) { counts = Locked([Int](repeating: 0, count: threads)) }
    func add(_ thread: Int, _ n: Int) { counts.withLock { $0[thread] += n } }
    var perThread: [Int] { counts.withLock { $0 } }
    var total: Int { perThread.reduce(0, +) }
}

/// Bytes one thread captures and another reads afterwards.
final class CapturedBytes: Sendable {
    private let data = Locked(Data())
    func set(_ value: Data) { data.withLock { $0 = value } }
    func get() -> Data { data.withLock { $0 } }
}

/// Samples per thread, counted on the sampler's drain thread.
final class SampleCounts: Sendable {
    private let counts = Locked([Int32: Int]())
    var onSample: @Sendable (SampledStack) -> Void { { sample in self.counts.withLock { $0[sample.threadID, default: 0] += 1 } } }
    func of(thread: Int32) -> Int { counts.withLock { $0[thread] ?? 0 } }
}
