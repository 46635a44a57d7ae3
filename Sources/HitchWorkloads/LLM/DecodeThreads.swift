// How many threads decode in a streamed recording: measured, not assumed. Every thread count the
// decode may use (every core but one: the UI keeps a core) decodes a few tokens of the model, and the
// fewest threads within 5% of the fastest are chosen (where memory bandwidth, not the cores, bounds
// decode, more threads only take cores from the rest of the app). Every core is measured too, so the
// choice can say what the kept core costs: where all cores decode much faster than the threads
// allowed, one thread's arithmetic, not memory, bounds the decode.

import Foundation

public struct DecodeThreadChoice: Sendable, Equatable {
    /// A thread count and the decode rate measured with it: the best of a few steps.
    public struct Rate: Sendable, Equatable {
        public var threads: Int
        public var tokensPerSecond: Double
    }
    /// The threads decode runs on.
    public var threads: Int
    public var cores: Int
    /// Every thread count measured, ascending (up to every core).
    public var rates: [Rate]
    /// True when `--decode-threads` gave the count (it is measured all the same).
    public var given: Bool

    /// Rates within this share of the fastest allowed count count as as fast.
    public static let asFast = 0.95
    /// Steps timed per thread count (after two untimed steps).
    public static let steps = 5

    /// The rate measured with `threads` threads.
    public func rate(threads: Int) -> Double? { rates.first { $0.threads == threads }?.tokensPerSecond }

    /// "1:38.2,2:70.9": the metadata value `decodeTokensPerSecondByThreads`.
    public var ratesText: String { rates.map { "\($0.threads):" + String(format: "%.1f", $0.tokensPerSecond) }.joined(separator: ",") }

    /// Why `threads` (the metadata value `decodeThreadChoice`).
    public var reason: String {
        let allowed = max(1, cores - 1)
        var text = given ? "\(threads) thread\(threads == 1 ? "" : "s") (--decode-threads)"
            : "\(threads) thread\(threads == 1 ? "" : "s"), the fewest within \(Int(Self.asFast * 100))% of the fastest of 1-\(allowed) (the UI keeps one of \(cores) cores)"
        if let chosen = rate(threads: threads) { text += ": " + String(format: "%.1f", chosen) + " tok/s" }
        if cores > threads, let all = rate(threads: cores), let chosen = rate(threads: threads), chosen > 0 {
            text += String(format: "; all %d cores decode at %.1f tok/s (%.2fx)", cores, all, all / chosen)
        }
        return text
    }

    /// Measures `weights` with 1...cores threads and chooses among 1...cores-1, or takes `given`.
    public static func measure(weights: TransformerWeights, cores: Int = ProcessInfo.processInfo.activeProcessorCount,
                               given: Int? = nil) throws -> DecodeThreadChoice {
        let cores = max(1, cores)
        var rates: [Rate] = []
        for count in Set([given ?? 1] + Array(1...cores)).sorted() {
            rates.append(Rate(threads: count, tokensPerSecond: try tokensPerSecond(weights: weights, threads: count)))
        }
        let allowed = rates.filter { $0.threads <= max(1, cores - 1) }
        let fastest = allowed.map(\.tokensPerSecond).max() ?? 0
        let chosen = given ?? (allowed.first { $0.tokensPerSecond >= asFast * fastest }?.threads ?? 1)
        return DecodeThreadChoice(threads: chosen, cores: cores, rates: rates, given: given != nil)
    }

    /// The best of `steps` decode steps (after two untimed steps) on a pool of `threads` threads run
    /// as the recording runs them (background workers); the steps record no op events.
    static func tokensPerSecond(weights: TransformerWeights, threads: Int) throws -> Double {
        let pool = WorkerPool(threadCount: threads, background: BackgroundThreads())
        defer { pool.shutdown() }
        let session = DecodeSession(weights: weights, pool: pool)
        session.recordsOps = false
        for _ in 0..<2 { try session.step(token: 1) }
        var best = Double.infinity
        for _ in 0..<steps {
            let start = DispatchTime.now().uptimeNanoseconds
            try session.step(token: 1)
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return 1 / best
    }
}
