import Foundation
import Testing
import HitchReader
import HitchTrace
@testable import HitchAnalysis

private let ms = TraceBuilder.ms

@Suite struct TokenDeliveryPassTests {
    @Test func tokenDropsAndTokenToScreenLatency() throws {
        var b = TraceBuilder()
        for i in 0..<10 { b.list.append(Int64(i) * ms, b.main, .token(TokenEvent(stage: .produced, index: Int64(i)))) }
        for i in 0..<6 {
            b.list.append(Int64(i) * ms + 5 * ms, b.main, .token(TokenEvent(stage: .delivered, index: Int64(i))))
            b.list.append(Int64(i) * ms + 10 * ms, b.main, .token(TokenEvent(stage: .shown, index: Int64(i))))
        }
        for i in 6..<9 { b.list.append(20 * ms, b.main, .token(TokenEvent(stage: .dropped, index: Int64(i)))) }
        b.frame(0, vsyncNs: 0, periodNs: 8_333_333, workNs: ms)
        let a = try b.analyze()
        let t = try #require(a.tokens)
        #expect(t.produced == 10)
        #expect(t.delivered == 6)
        #expect(t.shown == 6)
        #expect(t.dropped == 3)
        #expect(t.lost == 1)
        #expect(t.tokenToScreenMs.p50 == 10)
        #expect(t.tokenToScreenMs.p95 == 10)
        #expect(abs(t.tokenToScreenP95Frames - 1.2) < 1e-6)
        #expect(a.decode == nil)
    }
}
