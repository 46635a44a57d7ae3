import Foundation
import HitchTrace
import Synchronization

// `hitch bench sample`: the sampling profiler's cost, measured side by side in one run. The same
// fixed amount of busy work runs alternately without and with sampling of the main thread (each
// sampled round records into a real trace, so the drain thread and the writer run as in use);
// overhead is the extra wall time of the sampled rounds.
enum BenchSample: Subcommand {
    static let name = "sample"
    static let summary = "Sampling profiler overhead at 1 kHz."
    static let help = """
    USAGE: hitch bench sample [--rate HZ] [--seconds S] [--format text|json]

    Runs a busy call chain (outer -> middle -> hot) on the main thread for a fixed amount of work,
    alternately without and with the sampler running at HZ, for about S seconds in all, and reports
    the sampled rounds' extra wall time, the samples taken against the samples expected (HZ x
    sampled wall time), and the share of samples whose stack names the hot function.

    OPTIONS:
      --rate HZ             Samples per second (default: 1000).
      --seconds S           Total benchmark time, 1 to 600 (default: 4).
      --format text|json    Output format (default: text).
      -h, --help            Show this help.

    EXAMPLE:
      hitch bench sample --format json
    """

    struct Result: Codable {
        var rateHz: Int
        var rounds: Int
        var unsampledSeconds: Double
        var sampledSeconds: Double
        var overheadPercent: Double
        var samplesExpected: Int
        var samplesTaken: UInt64
        var samplesDropped: UInt64
        var timerOverruns: UInt64
        var hotFunctionShare: Double
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let rate = try arguments.number("--rate", in: 1...10_000, default: 1000)
        let seconds = try arguments.number("--seconds", in: 1.0...600.0, default: 4.0)
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch bench sample' takes no arguments (see --help)") }
        let result = try measure(rateHz: rate, seconds: seconds)
        if format == "json" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print("""
            rate          \(result.rateHz) Hz, \(result.rounds) rounds each way
            wall time     \(String(format: "%.3f", result.unsampledSeconds)) s unsampled, \(String(format: "%.3f", result.sampledSeconds)) s sampled
            overhead      \(String(format: "%.2f", result.overheadPercent))% of wall time
            samples       \(result.samplesTaken) taken of \(result.samplesExpected) expected (\(result.samplesDropped) dropped, \(result.timerOverruns) timer overruns)
            hot function  \(String(format: "%.1f", result.hotFunctionShare * 100))% of samples
            """)
        }
        return .ok
    }

    static func measure(rateHz: Int, seconds: Double) throws -> Result {
        // Size one round of work to about 200 ms; rounds alternate order (A B, B A, ...) so drift
        // in the machine's speed falls on both sides alike.
        let probeStart = DispatchTime.now().uptimeNanoseconds
        var probeIterations = 0
        while DispatchTime.now().uptimeNanoseconds - probeStart < 50_000_000 {
            BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: 10, seed: probeIterations))
            probeIterations += 10
        }
        let iterationsPerRound = max(probeIterations * 4, 10)
        let rounds = max(Int(seconds / 0.4), 2)

        let tracePath = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-bench-sample-\(getpid()).fxt").path
        defer { unlink(tracePath) }
        let recorder: TraceRecorder
        do { recorder = try TraceRecorder.start(path: tracePath) } catch { throw CLIError("cannot record to \(tracePath): \(error)") }
        let collected = CollectedStacks()

        // One untimed sampled round first: the first samples load each image's symbol table and
        // warm libunwind's caches, a one-time cost that is not the sampler's steady-state overhead.
        let warmUp = try startSampler(rateHz: rateHz, recorder: recorder, collected: CollectedStacks())
        BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: iterationsPerRound, seed: -1))
        warmUp.stop()

        var unsampledNs: UInt64 = 0, sampledNs: UInt64 = 0
        var taken: UInt64 = 0, dropped: UInt64 = 0, overruns: UInt64 = 0
        for round in 0..<rounds {
            for sampled in (round % 2 == 0 ? [false, true] : [true, false]) {
                let sampler = sampled ? try startSampler(rateHz: rateHz, recorder: recorder, collected: collected) : nil
                let start = DispatchTime.now().uptimeNanoseconds
                BenchSampleWorkload.consume(BenchSampleWorkload.outer(iterations: iterationsPerRound, seed: round))
                let elapsed = DispatchTime.now().uptimeNanoseconds - start
                if let sampler {
                    let statistics = sampler.stop()
                    taken += statistics.samplesTaken
                    dropped += statistics.samplesDropped
                    overruns += statistics.timerOverruns
                    sampledNs += elapsed
                } else {
                    unsampledNs += elapsed
                }
            }
        }
        _ = try? recorder.stop()

        return Result(rateHz: rateHz, rounds: rounds,
                      unsampledSeconds: Double(unsampledNs) / 1e9, sampledSeconds: Double(sampledNs) / 1e9,
                      overheadPercent: (Double(sampledNs) - Double(unsampledNs)) / Double(unsampledNs) * 100,
                      samplesExpected: Int((Double(sampledNs) / 1e9 * Double(rateHz)).rounded()),
                      samplesTaken: taken, samplesDropped: dropped, timerOverruns: overruns,
                      hotFunctionShare: collected.share(containing: "BenchSampleWorkload.hot("))
    }

    private static func startSampler(rateHz: Int, recorder: TraceRecorder, collected: CollectedStacks) throws -> Sampler {
        do {
            return try Sampler.start(.init(rateHz: rateHz, threads: .main), recorder: recorder, onSample: collected.add)
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
