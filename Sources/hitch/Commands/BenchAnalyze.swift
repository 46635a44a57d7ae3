import Foundation
import HitchAnalysis
import HitchReader
import HitchTrace

// `hitch bench analyze`: generates a trace with the foundation's TraceFileWriter, then measures,
// side by side in one run, the bare reader and the full analysis over the same file: events/s,
// their ratio, and the analysis' peak resident memory (VmHWM, reset before the analysis).
// Rates are given on the measuring thread's CPU time (the target is judged on it: the machine is
// shared, and wall time counts other processes' time slices) and on wall time.
enum BenchAnalyze: Subcommand {
    static let name = "analyze"
    static let summary = "Analyzer throughput and resident memory."
    static let help = """
    USAGE: hitch bench analyze [--size 512MB] [--trace FILE] [--keep] [--format text|json]

    Generates a synthetic feed-like trace of --size bytes (default 512MB; the issue's target is
    measured with --size 2GB), reads it once with the bare TraceReader and once through the full
    analyzer, and prints events/s for each, their ratio and the analyzer's peak resident memory.
    Events/s are on the thread's CPU time (CLOCK_THREAD_CPUTIME_ID; the 20 M events/s target is
    judged on these) and, in the *Wall keys, on wall time (lower when the machine is shared).

    OPTIONS:
      --size SIZE     Trace size to generate (default 512MB).
      --trace FILE    Where to write the trace (default a temporary file, removed afterwards).
      --keep          Keep the generated trace.
      --format FMT    text (default) or json. JSON keys: traceBytes, events, readerEventsPerSecond,
                      readerEventsPerSecondWall, analyzeEventsPerSecond, analyzeEventsPerSecondWall,
                      analyzeToReaderRatio, analyzeSeconds, analyzeCPUSeconds, peakResidentMB,
                      baselineResidentMB, targetEventsPerSecond, targetPeakResidentMB.
      -h, --help      Show this help.

    EXAMPLES:
      hitch bench analyze --format json
      hitch bench analyze --size 2GB --format json
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let size = try Quantities.bytes(try arguments.option("--size") ?? "512MB", option: "--size")
        let keep = arguments.flag("--keep")
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let path = try arguments.option("--trace") ?? NSTemporaryDirectory() + "hitch-bench-analyze-\(getpid()).fxt"
        _ = try arguments.positionals("bench analyze", count: 0...0, what: "no arguments")
        defer { if !keep { unlink(path) } }

        let generateStart = BenchClock.monotonicSeconds()
        let writer: TraceFileWriter
        do { writer = try TraceFileWriter(path: path) } catch { throw CLIError("\(error)") }
        var generator = SyntheticTrace(seed: 7)
        _ = generator.write(to: writer, targetBytes: size)
        let bytes: UInt64
        do { bytes = try writer.close() } catch { throw CLIError("\(error)") }
        let generateSeconds = BenchClock.monotonicSeconds() - generateStart
        let baseline = Double(ProcessMemory.residentBytes) / 1_048_576

        // The bare reader over the file: the ceiling the analyzer runs against.
        var readerEvents = 0
        let readStart = BenchClock.monotonicSeconds(), readCPUStart = BenchClock.threadCPUSeconds()
        do {
            var reader = try TraceReader(path: path)
            var event = TraceEvent(timestampNs: 0, thread: ThreadID(rawValue: 0), payload: .droppedEvents(count: 0))
            while try reader.next(into: &event) { readerEvents += 1 }
        } catch { throw CLIError("\(error)") }
        let readSeconds = BenchClock.monotonicSeconds() - readStart, readCPUSeconds = BenchClock.threadCPUSeconds() - readCPUStart

        ProcessMemory.resetPeak()
        let analyzeStart = BenchClock.monotonicSeconds(), analyzeCPUStart = BenchClock.threadCPUSeconds()
        let analysis = try CommandContext(command: "bench analyze", options: AnalyzerOptions(), output: nil).analyze([path])
        let analyzeSeconds = BenchClock.monotonicSeconds() - analyzeStart, analyzeCPUSeconds = BenchClock.threadCPUSeconds() - analyzeCPUStart
        let peak = Double(ProcessMemory.peakResidentBytes) / 1_048_576

        let readerRate = Double(readerEvents) / readCPUSeconds
        let analyzeRate = Double(analysis.eventCount) / analyzeCPUSeconds
        let result: [(String, Double)] = [
            ("traceBytes", Double(bytes)),
            ("events", Double(analysis.eventCount)),
            ("generateSeconds", generateSeconds.rounded(decimals: 3)),
            ("readerEventsPerSecond", readerRate.rounded()),
            ("readerEventsPerSecondWall", (Double(readerEvents) / readSeconds).rounded()),
            ("analyzeEventsPerSecond", analyzeRate.rounded()),
            ("analyzeEventsPerSecondWall", (Double(analysis.eventCount) / analyzeSeconds).rounded()),
            ("analyzeToReaderRatio", (analyzeRate / readerRate).rounded(decimals: 3)),
            ("analyzeSeconds", analyzeSeconds.rounded(decimals: 3)),
            ("analyzeCPUSeconds", analyzeCPUSeconds.rounded(decimals: 3)),
            ("readerCPUSeconds", readCPUSeconds.rounded(decimals: 3)),
            ("peakResidentMB", peak.rounded(decimals: 1)),
            ("baselineResidentMB", baseline.rounded(decimals: 1)),
            ("frames", Double(analysis.recorded.frameCount)),
            ("targetEventsPerSecond", 20_000_000),
            ("targetPeakResidentMB", 200),
        ]
        if format == "json" {
            try writeStandardOutput(try JSONOutput.text(Dictionary(result, uniquingKeysWith: { first, _ in first })))
        } else {
            for (key, value) in result { try writeStandardOutputLine("\(key): \(jsonNumber(value))") }
        }
        return .ok
    }

    static func jsonNumber(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

}

private extension Double {
    func rounded(decimals: Int) -> Double {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}
