import HitchReader
import HitchTrace
import Testing
@testable import HitchAnalysis

/// The identity-churn pass on hand-built view lifetimes.
@Suite struct IdentityChurnPassTests {
    /// `rows` built (or torn down) at list positions, under parent 1, each with one child.
    static func rows(_ b: inout TraceBuilder, _ change: ViewLifetimeChange, ids: [UInt64], positions: [Int64], at t: Int64) {
        let row = b.list.intern("Row"), text = b.list.intern("Text"), main = b.main
        for (id, position) in zip(ids, positions) {
            let root = ViewLifetime(change: change, viewType: row, identity: id, parentIdentity: 1, position: position,
                                    reason: change == .built ? .newIdentity : .identityRemoved)
            let child = ViewLifetime(change: change, viewType: text, identity: id << 8, parentIdentity: id, position: 0,
                                     reason: change == .built ? .parentBuilt : .parentRemoved)
            b.list.append(t, main, .viewLifetime(root))
            b.list.append(t, main, .viewLifetime(child))
        }
    }

    static func layout(_ b: inout TraceBuilder, at t: Int64) {
        b.list.append(t, b.main, .layoutPass(endNs: t + 1000, viewCount: 10))
    }

    @Test func rowsScrollingInAreBuiltNotReplaced() throws {
        var b = TraceBuilder()
        Self.rows(&b, .built, ids: [10, 11, 12, 13], positions: [0, 1, 2, 3], at: 1_000)
        Self.layout(&b, at: 2_000)
        // Ten scroll steps: the top row leaves, the next one comes in at the bottom.
        for step in 0..<10 {
            let t = Int64(10_000 * (step + 1))
            Self.rows(&b, .built, ids: [UInt64(14 + step)], positions: [Int64(4 + step)], at: t)
            Self.rows(&b, .tornDown, ids: [UInt64(10 + step)], positions: [Int64(step)], at: t + 10)
            Self.layout(&b, at: t + 100)
        }
        let churn = try #require(try b.analyze().identityChurn)
        #expect(churn.updates == 11)
        #expect(churn.viewsBuilt == 28 && churn.viewsTornDown == 20)
        #expect(churn.replacements == 0 && churn.rebuiltViews == 0)
        #expect(churn.unstableIdentity.isEmpty)
        #expect(churn.builtByReason == ["newIdentity": 14, "parentBuilt": 14])
    }

    @Test func replacedEveryUpdateIsFlaggedAndOnceIsNot() throws {
        var b = TraceBuilder()
        Self.rows(&b, .built, ids: [10, 11, 12], positions: [0, 1, 2], at: 1_000)
        Self.layout(&b, at: 2_000)
        for update in 1...4 {
            let t = Int64(10_000 * update)
            let old = UInt64(100 * (update - 1) + 50), new = UInt64(100 * update + 50)
            Self.rows(&b, .tornDown, ids: [update == 1 ? 11 : old], positions: [1], at: t)
            Self.rows(&b, .built, ids: [new], positions: [1], at: t + 10)
            if update == 2 {   // position 2 changes content once
                Self.rows(&b, .tornDown, ids: [12], positions: [2], at: t + 20)
                Self.rows(&b, .built, ids: [7_000], positions: [2], at: t + 30)
            }
            Self.layout(&b, at: t + 100)
        }
        let churn = try #require(try b.analyze().identityChurn)
        #expect(churn.replacements == 5)
        #expect(churn.rebuiltViews == 10)
        #expect(churn.updatesWithReplacements == 4)
        #expect(churn.maxRebuiltViewsPerUpdate == 4)
        #expect(churn.unstableIdentity.map(\.position) == [1])
        #expect(churn.unstableIdentity.first?.replacements == 4)
        #expect(churn.unstableIdentity.first?.type == "Row")
        #expect(churn.worstUpdates.first?.rebuiltViews == 4)
    }

    /// Update and place times are the earliest event's, relative to the run's start once the run has
    /// ended: the same in any file order (another thread's earlier event may come last in the file).
    @Test func updateTimesDoNotDependOnFileOrder() throws {
        var b = TraceBuilder()
        let ms = TraceBuilder.ms, main = b.main, render = b.render
        b.stage("render", on: render, from: 0, to: ms)   // the run's first event, on another thread
        for update in 1...4 {
            let t = Int64(update) * 10 * ms
            Self.rows(&b, .tornDown, ids: [UInt64(100 * update)], positions: [1], at: t)
            Self.rows(&b, .built, ids: [UInt64(100 * update + 100)], positions: [1], at: t + ms / 2)
            Self.layout(&b, at: t + ms)
            b.stage("render", on: render, from: t + 2 * ms, to: t + 3 * ms)
        }
        let expected = try #require(try b.analyze().identityChurn)
        #expect(expected.worstUpdates.map(\.atMs).sorted() == [10, 20, 30, 40])
        #expect(expected.unstableIdentity.first?.firstAtMs == 10)
        for seed in 1...12 as ClosedRange<UInt64> {
            // Whole thread streams reversed (render's first event last), then random interleavings.
            var reordered = b.list
            reordered.events = b.list.events.filter { $0.thread == main } + b.list.events.filter { $0.thread != main }
            if seed > 1 { reordered = AttributionOrderTests.interleaved(b.list, seed: seed, maxRun: 3) }
            let churn = try Analyzer.analyze([reordered], options: AnalyzerOptions(refreshRatesHz: [60, 120])).identityChurn
            #expect(churn == expected, "seed \(seed)")
        }
    }

    @Test func noViewLifetimesMeansNoChurnSection() throws {
        var b = TraceBuilder()
        b.frame(1, vsyncNs: 0, periodNs: 8_333_333, workNs: 1_000_000)
        #expect(try b.analyze().identityChurn == nil)
    }
}
