#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchReport

/// While `record` runs, one updating line on standard error when it is a terminal: seconds elapsed
/// (of the planned ones) and how much of the trace the recorder has written, four times a second.
/// Nothing when standard error is not a terminal (CI logs, pipes), so logs hold only the summary.
final class RecordingProgress: @unchecked Sendable {
    // @unchecked: `stopped` is only touched under `lock`; the rest is immutable after init.
    private let lock = NSCondition()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)
    private let label: String
    private let path: String
    private let plannedSeconds: Double?
    private let started = Date()

    private init(label: String, path: String, plannedSeconds: Double?) {
        self.label = label; self.path = path; self.plannedSeconds = plannedSeconds
    }

    /// Starts the display when standard error is a terminal; nil (and nothing shown) otherwise.
    static func start(_ label: String, writingTo path: String, plannedSeconds: Double? = nil) -> RecordingProgress? {
        guard isatty(2) == 1 else { return nil }
        let progress = RecordingProgress(label: label, path: path, plannedSeconds: plannedSeconds)
        let thread = Thread { progress.run() }
        thread.name = "hitch-progress"
        thread.start()
        return progress
    }

    /// Stops the display and clears its line, so the summary that follows starts at column 0.
    func stop() {
        lock.lock(); stopped = true; lock.signal(); lock.unlock()
        done.wait()
        writeStandardError("\r\u{1B}[K")
    }

    private func run() {
        defer { done.signal() }
        while true {
            writeStandardError("\r\u{1B}[K" + line())
            lock.lock()
            if !stopped { _ = lock.wait(until: Date().addingTimeInterval(0.25)) }
            let finished = stopped
            lock.unlock()
            if finished { return }
        }
    }

    /// "recording feed naive: 3.2 s of 12 s, 1.4 MB written".
    func line() -> String {
        let elapsed = Date().timeIntervalSince(started)
        var status = stat()
        let bytes = stat(path, &status) == 0 ? Double(status.st_size) : 0
        let seconds = Format.fixed(elapsed, 1) + " s" + (plannedSeconds.map { " of " + Format.number($0, decimals: 2) + " s" } ?? "")
        return "recording \(label): \(seconds), \(Format.fixed(bytes / 1e6, 1)) MB written"
    }
}
