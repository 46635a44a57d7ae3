import CHitchSupport
import Foundation
import Synchronization

/// How the recorder's hang watchdog watches the frame loop's thread (docs/FORMAT.md "Hangs").
public struct HangWatchdogConfiguration: Sendable, Equatable {
    /// Away from its loop this long, the thread is captured: its stack and what the kernel says it
    /// is doing. The default, Apple's 100 ms, is the lower tier's (brief unresponsiveness), so both
    /// tiers of the analysis have captures.
    public var thresholdMs: Int
    /// While it stays away, a capture every this long...
    public var captureIntervalMs: Int
    /// ...at most this many per stretch (then only its end is written).
    public var capturesPerHang: Int

    public init(thresholdMs: Int = 100, captureIntervalMs: Int = 50, capturesPerHang: Int = 40) {
        self.thresholdMs = thresholdMs
        self.captureIntervalMs = captureIntervalMs
        self.capturesPerHang = capturesPerHang
    }
}

/// The watchdog's Swift side (the C side is `hitch_watchdog.h`): a thread that waits for the C
/// watchdog's reports and puts each in the recording at once, through the recorder's side queue
/// (the writer writes it within a flush interval): a capture as a `hitch.hang` `hangStack` instant
/// with its stack, the end of a stretch as a `hang` duration. A process killed during a hang keeps
/// the captures written before the kill: the analysis reads such a hang as lasting to the recording's end.
final class HangWatchdog: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let cpuNs = Atomic<UInt64>(0)

    private init() {}

    /// Starts watching for `recorder`; nil when a watchdog is already running or the configuration is invalid.
    static func start(_ configuration: HangWatchdogConfiguration, recorder: TraceRecorder) -> HangWatchdog? {
        let ticksPerNs = Double(TraceClock.ticksPerSecond) / 1e9
        let threshold = UInt64(Double(max(configuration.thresholdMs, 1)) * 1e6 * ticksPerNs)
        let interval = UInt64(Double(max(configuration.captureIntervalMs, 1)) * 1e6 * ticksPerNs)
        guard hitch_watchdog_start(threshold, interval, UInt32(clamping: max(configuration.capturesPerHang, 0)), TraceClock.ticksPerSecond) == 0 else {
            return nil
        }
        recorder.setMetadata(.hangWatchdogMs, String(max(configuration.thresholdMs, 1)))
        let watchdog = HangWatchdog()
        let thread = Thread { watchdog.run(recorder: recorder) }
        thread.name = "hitch-watchdog"
        thread.start()
        return watchdog
    }

    /// Stops watching and waits for the thread: the end of a stretch the loop's thread already came
    /// back from is recorded first. Returns the CPU time the watchdog thread used, in nanoseconds.
    func stop() -> UInt64 {
        hitch_watchdog_stop()
        finished.wait()
        return cpuNs.load(ordering: .acquiring)
    }

    private func run(recorder: TraceRecorder) {
        let frames = UnsafeMutablePointer<UInt64>.allocate(capacity: Int(HITCH_MAX_FRAMES))
        defer { cpuNs.store(hitch_thread_cpu_ns(), ordering: .releasing); frames.deallocate(); finished.signal() }
        var report = hitch_hang_report()
        while hitch_watchdog_next(&report, frames, UInt32(HITCH_MAX_FRAMES)) == 1 {
            switch Int32(report.kind) {
            case Int32(HITCH_HANG_CAPTURE):
                var stack: StackID? = nil
                if report.depth > 0 {
                    let addresses = Array(UnsafeBufferPointer(start: frames, count: Int(report.depth)))
                    stack = recorder.defineStack(addresses: addresses)
                    SymbolDefinitions.define(addresses, in: recorder)
                }
                recorder.recordHangStack(threadID: report.tid, at: report.at_ticks, since: report.since_ticks, stack: stack,
                                         systemCall: Self.text(report.system_call), waitChannel: Self.text(report.wait_channel),
                                         schedState: report.state == 0 ? "" : String(UnicodeScalar(UInt8(bitPattern: report.state))))
            case Int32(HITCH_HANG_ENDED):
                recorder.recordHang(threadID: report.tid, from: report.since_ticks, to: report.at_ticks, source: HangSourceWord.watchdog)
            default:
                break
            }
        }
    }

    /// A fixed C character array as a String (up to its first NUL).
    private static func text<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
