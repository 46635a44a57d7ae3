import Foundation
import Testing
@testable import HitchReport
import HitchAnalysis
import HitchReader
import HitchTestSupport
import HitchTrace

/// The identity-churn section and the estimated-figure labels, as each renderer shows them.
@Suite struct IdentityAndEstimateRenderingTests {
    @Test func identityChurnIsShownInTextJSONAndHTML() throws {
        let analysis = try Analyzer.analyze([RoundTripTrace.make(frames: 60)])
        let text = try TextReport.render(ReportInput(analysis: analysis))
        #expect(text.contains("Identity churn"))
        #expect(text.contains("LIKELY UNSTABLE IDENTITY at 3 places"))
        #expect(text.contains("FeedRow at position 0"))
        let json = String(decoding: try JSONEncoder().encode(analysis), as: UTF8.self)
        #expect(json.contains("\"unstableIdentity\""))
        let html = HTMLReport.render(analysis, title: "churn")
        #expect(html.contains("Identity churn"))
        #expect(html.contains("Likely unstable identity"))
    }

    @Test func estimatedModelMemoryIsLabelledEstimated() throws {
        let list = RoundTripTrace.make(frames: 30)
        let measured = try Analyzer.analyze([list])
        #expect(measured.decode?.memory.weightsBytesEstimated == false)
        #expect(!(try TextReport.render(ReportInput(analysis: measured))).contains("estimated"))
        // The same trace without the weightsBytes / kvCacheBytes metadata: the sizes are estimated.
        var stripped = TraceEventList()
        for event in list.events {
            if case .metadata(let key, _) = event.payload, ["weightsBytes", "kvCacheBytes"].contains(list.strings[Int(key.rawValue)]) { continue }
            stripped.append(event.timestampNs, event.thread, event.payload)
        }
        stripped.strings = list.strings
        stripped.threadNames = list.threadNames
        let estimated = try Analyzer.analyze([stripped])
        let memory = try #require(estimated.decode?.memory)
        #expect(memory.weightsBytesEstimated && memory.kvCacheBytesEstimated)
        #expect(try TextReport.render(ReportInput(analysis: estimated)).contains("(estimated from op bytes)"))
        #expect(HTMLReport.render(estimated, title: "estimated").contains("weights (estimated)"))
    }

    @Test func aPeakFromCacheSizedProbeArraysIsLabelled() throws {
        var list = RoundTripTrace.make(frames: 30)
        #expect(try !TextReport.render(ReportInput(analysis: Analyzer.analyze([list]))).contains("may be a cache figure"))
        list.append(1_000_000_000, list.thread("main"), .metadata(key: list.intern("bandwidthProbeMeetsCacheRule"), value: list.intern("false")))
        let analysis = try Analyzer.analyze([list])
        #expect(analysis.decode?.peakBandwidthMayBeCacheBound == true)
        #expect(try TextReport.render(ReportInput(analysis: analysis)).contains("the peak may be a cache figure"))
        #expect(HTMLReport.render(analysis, title: "cache").contains("may be a cache figure"))
    }
}
