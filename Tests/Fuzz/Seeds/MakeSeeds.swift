import Foundation
import HitchReader
import HitchTrace

// Writes the fuzzers' seed traces (scripts/fuzz.sh seeds DIR): small real traces covering every event
// kind, from the explicit-timestamp writer and from the live recorder, plus truncated copies.
// Hand-made edge cases (bad magic, zero sizes, huge sizes, bad refs) are written by fuzz.sh itself.

@main
enum MakeSeeds {
    static func main() throws {
        let dir = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "."
        let everyKind = dir + "/every-kind.fxt"
        try writeEveryKind(to: everyKind, frames: 12)
        try writeRecorded(to: dir + "/recorded.fxt")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: everyKind)))
        // Cut mid-record: a killed writer's file.
        for cut in [bytes.count / 3, bytes.count / 2 + 3, bytes.count - 5] where cut > 8 {
            try Data(bytes[0..<cut]).write(to: URL(fileURLWithPath: dir + "/every-kind-cut-\(cut).fxt"))
        }
    }

    static func writeEveryKind(to path: String, frames: Int) throws {
        let w = try TraceFileWriter(path: path, ticksPerSecond: 24_000_000)
        let main = w.thread(name: "main", threadID: 100)
        let render = w.thread(name: "render", threadID: 101)
        w.setMetadata("refreshRateHz", "120", thread: main)
        w.setMetadata("peakBandwidthGBps", "20.5", thread: main)
        w.setMetadata("peakGFLOPS", "150", thread: main)
        w.setMetadata("weightsBytes", "1000000", thread: main)
        w.write(TraceEvent(timestampNs: 0, thread: main, payload: .interactionBegin(kind: w.string("scroll"))))
        let stack = StackID(rawValue: 1)
        w.write(TraceEvent(timestampNs: 0, thread: main, payload: .stackDefinition(stack: stack, addresses: [0x401000, 0x402000, 0x403000])))
        w.write(TraceEvent(timestampNs: 0, thread: main, payload: .symbol(Symbol(
            address: 0x401000, size: 64, function: w.string("Feed.body.getter"), image: w.string("hitch"), offset: 0x1000))))
        let period: Int64 = 8_333_333
        for f in 0..<frames {
            let t = Int64(f) * period
            let frame = UInt64(f + 1)
            w.write(TraceEvent(timestampNs: t, thread: main, payload: .frameBegan(FrameBegan(frameID: frame, vsyncNs: t, targetNs: t + period, periodNs: period))))
            w.write(TraceEvent(timestampNs: t + 10_000, thread: main, payload: .intervalBegin(category: w.string("stage"), name: w.string("filter"))))
            w.write(TraceEvent(timestampNs: t + 20_000, thread: main, payload: .bodyEvaluation(BodyEvaluation(
                viewType: w.string("FeedRow"), identity: frame, endNs: t + (f % 4 == 0 ? 9_000_000 : 300_000)))))
            w.write(TraceEvent(timestampNs: t + 30_000, thread: main, payload: .invalidation(Invalidation(
                source: w.string("FeedModel.query"), target: w.string("FeedRow"), targetIdentity: frame, stack: stack))))
            w.write(TraceEvent(timestampNs: t + 40_000, thread: main, payload: .intervalEnd(category: w.string("stage"), name: w.string("filter"))))
            w.write(TraceEvent(timestampNs: t + 50_000, thread: main, payload: .layoutPass(endNs: t + 90_000, viewCount: 12)))
            w.write(TraceEvent(timestampNs: t + 100_000, thread: main, payload: .intervalComplete(category: w.string("stage"), name: w.string("sort"), endNs: t + 200_000)))
            w.write(TraceEvent(timestampNs: t + 150_000, thread: main, payload: .sample(stack: stack)))
            w.write(TraceEvent(timestampNs: t + 200_000, thread: main, payload: .counter(name: w.string("resident-bytes"), value: 1.5e8 + Double(f))))
            w.write(TraceEvent(timestampNs: t + 210_000, thread: main, payload: .instant(category: w.string("input"), name: w.string("keystroke"))))
            w.write(TraceEvent(timestampNs: t + 1_000_000, thread: main, payload: .frameCommitted(frameID: frame)))
            w.write(TraceEvent(timestampNs: t + 2_000_000, thread: render, payload: .inferenceOp(InferenceOp(
                name: w.string("qkv"), computeUnit: w.string("cpu"), layer: 3, tokenIndex: Int32(f),
                bytesRead: 4_000_000, bytesWritten: 1024, flops: 8_000_000, endNs: t + 2_400_000))))
            w.write(TraceEvent(timestampNs: t + 2_500_000, thread: render, payload: .token(TokenEvent(stage: .produced, index: Int64(f)))))
            w.write(TraceEvent(timestampNs: t + 2_600_000, thread: main, payload: .token(TokenEvent(stage: .shown, index: Int64(f)))))
            w.write(TraceEvent(timestampNs: t + 5_000_000, thread: render, payload: .frameRenderEnded(frameID: frame)))
            w.write(TraceEvent(timestampNs: t + 2 * period, thread: render, payload: .framePresented(frameID: frame)))
        }
        w.write(TraceEvent(timestampNs: Int64(frames) * period, thread: main, payload: .interactionEnd(kind: w.string("scroll"))))
        w.write(TraceEvent(timestampNs: Int64(frames) * period, thread: main, payload: .droppedEvents(count: 7)))
        _ = try w.close()
    }

    /// The live recorder on two threads, so the seed has its real record mix and thread records.
    static func writeRecorded(to path: String) throws {
        let recorder = try TraceRecorder.start(path: path, configuration: .init(bufferBytesPerThread: 4096))
        recorder.setMetadata("workload", "seed")
        let other = Thread {
            for i in 0..<40 { Trace.bodyEvaluation(viewType: "SeedRow", identity: UInt64(i)) {} }
        }
        other.start()
        let stages = (0..<3).map { TraceName.intern("stage-\($0)") }
        for i in 0..<40 {
            Trace.interval(stages[i % 3], category: .stage) {}
            Trace.counter("queue", value: Double(i))
            Trace.token(.produced, index: Int64(i))
        }
        Trace.invalidation(source: "Model.value", target: "Row", targetIdentity: 3)
        Trace.frameBegan(frameID: 1, vsync: Trace.now(), target: Trace.now(), periodNs: 16_666_667)
        Trace.frameCommitted(frameID: 1)
        Trace.frameRenderEnded(frameID: 1)
        Trace.framePresented(frameID: 1, at: Trace.now())
        Thread.sleep(forTimeInterval: 0.05)
        let stack = recorder.defineStack(addresses: [0x1000, 0x2000])
        recorder.recordSample(threadID: Trace.currentThreadID, timestamp: Trace.now(), stack: stack)
        recorder.defineSymbol(address: 0x1000, size: 16, function: "seed()", image: "seed", offset: 0)
        try recorder.stop()
    }
}
