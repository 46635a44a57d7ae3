import Foundation
import Testing
import HitchReader
import HitchTrace
@testable import HitchAnalysis

private let ms = TraceBuilder.ms

@Suite struct StageTests {
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

@Suite struct ViewAndInvalidationTests {
    @Test func bodyEvaluationsAndLongUpdates() throws {
        var b = TraceBuilder()
        let row = b.list.intern("FeedRow"), header = b.list.intern("Header")
        for (start, duration) in [(0, 100_000), (1 * ms, 600_000), (3 * ms, 1_200_000)] as [(Int64, Int64)] {
            b.list.append(start, b.main, .bodyEvaluation(BodyEvaluation(viewType: row, identity: 1, endNs: start + duration)))
        }
        b.list.append(5 * ms, b.main, .bodyEvaluation(BodyEvaluation(viewType: header, identity: 2, endNs: 5 * ms + 50_000)))
        b.frame(0, vsyncNs: 0, periodNs: 16_666_667, workNs: ms)
        b.frame(1, vsyncNs: 16_666_667, periodNs: 16_666_667, workNs: ms)
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

    @Test func invalidationGraphWithSourcesFromEventsAndBacktraces() throws {
        var b = TraceBuilder()
        let query = b.list.intern("FeedModel.query"), scroll = b.list.intern("FeedModel.scrollOffset")
        let row = b.list.intern("FeedRow"), header = b.list.intern("Header"), empty = b.list.intern("")
        for i in 0..<3 { b.list.append(Int64(i), b.main, .invalidation(Invalidation(source: query, target: row, targetIdentity: UInt64(i), stack: nil))) }
        b.list.append(10, b.main, .invalidation(Invalidation(source: query, target: header, targetIdentity: 9, stack: nil)))
        b.list.append(11, b.main, .invalidation(Invalidation(source: scroll, target: row, targetIdentity: 1, stack: nil)))
        // A source known only from the writer's stack: recorder frame, setter, caller.
        let recorderFn = b.list.intern("HitchTrace.Trace.invalidation"), setter = b.list.intern("FeedModel.query.setter")
        let caller = b.list.intern("SearchField.onKeystroke"), image = b.list.intern("hitch")
        b.list.append(0, b.main, .symbol(Symbol(address: 0x1000, size: 0x100, function: recorderFn, image: image, offset: 0)))
        b.list.append(0, b.main, .symbol(Symbol(address: 0x2000, size: 0x100, function: setter, image: image, offset: 0)))
        b.list.append(0, b.main, .symbol(Symbol(address: 0x3000, size: 0x100, function: caller, image: image, offset: 0)))
        b.list.append(0, b.main, .stackDefinition(stack: StackID(rawValue: 4), addresses: [0x1010, 0x2020, 0x3030]))
        b.list.append(12, b.main, .invalidation(Invalidation(source: empty, target: row, targetIdentity: 5, stack: StackID(rawValue: 4))))
        let a = try b.analyze()
        #expect(a.invalidations.first?.source == "FeedModel.query")
        #expect(a.invalidations.first?.target == "FeedRow")
        #expect(a.invalidations.first?.count == 3)
        let fromStack = try #require(a.invalidations.first { $0.writer != nil })
        #expect(fromStack.source == "FeedModel.query.setter")
        #expect(fromStack.writer == "FeedModel.query.setter")
        #expect(a.invalidationSources.first?.source == "FeedModel.query")
        #expect(a.invalidationSources.first?.invalidations == 4)
        #expect(a.invalidationSources.first?.targetTypes == 2)
    }

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
            let work: Int64 = id == 2 ? 20 * ms : 2 * ms
            if id == 2 { for k in 0..<10 { b.list.append(vsync + Int64(k + 1) * ms, b.main, .sample(stack: StackID(rawValue: 1))) } }
            b.frame(id, vsyncNs: vsync, periodNs: period, workNs: work)
        }
        let a = try b.analyze(rates: [60])
        let stack = try #require(a.hitchAttributions.first?.stacks.first)
        #expect(stack.frames == ["libstripped.so+0x2a0", "FeedRow.body"])
    }
}

@Suite struct DecodeTests {
    /// Prefill of 4 tokens over 4 ms, the first token at 5 ms, then four 2 ms decode steps each
    /// reading 8 MB of weights (qkv) and 1 MB of KV cache (attention).
    func decodeTrace() -> TraceBuilder {
        var b = TraceBuilder()
        b.metadata("peakBandwidthGBps", "10")
        b.metadata("peakGFLOPS", "100")
        let qkv = b.list.intern("qkv"), attention = b.list.intern("attention"), cpu = b.list.intern("cpu")
        let inference = b.list.thread("inference")
        func op(_ name: StringID, _ token: Int32, _ start: Int64, _ end: Int64, bytes: UInt64, flops: UInt64) {
            b.list.append(start, inference, .inferenceOp(InferenceOp(name: name, computeUnit: cpu, layer: 0, tokenIndex: token,
                                                                     bytesRead: bytes, bytesWritten: 0, flops: flops, endNs: end)))
        }
        op(qkv, 3, 0, 3 * ms, bytes: 8_000_000, flops: 64_000_000)
        op(attention, 3, 3 * ms, 4 * ms, bytes: 1_000_000, flops: 1_000_000)
        b.list.append(5 * ms, inference, .token(TokenEvent(stage: .produced, index: 0)))
        for k in 1...4 {
            let start = 5 * ms + Int64(k - 1) * 2 * ms
            op(qkv, Int32(3 + k), start, start + 1_800_000, bytes: 8_000_000, flops: 16_000_000)
            op(attention, Int32(3 + k), start + 1_800_000, start + 2 * ms, bytes: 1_000_000, flops: 1_000_000)
            b.list.append(start + 2 * ms, inference, .token(TokenEvent(stage: .produced, index: Int64(k))))
        }
        return b
    }

    /// The op's recorded `byteKind` decides what its bytes are; the name rule only fills in for ops
    /// without one: "attention" recorded as weights counts as weights, "mystery" recorded as KV cache
    /// counts as KV cache, and with no byteKind the same trace splits by name.
    @Test func recordedByteKindOverridesTheNameRule() throws {
        func trace(recorded: Bool) throws -> DecodeFigures {
            var b = TraceBuilder()
            let attention = b.list.intern("attention"), mystery = b.list.intern("mystery"), cpu = b.list.intern("cpu")
            let inference = b.list.thread("inference")
            for k in 0..<3 {
                let start = Int64(k) * 2 * ms
                b.list.append(start, inference, .inferenceOp(InferenceOp(name: attention, computeUnit: cpu, layer: 0, tokenIndex: Int32(k),
                                                                         bytesRead: 5_000, bytesWritten: 0, flops: 1, endNs: start + ms,
                                                                         byteKind: recorded ? .weights : .unspecified)))
                b.list.append(start + ms, inference, .inferenceOp(InferenceOp(name: mystery, computeUnit: cpu, layer: 0, tokenIndex: Int32(k),
                                                                              bytesRead: 700, bytesWritten: 0, flops: 1, endNs: start + 2 * ms,
                                                                              byteKind: recorded ? .kvCache : .unspecified)))
                b.list.append(start + 2 * ms, inference, .token(TokenEvent(stage: .produced, index: Int64(k))))
            }
            return try #require(try b.analyze().decode)
        }
        let recorded = try trace(recorded: true), byName = try trace(recorded: false)
        #expect(recorded.weightBytesPerToken == 5_000 && recorded.kvCacheBytesPerToken == 700)
        #expect(byName.weightBytesPerToken == 700 && byName.kvCacheBytesPerToken == 5_000)
    }

    @Test func decodeRunWithKnownBytesAndTimes() throws {
        let a = try decodeTrace().analyze()
        let d = try #require(a.decode)
        #expect(d.tokens == 5)
        #expect(d.promptTokens == 4)
        #expect(d.timeToFirstTokenMs == 5)
        #expect(abs(d.prefillTokensPerSecond - 1000) < 1e-6)
        #expect(abs(d.tokensPerSecond - 500) < 1e-6)
        #expect(abs(d.bestTokensPerSecond - 500) < 1e-6)
        #expect(d.bytesPerToken == 9_000_000)
        #expect(d.weightBytesPerToken == 8_000_000)
        #expect(d.kvCacheBytesPerToken == 1_000_000)
        #expect(abs(d.bandwidthGBps - 4.5) < 1e-9)
        #expect(d.peakBandwidthGBps == 10)
        #expect(abs(d.utilization - 0.45) < 1e-9)
        #expect(!d.notBandwidthBound)
        #expect(d.ridgeFlopsPerByte == 10)
        let qkv = try #require(d.ops.first { $0.name == "qkv" })
        #expect(qkv.count == 5)
        #expect(abs(qkv.totalMs - 10.2) < 1e-9)
        #expect(qkv.bound == .bandwidth)
        #expect(abs(qkv.flopsPerByte - 128.0 / 40) < 1e-9)
        #expect(abs(qkv.timeShare - 10.2 / 12) < 1e-9)
        #expect(d.memory.weightsBytes == 8_000_000)
        #expect(d.memory.withinBudget)
    }

    @Test func slowDecodeIsFlaggedNotBandwidthBoundAndMemoryBudgetChecked() throws {
        var b = decodeTrace()
        b.metadata("peakBandwidthGBps", "100")   // first value wins: still 10
        let resident = b.list.intern("resident-bytes")
        b.list.append(20 * ms, b.main, .counter(name: resident, value: 2_000_000_000))
        let a = try Analyzer.analyze([b.list], options: AnalyzerOptions(deviceBudgetBytes: 1_200_000_000))
        let d = try #require(a.decode)
        #expect(d.peakBandwidthGBps == 10)
        #expect(d.memory.peakResidentBytes == 2_000_000_000)
        #expect(!d.memory.withinBudget)
        var slow = TraceBuilder()
        slow.metadata("peakBandwidthGBps", "20")
        let op = slow.list.intern("down"), cpu = slow.list.intern("cpu"), t = slow.list.thread("inference")
        for k in 0..<3 {
            slow.list.append(Int64(k) * 10 * ms, t, .inferenceOp(InferenceOp(name: op, computeUnit: cpu, layer: 0, tokenIndex: Int32(k),
                                                                              bytesRead: 10_000_000, bytesWritten: 0, flops: 1, endNs: Int64(k + 1) * 10 * ms)))
        }
        let s = try #require(try slow.analyze().decode)
        #expect(abs(s.bandwidthGBps - 1) < 1e-9)       // 10 MB per 10 ms step
        #expect(s.notBandwidthBound)                   // 5% of 20 GB/s
        #expect(s.ops.first?.bound == .unknown)       // no FLOP peak: no roofline
    }

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
