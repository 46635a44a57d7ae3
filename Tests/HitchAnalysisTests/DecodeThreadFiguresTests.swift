import HitchReader
import HitchTrace
import Testing
@testable import HitchAnalysis

/// The decode's threads against every core, from the rates the LLM workload measures before it
/// records: where every core decodes much faster, the analysis says in words that the decode's own
/// threads, not memory, bound it.
struct DecodeThreadFiguresTests {
    /// Three decode tokens of 20 MB, one every 10 ms (2 GB/s), against a 10 GB/s peak: 20%, under
    /// the 30% below which decode is flagged as not bandwidth-bound.
    func trace(threads: String?, rates: String?, peakGBps: String = "10", priority: String? = nil) throws -> DecodeFigures {
        var b = TraceBuilder()
        b.metadata("peakBandwidthGBps", peakGBps)
        if let threads { b.metadata("decodeThreads", threads) }
        if let rates { b.metadata("decodeTokensPerSecondByThreads", rates) }
        if let priority { b.metadata("decodePriority", priority) }
        let down = b.list.intern("down"), cpu = b.list.intern("cpu"), inference = b.list.thread("inference")
        for k in 0..<3 {
            let start = Int64(k) * 10 * TraceBuilder.ms
            b.list.append(start, inference, .inferenceOp(InferenceOp(name: down, computeUnit: cpu, layer: 0, tokenIndex: Int32(k),
                                                                     bytesRead: 20_000_000, bytesWritten: 0, flops: 1, endNs: start + 10 * TraceBuilder.ms)))
            b.list.append(start + 10 * TraceBuilder.ms, inference, .token(TokenEvent(stage: .produced, index: Int64(k))))
        }
        return try #require(try b.analyze().decode)
    }

    @Test("one thread of two, and both cores decode 1.86x as fast: bound by its thread, said in words")
    func boundByItsThread() throws {
        let d = try trace(threads: "1", rates: "1:38.2,2:70.9")
        #expect(d.notBandwidthBound)
        #expect(d.threads == {
            var t = DecodeThreadFigures()
            t.count = 1; t.cores = 2; t.measuredTokensPerSecond = 38.2; t.allCoresTokensPerSecond = 70.9; t.boundByThreads = true
            return t
        }())
        #expect(d.threads.sentence == "bound by its 1 decode thread, not by memory: all 2 cores decoded 1.86x as fast (70.9 vs 38.2 tok/s, measured before recording); the UI keeps a core, so more threads were not taken")
    }

    @Test("where every core decodes within 1.2x of the decode's threads, memory bounds it: no sentence")
    func boundByMemory() throws {
        let d = try trace(threads: "3", rates: "1:20.0,2:36.0,3:40.0,4:41.0")
        #expect(d.threads.count == 3 && d.threads.cores == 4)
        #expect(!d.threads.boundByThreads)
        #expect(d.threads.sentence == nil)
    }

    @Test("without the measurement (older traces, other producers) the figures are empty, and bad values are ignored")
    func absentOrMalformed() throws {
        #expect(try trace(threads: nil, rates: nil).threads == DecodeThreadFigures())
        let onlyThreads = try trace(threads: "2", rates: nil).threads
        #expect(onlyThreads.count == 2 && onlyThreads.cores == 0 && !onlyThreads.boundByThreads)
        let malformed = try trace(threads: "1", rates: "1:x,2:nan,:3,2:-4,garbage").threads
        #expect(malformed.cores == 0 && !malformed.boundByThreads)
    }

    @Test("a decode raised from the background says so; one that stayed there says nothing")
    func priorityChange() throws {
        let raised = "raised to normal priority: a background inference thread waited 0.83 s of 1.01 s for a CPU (other processes kept the cores busy)"
        #expect(try trace(threads: "1", rates: nil, priority: raised).threads.priorityChange == raised)
        #expect(try trace(threads: "1", rates: nil).threads.priorityChange == nil)
    }

    @Test("decode reading faster than the probe's peak says the peak is too low; at or under it, nothing")
    func peakTooLow() throws {
        let over = try trace(threads: "1", rates: nil, peakGBps: "1")    // 2 GB/s against 1: 200%
        #expect(over.utilization > 1.9)
        #expect(over.peakTooLowSentence?.hasPrefix("decode read faster than the measured peak") == true)
        #expect(try trace(threads: "1", rates: nil, peakGBps: "2").peakTooLowSentence == nil)   // 100%
        #expect(try trace(threads: "1", rates: nil).peakTooLowSentence == nil)
    }
}
