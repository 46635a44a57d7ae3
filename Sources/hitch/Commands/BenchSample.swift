import Foundation
import enum HitchAnalysis.JSONOutput
import CHitchSupport
import HitchTrace
import Synchronization

// `hitch bench sample`: the sampling profiler's cost, per sample source, measured side by side in
// one run. The same fixed amount of busy work runs in interleaved rounds: once unsampled and once
// under each source (the order rotating every round), each sampled repetition recording into a
// real trace, so the drain thread's unwinding and the writer run as in use. Cost is CPU time of the
// whole process (getrusage: every thread, the drain thread included; the kernel's own sampling work
// is charged to the sampled thread), so time the work spends descheduled on a busy machine does not
// count; a source's overhead is the median over rounds of (sampled / unsampled - 1), with a
// distribution-free 95% interval for that median.
enum BenchSample: Subcommand {
    static let name = "sample"
    static let summary = "Sampling profiler overhead on a busy loop (default 250 Hz), beside the floor."
    static let help = """
    USAGE: hitch bench sample [--rate HZ] [--seconds S] [--stack-copy-bytes N] [--source both|signal|perf] [--format text|json]

    Runs a busy call chain (outer -> middle -> hot) on the main thread for a fixed amount of work,
    in interleaved rounds (at least 10): once without the sampler and once under each sample source
    at HZ, the order rotating every round, for about S seconds of CPU time in all. Reports, per source, the
    overhead in process CPU time (every thread, the sampler's drain thread and its unwinding
    included) as the median over rounds with a 95% interval, the samples taken against the samples
    expected (HZ x the main thread's CPU time), the share of samples whose stack names the hot
    function, the time per sample in the signal handler and on the drain (P50/P99), how unwinds
    ended, and the machine's load average. `defaultSource` is the source a sampler picks here
    unless told (perf events where the kernel permits them).

    OPTIONS:
      --rate HZ             Samples per second (default: \(SamplerConfiguration.defaultRateHz)).
      --seconds S           Total CPU time of the work, 1 to 600 (default: 15; each repetition is
                            about 250 ms of CPU time, so wall time is longer on a busy machine).
      --stack-copy-bytes N  Stack bytes copied per sample, 256 to 262144 (default: \(SamplerConfiguration.defaultStackCopyBytes)).
      --source both|signal|perf
                            The sources to measure (default: both; perf events only where permitted).
      --floor yes|no        Also run each source's floor (default: yes): the same rate with none of
                            our work (a timer signal the handler dismisses at once; a perf event
                            without registers or stack), so the overhead reads as floor + ours.
      --drain-interval-ms N How often the drain thread wakes, 1 to 1000 ms, or 0 for the sampler's
                            choice from the rate and ring size (default: 0).
      --format text|json    Output format (default: text).
      -h, --help            Show this help.

    EXAMPLE:
      hitch bench sample --format json
    """

    struct SourceResult: Codable {
        var sampleSource, sourceReason: String
        var sampledCPUSeconds: Double
        /// Median over rounds of (sampled CPU / unsampled CPU - 1), in percent, with its 95% interval.
        var overheadPercent, overheadPercentCI95Low, overheadPercentCI95High: Double
        /// The same median in wall time (reference only: it counts time the work spent descheduled).
        var wallOverheadPercent: Double
        var samplesExpected: Int
        var samplesTaken, samplesDropped, perfSamplesLost, timerOverruns: UInt64
        /// Unwinds, and how they ended.
        var samplesUnwound, unwoundComplete, unwindStackUnknown, unwindOffCopyEnd, unwindModulesChanged, unwindNoModule, unwindErrors: UInt64
        var offCopyEndShare: Double
        /// Stack bytes 99% of complete unwinds read (a power of two): the copy size that sufficed.
        var stackBytesNeededP99: UInt64
        /// In the signal handler per sample (0 for perf events: the kernel takes the sample).
        var handlerNsP50, handlerNsP99: Double
        /// On the drain thread per sample: read the snapshot or record, unwind it.
        var unwindNsP50, unwindNsP99: Double
        var hotFunctionShare: Double
        /// Process CPU time of one `Sampler.start` and one `stop` (median over rounds; stop includes
        /// unwinding the samples still in the rings): the per-session cost inside each repetition.
        var startCPUMicroseconds, stopCPUMicroseconds: Double
        /// The floor: the same rounds sampled at the same rate with none of the sampler's work (an
        /// empty-handed timer signal, or a bare perf event without registers or stack), as a median
        /// overhead over rounds with its 95% interval; nil with --floor no or where the floor could not start.
        var floorOverheadPercent, floorOverheadPercentCI95Low, floorOverheadPercentCI95High: Double?
        /// What the sampler adds above that floor: the median over rounds of
        /// (sampled CPU - floor CPU) / unsampled CPU, in percent, with its 95% interval.
        var aboveFloorPercent, aboveFloorPercentCI95Low, aboveFloorPercentCI95High: Double?
        /// The drain thread's CPU time as a share of the sampled thread's CPU time, in percent, and
        /// how often it woke (per second of the sampled thread's CPU time).
        var drainCPUPercent, drainWakeupsPerSecond: Double
        /// The share of unwinds answered from the memo of an earlier identical unwind.
        var unwindMemoHitShare: Double
    }

    struct Result: Codable {
        var rateHz, stackCopyBytes: Int
        /// The drain thread's wake-up interval (ms); 0: the sampler's automatic choice.
        var drainIntervalMs: Int
        var rounds: Int
        var loadAverageBefore, loadAverageAfter: String
        var unsampledCPUSeconds: Double
        /// The source a sampler uses here unless told, and why.
        var defaultSource, defaultSourceReason: String
        var sources: [SourceResult]
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let rate = try arguments.number("--rate", in: 1...10_000, default: SamplerConfiguration.defaultRateHz)
        let seconds = try arguments.number("--seconds", in: 1.0...600.0, default: 15.0)
        let copyBytes = try arguments.number("--stack-copy-bytes", in: 256...262_144, default: Int(SamplerConfiguration.defaultStackCopyBytes))
        let which = try arguments.choice("--source", ["both", "signal", "perf"], default: "both")
        let withFloor = try arguments.choice("--floor", ["yes", "no"], default: "yes") == "yes"
        let drainInterval = try arguments.number("--drain-interval-ms", in: 0...1000, default: 0)
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch bench sample' takes no arguments (see --help)") }
        let result = try measure(rateHz: rate, seconds: seconds, stackCopyBytes: copyBytes, which: which,
                                 withFloor: withFloor, drainIntervalMs: drainInterval)
        if format == "json" {
            try writeStandardOutput(JSONOutput.text(result))
        } else {
            func f(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
            var lines = ["""
            rate          \(result.rateHz) Hz, \(result.rounds) rounds (unsampled, each source and its floor, interleaved), \(result.stackCopyBytes)-byte stack copies, drain interval \(result.drainIntervalMs == 0 ? "automatic" : "\(result.drainIntervalMs) ms")
            load average  \(result.loadAverageBefore) before, \(result.loadAverageAfter) after
            default       \(result.defaultSource): \(result.defaultSourceReason)
            unsampled     \(f(result.unsampledCPUSeconds, 3)) s CPU
            """]
            for source in result.sources {
                lines.append("""
                \(source.sampleSource):
                  overhead      \(f(source.overheadPercent))% of CPU time (median of rounds; 95% interval \(f(source.overheadPercentCI95Low)) ... \(f(source.overheadPercentCI95High))%); wall time \(f(source.wallOverheadPercent))%; \(f(source.sampledCPUSeconds, 3)) s CPU sampled
                  floor         \(source.floorOverheadPercent.map { "\(f($0))% (95% interval \(f(source.floorOverheadPercentCI95Low ?? 0)) ... \(f(source.floorOverheadPercentCI95High ?? 0))%) taking the samples with none of our work; ours = floor + \(f(source.aboveFloorPercent ?? 0))% (\(f(source.aboveFloorPercentCI95Low ?? 0)) ... \(f(source.aboveFloorPercentCI95High ?? 0))%)" } ?? "not measured")
                  drain thread  \(f(source.drainCPUPercent))% of the sampled thread's CPU time, \(f(source.drainWakeupsPerSecond, 1)) wake-ups per second, \(f(source.unwindMemoHitShare * 100, 1))% of unwinds from the memo
                  samples       \(source.samplesTaken) taken of \(source.samplesExpected) expected (\(source.samplesDropped) dropped, \(source.perfSamplesLost) of them lost by the kernel; \(source.timerOverruns) timer overruns)
                  unwinds       \(source.unwoundComplete) complete of \(source.samplesUnwound); stopped early: \(source.unwindOffCopyEnd) off the copy's end (\(f(source.offCopyEndShare * 100))%; 99% needed at most \(source.stackBytesNeededP99) bytes), \(source.unwindStackUnknown) stack unknown, \(source.unwindModulesChanged) modules changed, \(source.unwindNoModule) outside modules, \(source.unwindErrors) errors
                  per sample    handler \(f(source.handlerNsP50, 0)) ns P50, \(f(source.handlerNsP99, 0)) ns P99; drain \(f(source.unwindNsP50, 0)) ns P50, \(f(source.unwindNsP99, 0)) ns P99
                  hot function  \(f(source.hotFunctionShare * 100, 1))% of samples
                  per session   start \(f(source.startCPUMicroseconds, 0)) us, stop \(f(source.stopCPUMicroseconds, 0)) us of CPU
                """)
            }
            try writeStandardOutputLine(lines.joined(separator: "\n"))
        }
        return .ok
    }

    /// Process CPU time (every thread) and wall time, in seconds.
    private static func clocks() -> (cpu: Double, wall: Double) {
        (BenchClock.processCPUSeconds(), Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
    }

    private static func loadAverage() -> String { BenchClock.loadAverages().joined(separator: " ") }

    /// The median of `values` and a distribution-free 95% interval for it: the order statistics
    /// k and n + 1 - k with k the largest rank where P(Binomial(n, 1/2) < k) <= 0.025.
    static func medianWithInterval(_ values: [Double]) -> (median: Double, low: Double, high: Double) {
        let sorted = values.sorted()
        let n = sorted.count
        guard n > 0 else { return (0, 0, 0) }
        let median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
        var k = 0, cumulative = 0.0, term = pow(0.5, Double(n)) // P(X = 0)
        while k < n / 2 && cumulative + term <= 0.025 {
            cumulative += term
            term *= Double(n - k) / Double(k + 1)
            k += 1
        }
        // k order statistics are excluded from each end (k = 0: the interval is the whole range).
        return (median, sorted[max(k - 1, 0)], sorted[min(n - k, n - 1)])
    }

    /// One source's repetitions, summed over rounds.
    private final class SourceRuns {
        let source: SampleSource
        let collected = CollectedStacks()
        var reason = ""
        var cpuRatios: [Double] = [], wallRatios: [Double] = []
        var floorRatios: [Double] = [], aboveFloor: [Double] = []
        var floorAvailable = false
        var cpu = 0.0, threadCPU = 0.0
        var startCPU: [Double] = [], stopCPU: [Double] = []
        var statistics: [SamplerStatistics] = []
        init(source: SampleSource) { self.source = source }

        func result(rateHz: Int) -> SourceResult {
            let overhead = BenchSample.medianWithInterval(cpuRatios)
            var failures = UnwindFailures()
            statistics.forEach { failures.add($0.unwindFailures) }
            func sum(_ value: (SamplerStatistics) -> UInt64) -> UInt64 { statistics.reduce(0) { $0 + value($1) } }
            func median(_ value: (SamplerStatistics) -> Double) -> Double { BenchSample.medianWithInterval(statistics.map(value)).median }
            let unwound = sum(\.samplesUnwound)
            let floor = floorAvailable ? BenchSample.medianWithInterval(floorRatios) : nil
            let above = floorAvailable ? BenchSample.medianWithInterval(aboveFloor) : nil
            let drainCPU = statistics.reduce(0) { $0 + $1.drainCPUSeconds }
            return SourceResult(
                sampleSource: source.rawValue, sourceReason: reason, sampledCPUSeconds: cpu,
                overheadPercent: overhead.median, overheadPercentCI95Low: overhead.low, overheadPercentCI95High: overhead.high,
                wallOverheadPercent: BenchSample.medianWithInterval(wallRatios).median,
                samplesExpected: Int((threadCPU * Double(rateHz)).rounded()),
                samplesTaken: sum(\.samplesTaken), samplesDropped: sum(\.samplesDropped), perfSamplesLost: sum(\.perfSamplesLost),
                timerOverruns: sum(\.timerOverruns), samplesUnwound: unwound, unwoundComplete: unwound - failures.total,
                unwindStackUnknown: failures.stackUnknown, unwindOffCopyEnd: failures.offCopyEnd,
                unwindModulesChanged: failures.modulesChanged, unwindNoModule: failures.noModule, unwindErrors: failures.errors,
                offCopyEndShare: unwound == 0 ? 0 : Double(failures.offCopyEnd) / Double(unwound),
                stackBytesNeededP99: statistics.map(\.stackBytesNeededP99).max() ?? 0,
                handlerNsP50: median(\.handlerNsP50), handlerNsP99: median(\.handlerNsP99),
                unwindNsP50: median(\.unwindNsP50), unwindNsP99: median(\.unwindNsP99),
                hotFunctionShare: collected.share(containing: "BenchSampleWorkload.hot("),
                startCPUMicroseconds: BenchSample.medianWithInterval(startCPU).median * 1e6,
                stopCPUMicroseconds: BenchSample.medianWithInterval(stopCPU).median * 1e6,
                floorOverheadPercent: floor?.median, floorOverheadPercentCI95Low: floor?.low, floorOverheadPercentCI95High: floor?.high,
                aboveFloorPercent: above?.median, aboveFloorPercentCI95Low: above?.low, aboveFloorPercentCI95High: above?.high,
                drainCPUPercent: threadCPU > 0 ? drainCPU / threadCPU * 100 : 0,
                drainWakeupsPerSecond: threadCPU > 0 ? Double(sum(\.drainWakeups)) / threadCPU : 0,
                unwindMemoHitShare: unwound == 0 ? 0 : Double(sum(\.unwindMemoHits)) / Double(unwound))
        }
    }

    /// What one repetition runs under.
    private enum Variant {
        case unsampled
        case sampled(SourceRuns)
        /// The source's floor: the same rate, none of the sampler's work.
        case floor(SourceRuns)
    }

    static func measure(rateHz: Int, seconds: Double, stackCopyBytes: Int, which: String, withFloor: Bool,
                        drainIntervalMs: Int) throws -> Result {
        func startSampler(rateHz: Int, stackCopyBytes: Int, source: SampleSource?, recorder: TraceRecorder?,
                          collected: CollectedStacks?) throws -> Sampler {
            try BenchSample.startSampler(rateHz: rateHz, stackCopyBytes: stackCopyBytes, drainIntervalMs: drainIntervalMs,
                                         source: source, recorder: recorder, collected: collected)
        }
        // The source a sampler picks unless told (one short session finds out).
        let probe = try startSampler(rateHz: rateHz, stackCopyBytes: stackCopyBytes, source: nil, recorder: nil, collected: nil)
        probe.stop()
        let defaultSource = (probe.source, probe.sourceReason)
        var sources: [SampleSource] = which == "signal" ? [.timerSignal] : which == "perf" ? [.perfEvent] : [.timerSignal, .perfEvent]
        if which == "both" {
            // Perf events refused here (not merely unchosen: HITCH_SAMPLER_SOURCE may force the signal).
            let perf = try? startSampler(rateHz: rateHz, stackCopyBytes: stackCopyBytes, source: .perfEvent, recorder: nil, collected: nil)
            if let perf { perf.stop() } else { sources = [.timerSignal] }
        }

        // Size one repetition to about 250 ms of the thread's CPU time (not wall time: on a loaded
        // machine a wall-time budget shrinks the work until each session's fixed start/stop cost,
        // reported separately, dominates the ratio).
        let probeStart = BenchClock.threadCPUSeconds()
        var probeIterations = 0
        while BenchClock.threadCPUSeconds() - probeStart < 0.05 {
            BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: 10, seed: probeIterations))
            probeIterations += 10
        }
        let iterationsPerRound = max(probeIterations * 5, 10)
        let rounds = max(Int(seconds / (0.25 * Double(sources.count * (withFloor ? 2 : 1) + 1))), 10)

        let tracePath = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-bench-sample-\(getpid()).fxt").path
        defer { unlink(tracePath) }
        let recorder: TraceRecorder
        do { recorder = try TraceRecorder.start(path: tracePath) } catch { throw CLIError("cannot record to \(tracePath): \(error)") }
        let loadBefore = loadAverage()

        // One untimed sampled repetition per source first: the first samples load each image's
        // symbol table and fill the unwinder's caches, a one-time cost that is not the sampler's
        // steady-state overhead.
        let runs = sources.map(SourceRuns.init)
        for run in runs {
            let warmUp = try startSampler(rateHz: rateHz, stackCopyBytes: stackCopyBytes, source: run.source, recorder: recorder, collected: CollectedStacks())
            run.reason = warmUp.sourceReason
            BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: iterationsPerRound, seed: -1))
            warmUp.stop()
        }

        // A floor that cannot start here (perf events refused) is left out, not guessed.
        if withFloor {
            for run in runs {
                let code = floorSourceCode(run.source)
                if hitch_sampler_floor_start(code, UInt32(rateHz)) == 0 { hitch_sampler_floor_stop(); run.floorAvailable = true }
            }
        }

        var unsampledCPU = 0.0
        let variants: [Variant] = [.unsampled] + runs.map { .sampled($0) } + runs.filter(\.floorAvailable).map { .floor($0) }
        for round in 0..<rounds {
            var cost: [(cpu: Double, wall: Double)] = Array(repeating: (0, 0), count: variants.count)
            // Rotate the order every round so drift in the machine's speed falls on every variant.
            for step in 0..<variants.count {
                let index = (step + round) % variants.count
                let before = clocks()
                let threadBefore = BenchClock.threadCPUSeconds()
                var sampler: Sampler?
                switch variants[index] {
                case .unsampled: break
                case .sampled(let run):
                    sampler = try startSampler(rateHz: rateHz, stackCopyBytes: stackCopyBytes, source: run.source, recorder: recorder, collected: run.collected)
                case .floor(let run):
                    let code = hitch_sampler_floor_start(floorSourceCode(run.source), UInt32(rateHz))
                    if code != 0 { throw CLIError("cannot start the \(run.source.rawValue) floor: \(String(cString: strerror(code)))") }
                }
                let started = clocks()
                BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: iterationsPerRound, seed: round))
                let threadCPU = BenchClock.threadCPUSeconds() - threadBefore
                switch variants[index] {
                case .unsampled: break
                case .sampled(let run):
                    let stopping = clocks()
                    run.statistics.append(sampler!.stop()) // waits for the drain thread to unwind the rest
                    run.stopCPU.append(clocks().cpu - stopping.cpu)
                    run.startCPU.append(started.cpu - before.cpu)
                    run.threadCPU += threadCPU
                case .floor:
                    hitch_sampler_floor_stop()
                }
                let after = clocks()
                cost[index] = (after.cpu - before.cpu, after.wall - before.wall)
            }
            unsampledCPU += cost[0].cpu
            for (index, variant) in variants.enumerated() {
                let measured = cost[index]
                switch variant {
                case .unsampled: break
                case .sampled(let run):
                    run.cpu += measured.cpu
                    run.cpuRatios.append((measured.cpu / cost[0].cpu - 1) * 100)
                    run.wallRatios.append((measured.wall / cost[0].wall - 1) * 100)
                    if let floorIndex = variants.firstIndex(where: { if case .floor(let other) = $0 { other === run } else { false } }) {
                        run.floorRatios.append((cost[floorIndex].cpu / cost[0].cpu - 1) * 100)
                        run.aboveFloor.append((measured.cpu - cost[floorIndex].cpu) / cost[0].cpu * 100)
                    }
                case .floor: break
                }
            }
        }
        _ = try? recorder.stop()
        return Result(rateHz: rateHz, stackCopyBytes: stackCopyBytes, drainIntervalMs: drainIntervalMs, rounds: rounds,
                      loadAverageBefore: loadBefore, loadAverageAfter: loadAverage(), unsampledCPUSeconds: unsampledCPU,
                      defaultSource: defaultSource.0.rawValue, defaultSourceReason: defaultSource.1,
                      sources: runs.map { $0.result(rateHz: rateHz) })
    }

    private static func floorSourceCode(_ source: SampleSource) -> UInt32 {
        source == .perfEvent ? UInt32(HITCH_SAMPLER_SOURCE_PERF) : UInt32(HITCH_SAMPLER_SOURCE_SIGNAL)
    }

    private static func startSampler(rateHz: Int, stackCopyBytes: Int, drainIntervalMs: Int, source: SampleSource?,
                                     recorder: TraceRecorder?, collected: CollectedStacks?) throws -> Sampler {
        do {
            return try Sampler.start(.init(rateHz: rateHz, threads: .main, drainIntervalMs: drainIntervalMs,
                                           stackCopyBytes: stackCopyBytes, source: source),
                                     recorder: recorder, onSample: collected?.add)
        } catch {
            throw CLIError("cannot start the sampler: \(error)")
        }
    }
}

/// The stacks the sampler saw, counted by stack; named after the run (off the measured path).
private final class CollectedStacks: Sendable {
    private let counts = Mutex<[[UInt64]: Int]>([:])

    var add: @Sendable (SampledStack) -> Void { { sample in self.counts.withLock { $0[sample.addresses, default: 0] += 1 } } }

    func share(containing function: String) -> Double {
        let counts = self.counts.withLock { $0 }
        var names: [UInt64: String] = [:]
        var total = 0, matching = 0
        for (stack, count) in counts {
            total += count
            let hit = stack.contains { address in
                if names[address] == nil { names[address] = Symbolicator.resolve(address)?.function ?? "" }
                return names[address]!.contains(function)
            }
            if hit { matching += count }
        }
        return total == 0 ? 0 : Double(matching) / Double(total)
    }
}

/// The measured busy work: a call chain the sampler must attribute to `hot`.
enum BenchSampleWorkload {
    @inline(never) static func hot(_ seed: Int) -> Int {
        var value = seed
        for step in 0..<20_000 { value = value &* 6364136223846793005 &+ step }
        return value
    }

    @inline(never) static func middle(_ seed: Int) -> Int { hot(seed) &+ 1 }

    /// `seed` differs per call so the optimizer cannot hoist a call out of its loop as invariant.
    @inline(never) static func outer(iterations: Int, seed: Int) -> Int {
        var total = 0
        for step in 0..<iterations { total &+= middle(seed &* 1_000_003 &+ step) }
        return total
    }

    /// Keeps the optimizer from discarding the work.
    @inline(never) static func consume(_ value: Int) {
        if value == 0x5eed_5eed { print("") }
    }
}
