import Foundation
import HitchAnalysis
import HitchImport
import HitchTestSupport
import Testing

/// Long main-thread slices and ANRs (PerfettoHangs). perfetto-hangs.pftrace is written with
/// Perfetto's own protos (make-perfetto-hang-fixture.py), its truth from that script's scenario.
@Suite struct PerfettoImporterHangTests {
    struct Truth: Decodable {
        struct Tier: Decodable { var count: Int; var totalMs: Double }
        var source: String
        var byType: [String: Tier]
        var hangs: Tier
        var brief: Tier
    }

    @Test func longMainThreadSlicesAndANRsAreHangs() throws {
        let fixtures = PerfettoImporterTests.fixtures
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: fixtures.appendingPathComponent("perfetto-hangs.truth.json")))
        let (summary, analysis) = try AnalyzedImport.run(.perfetto, inputs: [fixtures.appendingPathComponent("perfetto-hangs.pftrace").path],
                                                        refreshRatesHz: [60])
        #expect(summary.hangs == truth.byType.values.map(\.count).reduce(0, +))
        let hangs = try #require(analysis.hangs)
        let byType = try #require(hangs.byType)
        #expect(Set(byType.map(\.type)) == Set(truth.byType.keys))
        for figures in byType {
            let expected = try #require(truth.byType[figures.type])
            #expect(figures.source == truth.source && figures.count == expected.count && abs(figures.totalMs - expected.totalMs) < 1e-6, "\(figures)")
        }
        #expect(hangs.count == truth.hangs.count && abs(hangs.totalMs - truth.hangs.totalMs) < 1e-6)
        #expect(hangs.brief.count == truth.brief.count && abs(hangs.brief.totalMs - truth.brief.totalMs) < 1e-6)
        // The ANR ends where system_server declared it and began its timer's duration before; on the
        // app's main thread, as every hang here.
        let anr = try #require(hangs.list.first { $0.type == "ANR" })
        #expect(abs(anr.durationMs - truth.byType["ANR"]!.totalMs) < 1e-6)
        #expect(hangs.list.allSatisfy { $0.thread == "com.example.feed" && $0.sources.contains(truth.source) })
    }
}
