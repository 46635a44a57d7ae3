// `hitch record feed`: runs the 10,000-row search-and-scroll feed on the headless runtime in real
// time and writes its trace.
import HeadlessUI
import HitchTrace
import HitchWorkloads

enum RecordFeed: Subcommand {
    static let name = "feed"
    static let summary = "The 10,000-row search-and-scroll feed (see 'hitch record feed --help')."
    static let help = """
    USAGE: hitch record feed --variant naive|tuned [--refresh HZ] -o FILE [options]

    Types a query into a search field above a 10,000-row feed one character at a time, pauses,
    then scrolls the results with flings, on a headless declarative UI runtime driven by a display
    link at HZ. The session runs in real time (--seconds of wall time) and is recorded to FILE. On a
    terminal, one line shows the seconds elapsed and the trace's size as it records; piped or in a
    CI log, only the closing summary is printed.

    OPTIONS:
      --variant naive|tuned  naive: every keystroke filters, sorts and groups all rows on the main
                             thread, ids are regenerated per snapshot, thumbnails decode at full
                             size in the row body, one broad model invalidates every row.
                             tuned: the search runs off the main actor behind a request generation
                             (stale results dropped), stable ids, thumbnails decoded off-main and
                             cached at display size, narrow invalidation. (required)
      --refresh HZ           Display refresh rate, 1 to 1000 (default 120).
      -o, --output FILE      The trace to write (.fxt). (required)
      --seconds S            Session length in seconds, 2 to 600 (default 12).
      --rows N               Rows in the feed, 1 to 1000000 (default 10000).
      --seed N               Data and script seed (default 1).
      --backtraces           Capture the writer's stack with every invalidation.
      --sample-rate HZ       Sample the main thread's stack at HZ, 0 to 10000 (default \(SamplerConfiguration.defaultRateHz); 0: off).
      -h, --help             Show this help.

    EXAMPLES:
      hitch record feed --variant naive --refresh 120 -o Traces/feed-naive-120hz.fxt
      hitch analyze Traces/feed-naive-120hz.fxt --refresh 60,120
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let variantName = try arguments.option("--variant") else {
            throw CLIError("option '--variant' is required (naive or tuned)")
        }
        guard let variant = FeedVariant(rawValue: variantName) else {
            throw CLIError("option '--variant' must be one of naive, tuned; got '\(variantName)'")
        }
        let refresh = try arguments.recordingRefreshRate()
        let seconds = try arguments.number("--seconds", in: 2.0...600.0, default: 12.0)
        let rows = try arguments.number("--rows", in: 1...1_000_000, default: 10_000)
        let seed = try arguments.number("--seed", in: UInt64.min...UInt64.max, default: 1)
        let backtraces = arguments.flag("--backtraces")
        let sampleRateHz = try arguments.number("--sample-rate", in: 0...10_000, default: SamplerConfiguration.defaultRateHz)
        let output = try arguments.output()
        _ = try arguments.positionals("record feed", count: 0...0, what: "no arguments")
        guard let output, output != "-" else { throw CLIError("option '-o' (the trace file to write) is required") }

        let configuration = FeedConfiguration(variant: variant, refreshRateHz: refresh, seconds: seconds, rows: rows,
                                              seed: seed, captureWriterStacks: backtraces)
        return try MainActor.assumeIsolated {
            let workload = FeedWorkload(configuration: configuration)
            let recorder: TraceRecorder
            do {
                recorder = try TraceRecorder.start(path: output)
            } catch {
                throw CLIError("cannot record to '\(output)': \(error)")
            }
            Trace.setCurrentThreadName("main")
            Backtrace.isEnabled = backtraces
            for (key, value): (MetadataKey, String) in [(.workload, "feed"), (.variant, variant.rawValue), (.refreshRateHz, "\(Int(refresh))"),
                                 (.rows, "\(rows)"), (.seed, "\(seed)"), (.seconds, "\(seconds)"),
                                 (.backtraces, "\(backtraces)")] {
                recorder.setMetadata(key, value)
            }
            // The main thread's stacks, so the analyzer can say what it was doing in each hitch.
            let sampler = try sampleRateHz == 0 ? nil : startSampler(rateHz: sampleRateHz, recorder: recorder)
            let progress = RecordingProgress.start("feed \(variant.rawValue)", writingTo: output, plannedSeconds: seconds)
            let summary = workload.run()
            progress?.stop()
            sampler?.stop()
            let written: TraceRecorder.Summary
            do {
                written = try recorder.stop()
            } catch {
                throw CLIError("writing '\(output)' failed: \(error)")
            }
            writeStandardError("""
            feed \(variant.rawValue) @ \(Int(refresh)) Hz: \(summary.frames) frames (\(summary.presentedFrames) presented) \
            in \((summary.durationSeconds * 10).rounded() / 10) s; \(summary.keystrokes) keystrokes, query '\(summary.finalQuery)' \
            -> \(summary.finalResultCount) rows; \(summary.publishedSnapshots) snapshots published, \
            \(summary.staleResultsDropped) stale dropped; \(written.eventCount) events (\(written.droppedEventCount) dropped) -> \(output)

            """)
            return .ok
        }
    }

    private static func startSampler(rateHz: Int, recorder: TraceRecorder) throws -> Sampler {
        do {
            return try Sampler.start(SamplerConfiguration(rateHz: rateHz, threads: .main), recorder: recorder)
        } catch {
            throw CLIError("cannot start the sampler: \(error)")
        }
    }
}
