import Foundation
import enum HitchAnalysis.JSONOutput
import HitchTrace
import HitchWorkloads

// `hitch bench watchdog`: what the recorder's hang watchdog costs, on the bundled feed at 120 Hz,
// side by side in one run: the same recorded session with the watchdog on and off, interleaved
// (on, off, off, on, ...), so a change in the machine's load falls on both. Two figures: the
// watchdog thread's own CPU time as a share of the process's (exact, whatever the load), and the
// difference in process CPU time per frame between the two sides (everything the watchdog adds,
// its two stores per frame on the main thread included, but as noisy as the machine).
enum BenchWatchdog: Subcommand {
    static let name = "watchdog"
    static let summary = "The hang watchdog's cost on the feed at 120 Hz, side by side with it off."
    static let help = """
    USAGE: hitch bench watchdog [--variant tuned|naive] [--pairs N] [--seconds S] [--refresh HZ] [--format text|json]

    Records the feed's session (the bundled workload, in real time) 2N times, the hang watchdog on
    and off in turn (the order alternating every pair), and reports for each side the process's CPU
    time per frame (every thread: the feed's workers, the render thread, the recorder's writer, the
    watchdog), and for the watchdog side its thread's own CPU time. The watchdog's cost is that
    thread's CPU time as a share of the process's CPU time, exact on a busy machine; and the
    median over pairs of (on / off - 1) per frame, with a 95% interval, which holds everything it
    adds but moves with the machine's load (given before and after).

    OPTIONS:
      --variant tuned|naive  The feed to run (default tuned: a healthy app, so the watchdog only
                             watches; naive hangs, and the watchdog captures its stacks).
      --pairs N              Sessions on each side, 1 to 50 (default 3).
      --seconds S            Session length, 2 to 120 (default 6).
      --refresh HZ           Display refresh rate (default 120).
      --format text|json     Output format (default: text).
      -h, --help             Show this help.

    EXAMPLE:
      hitch bench watchdog --format json
    """

    struct Session: Codable {
        var watchdog: Bool
        var frames: Int
        var processCPUMs, processCPUMsPerFrame: Double
        /// The watchdog thread's CPU time (0 with it off).
        var watchdogCPUMs: Double
    }

    struct Result: Codable {
        var variant: String
        var refreshHz, pairs: Int
        var sessionSeconds: Double
        var sessions: [Session]
        /// The watchdog thread's CPU time / the process's CPU time over the sessions with it on, in percent.
        var watchdogThreadSharePercent: Double
        /// Median over pairs of (process CPU per frame on / off - 1), in percent, and its 95% interval.
        var processCPUOverheadPercent, processCPUOverheadPercentCI95Low, processCPUOverheadPercentCI95High: Double
        var watchdogThresholdMs: Int
        var loadAverageBefore, loadAverageAfter: String
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let variantName = try arguments.choice("--variant", ["tuned", "naive"], default: "tuned")
        let pairs = try arguments.number("--pairs", in: 1...50, default: 3)
        let seconds = try arguments.number("--seconds", in: 2.0...120.0, default: 6.0)
        let refresh = try arguments.recordingRefreshRate()
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch bench watchdog' takes no arguments (see --help)") }
        let result = try MainActor.assumeIsolated {
            try measure(variant: FeedVariant(rawValue: variantName)!, pairs: pairs, seconds: seconds, refreshHz: refresh)
        }
        if format == "json" {
            try writeStandardOutput(JSONOutput.text(result))
        } else {
            func f(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }
            let sessions = result.sessions.map { "  \($0.watchdog ? "on " : "off") \($0.frames) frames, \(f($0.processCPUMsPerFrame)) ms CPU per frame"
                + ($0.watchdog ? ", watchdog thread \(f($0.watchdogCPUMs)) ms" : "") }
            try writeStandardOutputLine((["feed \(result.variant) at \(result.refreshHz) Hz, \(result.pairs) pairs of \(f(result.sessionSeconds, 0)) s sessions"]
                + sessions + [
                "watchdog thread  \(f(result.watchdogThreadSharePercent))% of the process's CPU time (threshold \(result.watchdogThresholdMs) ms)",
                "process CPU      \(f(result.processCPUOverheadPercent, 2))% per frame with it on (median of pairs; 95% interval \(f(result.processCPUOverheadPercentCI95Low, 2)) ... \(f(result.processCPUOverheadPercentCI95High, 2))%)",
                "load average     \(result.loadAverageBefore) before, \(result.loadAverageAfter) after",
            ]).joined(separator: "\n"))
        }
        return .ok
    }

    @MainActor
    static func measure(variant: FeedVariant, pairs: Int, seconds: Double, refreshHz: Double) throws -> Result {
        let workload = FeedWorkload(configuration: FeedConfiguration(variant: variant, refreshRateHz: refreshHz, seconds: seconds))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-bench-watchdog-\(getpid()).fxt").path
        defer { unlink(path) }
        let loadBefore = BenchClock.loadAverages().joined(separator: " ")
        Trace.setCurrentThreadName("main")
        var sessions: [Session] = []
        for pair in 0..<pairs {
            for on in pair % 2 == 0 ? [true, false] : [false, true] {
                let configuration = TraceRecorder.Configuration(hangWatchdog: on ? HangWatchdogConfiguration() : nil)
                let cpuBefore = BenchClock.processCPUSeconds()
                let recorder: TraceRecorder
                do { recorder = try TraceRecorder.start(path: path, configuration: configuration) } catch { throw CLIError("cannot record to '\(path)': \(error)") }
                let summary = workload.run()
                let written = try recorder.stop()
                let cpuMs = (BenchClock.processCPUSeconds() - cpuBefore) * 1000
                sessions.append(Session(watchdog: on, frames: summary.frames, processCPUMs: cpuMs,
                                        processCPUMsPerFrame: cpuMs / Double(max(summary.frames, 1)),
                                        watchdogCPUMs: Double(written.hangWatchdogCPUNs) / 1e6))
            }
        }
        let onSessions = sessions.filter(\.watchdog), offSessions = sessions.filter { !$0.watchdog }
        let share = onSessions.map(\.watchdogCPUMs).reduce(0, +) / max(onSessions.map(\.processCPUMs).reduce(0, +), 1e-9) * 100
        let ratios = zip(onSessions, offSessions).map { ($0.processCPUMsPerFrame / max($1.processCPUMsPerFrame, 1e-9) - 1) * 100 }
        let overhead = BenchSample.medianWithInterval(ratios)
        return Result(variant: variant.rawValue, refreshHz: Int(refreshHz), pairs: pairs, sessionSeconds: seconds, sessions: sessions,
                      watchdogThreadSharePercent: share, processCPUOverheadPercent: overhead.median,
                      processCPUOverheadPercentCI95Low: overhead.low, processCPUOverheadPercentCI95High: overhead.high,
                      watchdogThresholdMs: HangWatchdogConfiguration().thresholdMs,
                      loadAverageBefore: loadBefore, loadAverageAfter: BenchClock.loadAverages().joined(separator: " "))
    }
}
