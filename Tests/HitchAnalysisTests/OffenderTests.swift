import Testing
import HitchReader
import HitchTestSupport
import HitchTrace
@testable import HitchAnalysis

private let ms = TraceBuilder.ms

/// docs/METRICS.md "Hitch attribution": an offender's `hitchingFrames` counts distinct hitching
/// frames, however many samples and stacks of one frame it is in; its weight is unchanged.
@Suite struct OffenderTests {
    /// The worked example of METRICS.md: two hitching frames. In frame 2, `parse` is the innermost
    /// function of 4 samples under `load` and 2 under `refresh`, `layout` of 4; in frame 5, `parse`
    /// of all 5 samples. The stage `update` runs in both.
    static func trace() -> TraceEventList {
        var b = TraceBuilder()
        let image = b.list.intern("app")
        for (address, name) in [(0x1000, "parse"), (0x2000, "layout"), (0x3000, "load"), (0x4000, "refresh")] as [(UInt64, String)] {
            let function = b.list.intern(name)
            b.list.append(0, b.main, .symbol(Symbol(address: address, size: 0x100, function: function, image: image, offset: 0)))
        }
        let parseUnderLoad = StackID(rawValue: 1), parseUnderRefresh = StackID(rawValue: 2), layoutUnderLoad = StackID(rawValue: 3)
        b.list.append(0, b.main, .stackDefinition(stack: parseUnderLoad, addresses: [0x1010, 0x3020]))
        b.list.append(0, b.main, .stackDefinition(stack: parseUnderRefresh, addresses: [0x1010, 0x4020]))
        b.list.append(0, b.main, .stackDefinition(stack: layoutUnderLoad, addresses: [0x2010, 0x3020]))
        let period: Int64 = 16_666_667
        for id in UInt64(0)..<8 {
            // Every other vsync, so a late frame's window never reaches into the next frame.
            let vsync = Int64(id) * 2 * period + ms
            let hitches = id == 2 || id == 5
            let work: Int64 = hitches ? 20 * ms : 2 * ms
            b.stage("update", on: b.main, from: vsync + ms / 2, to: vsync + work - ms / 2)
            let stacks: [StackID]
            switch id {
            case 2: stacks = Array(repeating: parseUnderLoad, count: 4) + Array(repeating: parseUnderRefresh, count: 2)
                + Array(repeating: layoutUnderLoad, count: 4)
            case 5: stacks = Array(repeating: parseUnderLoad, count: 5)
            default: stacks = [parseUnderRefresh]   // on-time frames: never offenders
            }
            for (k, stack) in stacks.enumerated() {
                b.list.append(vsync + Int64(k + 1) * work / Int64(stacks.count + 1), b.main, .sample(stack: stack))
            }
            b.frame(id, vsyncNs: vsync, periodNs: period, workNs: work)
        }
        // Time order, as one producer writes it; the order test below interleaves the threads.
        return TraceOrders.timeOrdered(b.list)
    }

    @Test func aFunctionCountsOnceForEachHitchingFrameItIsIn() throws {
        let a = try Analyzer.analyze([Self.trace()], options: AnalyzerOptions(refreshRatesHz: [60]))
        #expect(a.hitches["60"]?.hitchCount == 2)
        let hitchMs = Dictionary(uniqueKeysWithValues: a.hitchAttributions.map { ($0.frameID, $0.hitchMs) })
        let first = try #require(hitchMs[2]), second = try #require(hitchMs[5])
        #expect(first > 0 && second > 0)
        func offender(_ kind: OffenderKind, _ name: String) throws -> Offender {
            try #require(a.offenders.first { $0.kind == kind && $0.name == name })
        }
        // Two stacks and six samples in frame 2, five samples in frame 5: two frames.
        let parse = try offender(.function, "parse")
        #expect(parse.hitchingFrames == 2)
        #expect(abs(parse.weightedHitchMs - (first * 6 / 10 + second * 5 / 5)) < 1e-6)
        let layout = try offender(.function, "layout")
        #expect(layout.hitchingFrames == 1)
        #expect(abs(layout.weightedHitchMs - first * 4 / 10) < 1e-6)
        #expect(try offender(.stage, "update").hitchingFrames == 2)
        #expect(a.offenders.allSatisfy { $0.hitchingFrames <= 2 })
        #expect(a.samples.samplesInHitches == 15)
    }

    /// The counts are the same whatever the interleaving of the threads' buffers.
    @Test func frameCountsDoNotDependOnFileOrder() throws {
        let list = Self.trace()
        let options = AnalyzerOptions(refreshRatesHz: [60])
        let expected = try Analyzer.analyze([list], options: options).offenders
        let main = ThreadID(rawValue: 0), render = ThreadID(rawValue: 1)
        let interleavings = [
            CrossThreadOrderTests.buffered(list, capacity: { _ in 5 }, finalOrder: [render, main]),
            CrossThreadOrderTests.buffered(list, capacity: { $0 == main ? 1_000 : 3 }, finalOrder: [main, render]),
            CrossThreadOrderTests.buffered(list, capacity: { $0 == main ? 7 : 1_000 }, finalOrder: [render, main]),
        ]
        for candidate in interleavings {
            #expect(try Analyzer.analyze([candidate], options: options).offenders == expected)
        }
    }
}
