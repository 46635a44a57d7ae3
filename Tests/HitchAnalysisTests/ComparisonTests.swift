import Foundation
import Testing
import HitchTrace
@testable import HitchAnalysis

private let ms = TraceBuilder.ms

@Suite struct ComparisonTests {
    func run(stallMs: Int64, seed: Int64) throws -> Analysis {
        var b = TraceBuilder()
        for id in UInt64(0)..<60 {
            let jitter = (Int64(id) * 7919 + seed * 104_729) % 300_000
            b.frame(id, vsyncNs: Int64(id) * 8_333_333, periodNs: 8_333_333, workNs: (id % 20 == 5 ? stallMs * ms : ms) + jitter)
        }
        b.stage("filter", on: b.main, from: 0, to: (2 + stallMs) * ms + seed * 10_000)
        return try b.analyze()
    }

    @Test func regressionAcrossRepeatedRunsIsSignificant() throws {
        let base = try (0..<3).map { try run(stallMs: 1, seed: $0) }
        let worse = try (0..<3).map { try run(stallMs: 12, seed: $0) }
        let c = RunComparison.compare(base: base, new: worse, thresholdPercent: 5)
        let filter = try #require(c.changes.first { $0.metric == "stages[filter].mainThreadMs" })
        #expect(filter.isRegression)
        #expect((filter.pValue ?? 1) < 0.05)
        #expect(c.regressions.contains { $0.metric == "hitches.120.hitchTimeRatioMsPerS" })
        #expect(c.verdict.outcome == .worse)
        // The reverse direction is an improvement, and identical sides change nothing.
        #expect(RunComparison.compare(base: worse, new: base, thresholdPercent: 5).regressions.isEmpty)
        #expect(RunComparison.compare(base: base, new: base, thresholdPercent: 5).regressions.isEmpty)
    }

    /// Moving one stage off the main thread raises the others' shares of main-thread time; that is
    /// not a regression. The compared figure is each stage's own fraction on the main thread.
    @Test func movingAStageOffTheMainThreadIsAnImprovement() throws {
        func run(decodeOnMain: Bool) throws -> Analysis {
            var b = TraceBuilder()
            let worker = b.list.thread("worker")
            for id in UInt64(0)..<4 {
                let vsync = Int64(id) * 8_333_333
                b.stage("filter", on: b.main, from: vsync + ms / 4, to: vsync + ms)
                b.stage("decode", on: decodeOnMain ? b.main : worker, from: vsync + ms, to: vsync + 3 * ms)
                b.frame(id, vsyncNs: vsync, periodNs: 8_333_333, workNs: 4 * ms)
            }
            return try b.analyze()
        }
        let c = RunComparison.compare(base: [try run(decodeOnMain: true)], new: [try run(decodeOnMain: false)], thresholdPercent: 5)
        #expect(c.improvements.contains { $0.metric == "stages[decode].mainThreadMs" })
        #expect(!c.regressions.contains { $0.metric.hasPrefix("stages[filter]") }, "\(c.regressions.map(\.metric))")
    }

    /// 120 frames at 120 Hz with a stall of `stallMs` on every `every`-th frame.
    func stalls(every: UInt64, stallMs: Int64, mainFilterMs: Int64 = 0) throws -> Analysis {
        var b = TraceBuilder()
        for id in UInt64(0)..<120 {
            let vsync = Int64(id) * 8_333_333
            if mainFilterMs > 0 { b.stage("filter", on: b.main, from: vsync, to: vsync + mainFilterMs * ms / 10) }
            b.frame(id, vsyncNs: vsync, periodNs: 8_333_333, workNs: id % every == 5 ? stallMs * ms : ms)
        }
        return try b.analyze(rates: [120])
    }

    /// A faster app can hitch more often for far less time in all: the hitch time ratio decides,
    /// and the rise in hitches per second is named as the verdict's caveat, not its answer.
    @Test func theHitchTimeRatioDecidesAndOtherMovesAreCaveats() throws {
        let few = try stalls(every: 20, stallMs: 40), many = try stalls(every: 10, stallMs: 12)
        let c = RunComparison.compare(base: [few], new: [many], thresholdPercent: 5)
        let ratio = try #require(c.changes.first { $0.metric == "hitches.120.hitchTimeRatioMsPerS" })
        let count = try #require(c.changes.first { $0.metric == "hitches.120.hitchCount" })
        try #require(ratio.direction == .better && count.direction == .worse, "\(ratio.baseMean) → \(ratio.newMean), \(count.baseMean) → \(count.newMean)")
        #expect(ratio.primary && !count.primary)
        #expect(c.verdict.outcome == .better)
        #expect(c.verdict.basis == .hitchTimeRatio)
        #expect(c.verdict.headline.first?.metric == ratio.metric)
        #expect(c.verdict.caveats.contains { $0.metric == count.metric })
        #expect(c.decidingChanges.allSatisfy { $0.primary })
        // The other way round the ratio rose: worse, whatever else improved, with the improvements as caveats.
        let back = RunComparison.compare(base: [many], new: [few], thresholdPercent: 5)
        #expect(back.verdict.outcome == .worse)
        #expect(back.verdict.caveats.contains { $0.metric == count.metric })
    }

    /// When no hitch time ratio moved, the other judged figures decide: more main-thread work is worse.
    @Test func otherJudgedFiguresDecideWhenTheRatioHoldsStill() throws {
        let light = try stalls(every: 1000, stallMs: 1, mainFilterMs: 1), heavy = try stalls(every: 1000, stallMs: 1, mainFilterMs: 5)
        let c = RunComparison.compare(base: [light], new: [heavy], thresholdPercent: 5)
        #expect(!c.changes.contains { $0.primary && $0.direction != .unchanged })
        #expect(c.verdict.outcome == .worse)
        #expect(c.verdict.basis == .otherJudgedFigures)
        #expect(c.decidingChanges.contains { $0.metric == "stages[filter].mainThreadMs" })
        let same = RunComparison.compare(base: [light], new: [light], thresholdPercent: 5)
        #expect(same.verdict.outcome == .unchanged && same.verdict.basis == .none && same.verdict.caveats.isEmpty)
    }

    @Test func noisyDifferencesAreNotSignificant() {
        let p = RunComparison.welchTTest([10, 12, 9, 11], [11, 10, 12, 9.5])
        #expect(p > 0.5)
        let q = RunComparison.welchTTest([10, 10.1, 9.9], [20, 20.2, 19.8])
        #expect(q < 0.001)
        // Known value (checked by numerical integration of the t density): t = -3.794, df = 4.613, p = 0.01476.
        let r = RunComparison.welchTTest([19.8, 20.4, 19.6, 17.8, 18.5, 18.9], [28.2, 26.6, 20.1, 23.3, 25.2])
        #expect(abs(r - 0.014758) < 0.0001)
    }
}
