import Foundation
import Testing
import HitchReader
import HitchTrace
@testable import HitchAnalysis

private let ms = TraceBuilder.ms

@Suite struct DecodeBandwidthPassTests {
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
}
