import Foundation
import HitchTrace
import Synchronization

// `hitch bench sample`: the sampling profiler's cost, measured side by side in one run. The same
// fixed amount of busy work runs in interleaved repetitions without and with sampling of the main
// thread (each sampled repetition records into a real trace, so the drain thread's unwinding and the
// writer run as in use). Cost is CPU time of the whole process (getrusage: every thread, the drain
// thread included), so time the work spends descheduled on a busy machine does not count; the
// overhead is the median over pairs of (sampled / unsampled - 1), with a distribution-free 95%
// interval for that median.
enum BenchSample: Subcommand {
    static let name = "sample"
    static let summary = "Sampling profiler overhead at 1 kHz."
    static let help = """
    USAGE: hitch bench sample [--rate HZ] [--seconds S] [--stack-copy-bytes N] [--format text|json]

    Runs a busy call chain (outer -> middle -> hot) on the main thread for a fixed amount of work,
    in interleaved repetitions without and with the sampler running at HZ (at least 10 of each),
    for about S seconds in all. Reports the overhead in process CPU time (every thread, the
    sampler's drain thread and its unwinding included) as the median over pairs with a 95%
    interval, the samples taken against the samples expected (HZ x the main thread's CPU time),
    the share of samples whose stack names the hot function, the signal handler's time per sample
    (P50/P99), how unwinds ended, and the machine's load average.

    OPTIONS:
      --rate HZ             Samples per second (default: 1000).
      --seconds S           Total benchmark time, 1 to 600 (default: 6).
      --stack-copy-bytes N  Stack bytes copied per sample, 256 to 262144 (default: \(SamplerConfiguration.defaultStackCopyBytes)).
      --format text|json    Output format (default: text).
      -h, --help            Show this help.

    EXAMPLE:
      hitch bench sample --format json
    """

    struct Result: Codable {
        var rateHz: Int
        var stackCopyBytes: Int
        var sampleSource: String
        var pairs: Int
        var loadAverageBefore: String
        var loadAverageAfter: String
        var unsampledCPUSeconds: Double
        var sampledCPUSeconds: Double
        /// Median over pairs of (sampled CPU / unsampled CPU - 1), in percent.
        var overheadPercent: Double
        var overheadPercentCI95Low: Double
        var overheadPercentCI95High: Double
        /// The same median in wall time (reference only: it counts time the work spent descheduled).
        var wallOverheadPercent: Double
        var samplesExpected: Int
        var samplesTaken: UInt64
        var samplesDropped: UInt64
        var timerOverruns: UInt64
        var samplesUnwound: UInt64
        var unwoundComplete: UInt64
        var unwindStackUnknown: UInt64
        var unwindOffCopyEnd: UInt64
        var unwindModulesChanged: UInt64
        var unwindNoModule: UInt64
        var unwindErrors: UInt64
        var offCopyEndShare: Double
        /// Stack bytes 99% of complete unwinds read (a power of two): the copy size that sufficed.
        var stackBytesNeededP99: UInt64
        var handlerNsP50: Double
        var handlerNsP99: Double
        var hotFunctionShare: Double
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let rate = try arguments.number("--rate", in: 1...10_000, default: 1000)
        let seconds = try arguments.number("--seconds", in: 1.0...600.0, default: 6.0)
        let copyBytes = try arguments.number("--stack-copy-bytes", in: 256...262_144, default: Int(SamplerConfiguration.defaultStackCopyBytes))
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch bench sample' takes no arguments (see --help)") }
        let result = try measure(rateHz: rate, seconds: seconds, stackCopyBytes: copyBytes)
        if format == "json" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            func f(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
            print("""
            rate          \(result.rateHz) Hz (\(result.sampleSource)), \(result.pairs) repetitions each way, \(result.stackCopyBytes)-byte stack copies
            load average  \(result.loadAverageBefore) before, \(result.loadAverageAfter) after
            CPU time      \(f(result.unsampledCPUSeconds, 3)) s unsampled, \(f(result.sampledCPUSeconds, 3)) s sampled (all threads)
            overhead      \(f(result.overheadPercent))% of CPU time (median of pairs; 95% interval \(f(result.overheadPercentCI95Low)) ... \(f(result.overheadPercentCI95High))%); wall time \(f(result.wallOverheadPercent))%
            samples       \(result.samplesTaken) taken of \(result.samplesExpected) expected (\(result.samplesDropped) dropped, \(result.timerOverruns) timer overruns)
            unwinds       \(result.unwoundComplete) complete of \(result.samplesUnwound); stopped early: \(result.unwindOffCopyEnd) off the copy's end (\(f(result.offCopyEndShare * 100))%; 99% needed at most \(result.stackBytesNeededP99) bytes), \(result.unwindStackUnknown) stack unknown, \(result.unwindModulesChanged) modules changed, \(result.unwindNoModule) outside modules, \(result.unwindErrors) errors
            handler       \(f(result.handlerNsP50, 0)) ns P50, \(f(result.handlerNsP99, 0)) ns P99
            hot function  \(f(result.hotFunctionShare * 100, 1))% of samples
            """)
        }
        return .ok
    }

    /// Process CPU time (every thread) and wall time, in seconds.
    private static func clocks() -> (cpu: Double, wall: Double) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return (cpu, Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
    }

    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "")
            .split(separator: " ").prefix(3).joined(separator: " ")
    }

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

    static func measure(rateHz: Int, seconds: Double, stackCopyBytes: Int) throws -> Result {
        // Size one repetition of work to about 150 ms.
        let probeStart = DispatchTime.now().uptimeNanoseconds
        var probeIterations = 0
        while DispatchTime.now().uptimeNanoseconds - probeStart < 50_000_000 {
            BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: 10, seed: probeIterations))
            probeIterations += 10
        }
        let iterationsPerRound = max(probeIterations * 3, 10)
        let pairs = max(Int(seconds / 0.3), 10)

        let tracePath = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-bench-sample-\(getpid()).fxt").path
        defer { unlink(tracePath) }
        let recorder: TraceRecorder
        do { recorder = try TraceRecorder.start(path: tracePath) } catch { throw CLIError("cannot record to \(tracePath): \(error)") }
        let collected = CollectedStacks()
        let loadBefore = loadAverage()

        // One untimed sampled round first: the first samples load each image's symbol table and
        // fill the unwinder's caches, a one-time cost that is not the sampler's steady-state overhead.
        let warmUp = try startSampler(rateHz: rateHz, stackCopyBytes: stackCopyBytes, recorder: recorder, collected: CollectedStacks())
        BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: iterationsPerRound, seed: -1))
        warmUp.stop()

        var cpuRatios: [Double] = [], wallRatios: [Double] = []
        var unsampledCPU = 0.0, sampledCPU = 0.0, sampledThreadCPU = 0.0
        var totals = (samplesTaken: UInt64(0), samplesDropped: UInt64(0), timerOverruns: UInt64(0), samplesUnwound: UInt64(0),
                      unwindFailures: UnwindFailures())
        var handlerP50: [Double] = [], handlerP99: [Double] = []
        var stackNeeded: UInt64 = 0
        for round in 0..<pairs {
            var cost: [Bool: (cpu: Double, wall: Double)] = [:]
            // Alternate the order (A B, B A, ...) so drift in the machine's speed falls on both sides.
            for sampled in (round % 2 == 0 ? [false, true] : [true, false]) {
                let before = clocks()
                let threadBefore = threadCPUSeconds()
                let sampler = sampled ? try startSampler(rateHz: rateHz, stackCopyBytes: stackCopyBytes, recorder: recorder, collected: collected) : nil
                BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: iterationsPerRound, seed: round))
                let threadCPU = threadCPUSeconds() - threadBefore
                if let sampler {
                    let statistics = sampler.stop() // waits for the drain thread to unwind the rest
                    totals.samplesTaken += statistics.samplesTaken
                    totals.samplesDropped += statistics.samplesDropped
                    totals.timerOverruns += statistics.timerOverruns
                    totals.samplesUnwound += statistics.samplesUnwound
                    totals.unwindFailures.add(statistics.unwindFailures)
                    handlerP50.append(statistics.handlerNsP50)
                    handlerP99.append(statistics.handlerNsP99)
                    stackNeeded = max(stackNeeded, statistics.stackBytesNeededP99)
                    sampledThreadCPU += threadCPU
                }
                let after = clocks()
                cost[sampled] = (after.cpu - before.cpu, after.wall - before.wall)
            }
            let (plain, withSampler) = (cost[false]!, cost[true]!)
            unsampledCPU += plain.cpu
            sampledCPU += withSampler.cpu
            cpuRatios.append((withSampler.cpu / plain.cpu - 1) * 100)
            wallRatios.append((withSampler.wall / plain.wall - 1) * 100)
        }
        _ = try? recorder.stop()
        let overhead = medianWithInterval(cpuRatios)
        let failures = totals.unwindFailures
        return Result(rateHz: rateHz, stackCopyBytes: stackCopyBytes, sampleSource: SampleSource.timerSignal.rawValue,
                      pairs: pairs, loadAverageBefore: loadBefore, loadAverageAfter: loadAverage(),
                      unsampledCPUSeconds: unsampledCPU, sampledCPUSeconds: sampledCPU,
                      overheadPercent: overhead.median, overheadPercentCI95Low: overhead.low, overheadPercentCI95High: overhead.high,
                      wallOverheadPercent: medianWithInterval(wallRatios).median,
                      samplesExpected: Int((sampledThreadCPU * Double(rateHz)).rounded()),
                      samplesTaken: totals.samplesTaken, samplesDropped: totals.samplesDropped, timerOverruns: totals.timerOverruns,
                      samplesUnwound: totals.samplesUnwound, unwoundComplete: totals.samplesUnwound - failures.total,
                      unwindStackUnknown: failures.stackUnknown, unwindOffCopyEnd: failures.offCopyEnd,
                      unwindModulesChanged: failures.modulesChanged, unwindNoModule: failures.noModule, unwindErrors: failures.errors,
                      offCopyEndShare: totals.samplesUnwound == 0 ? 0 : Double(failures.offCopyEnd) / Double(totals.samplesUnwound),
                      stackBytesNeededP99: stackNeeded,
                      handlerNsP50: medianWithInterval(handlerP50).median, handlerNsP99: medianWithInterval(handlerP99).median,
                      hotFunctionShare: collected.share(containing: "BenchSampleWorkload.hot("))
    }

    private static func startSampler(rateHz: Int, stackCopyBytes: Int, recorder: TraceRecorder, collected: CollectedStacks) throws -> Sampler {
        do {
            return try Sampler.start(.init(rateHz: rateHz, threads: .main, stackCopyBytes: stackCopyBytes),
                                     recorder: recorder, onSample: collected.add)
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
