import Foundation
import HitchReader
import HitchTrace
import Testing
@testable import HitchWorkloads

/// How many threads a streamed recording decodes on: measured per thread count, the fewest of all
/// cores but one within 5% of the fastest, and why.
@Suite("Decode thread choice", .serialized)
struct DecodeThreadChoiceTests {
    static func weights() -> TransformerWeights {
        let pool = WorkerPool(threadCount: 2)
        defer { pool.shutdown() }
        return TransformerWeights(shape: tinyShape, format: .q8_0, seed: 2, pool: pool)
    }

    @Test("every thread count up to every core is measured; the choice is among all but one, the fewest as fast as the fastest")
    func choosesAmongAllCoresButOne() throws {
        let choice = try DecodeThreadChoice.measure(weights: Self.weights(), cores: 3)
        #expect(choice.rates.map(\.threads) == [1, 2, 3])
        #expect(choice.rates.allSatisfy { $0.tokensPerSecond > 0 && $0.tokensPerSecond.isFinite })
        #expect((1...2).contains(choice.threads))
        #expect(!choice.given)
        let fastest = choice.rates.filter { $0.threads <= 2 }.map(\.tokensPerSecond).max()!
        #expect(choice.rate(threads: choice.threads)! >= DecodeThreadChoice.asFast * fastest)
        if choice.threads == 2 { #expect(choice.rate(threads: 1)! < DecodeThreadChoice.asFast * fastest) }
        #expect(choice.reason.hasPrefix("\(choice.threads) thread"))
        #expect(choice.reason.contains("the UI keeps one of 3 cores"))
        #expect(choice.reason.contains("all 3 cores decode at"))
        let fields = choice.ratesText.split(separator: ",").map { $0.split(separator: ":") }
        #expect(fields.map { Int($0[0]) } == [1, 2, 3] && fields.allSatisfy { Double($0[1]) != nil })
    }

    @Test("a given count is taken (and measured); one core leaves one thread")
    func givenAndSingleCore() throws {
        let weights = Self.weights()
        let given = try DecodeThreadChoice.measure(weights: weights, cores: 2, given: 2)
        #expect(given.threads == 2 && given.given && given.rates.map(\.threads) == [1, 2])
        #expect(given.reason.hasPrefix("2 threads (--decode-threads)"))
        let single = try DecodeThreadChoice.measure(weights: weights, cores: 1)
        #expect(single.threads == 1 && single.rates.map(\.threads) == [1])
        #expect(!single.reason.contains("all 1 cores"))
    }

    @Test("the measuring steps record no op events")
    func measuringRecordsNothing() async {
        await #expect(processExitsWith: .success) {
            let weights = Self.weights()
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("threads-\(UUID().uuidString).fxt").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let recorder = try TraceRecorder.start(path: path)
            _ = try DecodeThreadChoice.measure(weights: weights, cores: 2)
            _ = try recorder.stop()
            var reader = try TraceReader(path: path)
            var ops = 0
            while let event = try reader.next() { if case .inferenceOp = event.payload { ops += 1 } }
            #expect(ops == 0)
        }
    }
}
