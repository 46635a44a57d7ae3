import Foundation
import Testing
import HitchReader
import HitchTrace
@testable import HitchAnalysis

@Suite struct ViewUpdatesPassTests {
    @Test func bodyEvaluationsAndLongUpdates() throws {
        var b = TraceBuilder()
        let row = b.list.intern("FeedRow"), header = b.list.intern("Header")
        for (start, duration) in [(0, 100_000), (1 * TraceBuilder.ms, 600_000), (3 * TraceBuilder.ms, 1_200_000)] as [(Int64, Int64)] {
            b.list.append(start, b.main, .bodyEvaluation(BodyEvaluation(viewType: row, identity: 1, endNs: start + duration)))
        }
        b.list.append(5 * TraceBuilder.ms, b.main, .bodyEvaluation(BodyEvaluation(viewType: header, identity: 2, endNs: 5 * TraceBuilder.ms + 50_000)))
        b.frame(0, vsyncNs: 0, periodNs: 16_666_667, workNs: TraceBuilder.ms)
        b.frame(1, vsyncNs: 16_666_667, periodNs: 16_666_667, workNs: TraceBuilder.ms)
        let a = try b.analyze()
        let feedRow = try #require(a.views.first { $0.type == "FeedRow" })
        #expect(feedRow.bodyEvaluations == 3)
        #expect(abs(feedRow.totalMs - 1.9) < 1e-9)
        #expect(abs(feedRow.maxMs - 1.2) < 1e-9)
        #expect(feedRow.longUpdates == 2)
        #expect(feedRow.longUpdatesOver1ms == 1)
        #expect(feedRow.evaluationsPerFrame == 1.5)
        #expect(a.views.first?.type == "FeedRow")
    }
}
