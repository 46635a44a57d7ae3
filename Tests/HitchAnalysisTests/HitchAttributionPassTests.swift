import Foundation
import Testing
import HitchReader
import HitchTrace
@testable import HitchAnalysis

@Suite struct HitchAttributionPassTests {
    /// A frame in an image without a symbol for it reads `file+0xoffset`, never an empty name.
    @Test func unnamedFramesShowTheirImageAndOffset() throws {
        var b = TraceBuilder()
        let hot = b.list.intern("FeedRow.body"), none = b.list.intern("")
        let app = b.list.intern("/usr/bin/app"), lib = b.list.intern("/usr/lib/libstripped.so")
        b.list.append(0, b.main, .symbol(Symbol(address: 0x1000, size: 0x100, function: hot, image: app, offset: 0x1000)))
        b.list.append(0, b.main, .symbol(Symbol(address: 0x7000, size: 1, function: none, image: lib, offset: 0x2a0)))
        b.list.append(0, b.main, .stackDefinition(stack: StackID(rawValue: 1), addresses: [0x7000, 0x1011]))
        let period: Int64 = 16_666_667
        for id in UInt64(0)..<4 {
            let vsync = Int64(id) * period
            let work: Int64 = id == 2 ? 20 * TraceBuilder.ms : 2 * TraceBuilder.ms
            if id == 2 { for k in 0..<10 { b.list.append(vsync + Int64(k + 1) * TraceBuilder.ms, b.main, .sample(stack: StackID(rawValue: 1))) } }
            b.frame(id, vsyncNs: vsync, periodNs: period, workNs: work)
        }
        let a = try b.analyze(rates: [60])
        let stack = try #require(a.hitchAttributions.first?.stacks.first)
        #expect(stack.frames == ["libstripped.so+0x2a0", "FeedRow.body"])
    }
}
