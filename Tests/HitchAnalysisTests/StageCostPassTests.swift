import Foundation
import Testing
import HitchReader
import HitchTrace
@testable import HitchAnalysis

private let ms = TraceBuilder.ms

@Suite struct StageCostPassTests {
    @Test func nestedStagesGetSelfTimeInEveryProducerOrder() throws {
        var b = TraceBuilder()
        let main = b.main, worker = b.list.thread("worker")
        // End order (the recorder writes complete events when they end): children first.
        b.stage("child", on: main, from: 2 * ms, to: 5 * ms)
        b.stage("child", on: main, from: 6 * ms, to: 8 * ms)
        b.stage("parent", on: main, from: 1 * ms, to: 10 * ms)
        // Begin/end pairs.
        b.begin("outer", on: main, at: 20 * ms)
        b.begin("inner", on: main, at: 22 * ms)
        b.end("inner", on: main, at: 25 * ms)
        b.end("outer", on: main, at: 30 * ms)
        // Start order complete events (other producers), on another thread.
        b.stage("parent", on: worker, from: 40 * ms, to: 50 * ms)
        b.stage("child", on: worker, from: 42 * ms, to: 45 * ms)
        let a = try b.analyze()
        let stages = Dictionary(uniqueKeysWithValues: a.stages.map { ($0.name, $0) })
        let parent = try #require(stages["parent"]), child = try #require(stages["child"])
        #expect(parent.count == 2)
        #expect(parent.totalMs == 19)
        #expect(parent.selfMs == 19 - 5 - 3)          // 4 on main + 7 on worker
        #expect(child.count == 3)
        #expect(child.totalMs == 8)
        #expect(child.selfMs == 8)
        #expect(stages["outer"]?.selfMs == 7)
        #expect(stages["inner"]?.selfMs == 3)
        #expect(parent.threads == ["main", "worker"])
        #expect(parent.maxMs == 10)
        #expect(parent.p50Ms == 9)
        // Main-thread self time: parent 4 + child 5 + outer 7 + inner 3 = 19.
        #expect(abs(parent.mainThreadShare - 4.0 / 19) < 1e-9)
        #expect(abs(parent.onMainThreadFraction - 9.0 / 19) < 1e-9)
        #expect(a.warnings.isEmpty)
    }

    @Test func stageTimeInsideHitchingFramesAndAttribution() throws {
        var b = TraceBuilder()
        let period: Int64 = 16_666_667
        for id in UInt64(0)..<6 {
            let vsync = Int64(id) * period
            let work: Int64 = id == 3 ? 20 * ms : 2 * ms
            b.stage("filter", on: b.main, from: vsync + ms / 2, to: vsync + work - ms / 2)
            let row = b.list.intern("FeedRow")
            b.list.append(vsync + ms / 2, b.main, .bodyEvaluation(BodyEvaluation(viewType: row, identity: id, endNs: vsync + ms / 2 + 300_000)))
            b.frame(id, vsyncNs: vsync, periodNs: period, workNs: work)
        }
        let a = try b.analyze(rates: [60])
        #expect(a.hitches["60"]?.hitchCount == 1)
        let filter = try #require(a.stages.first { $0.name == "filter" })
        #expect(abs(filter.inHitchingFramesMs - 19) < 0.001)
        let attribution = try #require(a.hitchAttributions.first)
        #expect(attribution.frameID == 3)
        #expect(attribution.kind == .commit)
        #expect(attribution.stages.first?.name == "filter")
        #expect(attribution.bodies.first?.name == "FeedRow")
        #expect(a.offenders.first?.name == "filter")
        #expect(a.offenders.first?.kind == .stage)
    }

    /// Work on another thread during a hitching frame (a background decode) is listed beside the
    /// frame, never as one of its stages; the render thread's stages are the frame's.
    @Test func otherThreadsStagesAreConcurrentNotTheFrames() throws {
        var b = TraceBuilder()
        let period: Int64 = 16_666_667
        let inference = b.list.thread("inference")
        b.stage("decode", on: inference, from: 0, to: 6 * period)
        for id in UInt64(0)..<6 {
            let vsync = Int64(id) * period
            let work: Int64 = id == 3 ? 20 * ms : 2 * ms
            b.stage("layout", on: b.main, from: vsync + ms / 2, to: vsync + work - ms / 2)
            let renderStart = vsyncAtOrAfter(vsync + work, anchor: vsync, period: period)
            b.stage("render", on: b.render, from: renderStart, to: renderStart + ms / 2)
            b.frame(id, vsyncNs: vsync, periodNs: period, workNs: work)
        }
        let a = try b.analyze(rates: [60])
        let attribution = try #require(a.hitchAttributions.first)
        #expect(attribution.frameID == 3)
        #expect(Set(attribution.stages.map(\.name)).isSubset(of: ["layout", "render"]) && attribution.stages.first?.name == "layout")
        #expect(attribution.concurrentStages.map(\.name) == ["decode"])
        #expect(try #require(a.stages.first { $0.name == "decode" }).inHitchingFramesMs == 0)
        #expect(!a.offenders.contains { $0.name == "decode" })
    }
}
