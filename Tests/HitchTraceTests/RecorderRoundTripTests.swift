import Foundation
import Testing
@testable import HitchTrace

/// A fresh path under the temporary directory for one test's trace.
func temporaryTracePath(_ name: String) -> String {
    NSTemporaryDirectory() + "hitch-test-\(name)-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).fxt"
}

/// Reads every event of a trace.
func readAll(_ path: String) throws -> (events: [TraceEvent], reader: TraceReader) {
    var reader = try TraceReader(path: path)
    var events: [TraceEvent] = []
    while let event = try reader.next() { events.append(event) }
    return (events, reader)
}

@Suite(.serialized) struct RecorderRoundTripTests {
    @Test func everyKindRoundTripsThroughTheRecorder() throws {
        let path = temporaryTracePath("recorder-kinds")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path)
        recorder.setMetadata("workload", "unit-test")
        Trace.setCurrentThreadName("test-main")
        let vsync = Trace.now()
        let target = vsync.advanced(byNanoseconds: 8_333_333)
        Trace.frameBegan(frameID: 7, vsync: vsync, target: target, periodNs: 8_333_333)
        Trace.interval("filter", category: .stage) { _ = 1 + 1 }
        Trace.instant("keystroke", category: "input")
        Trace.counter("resident-bytes", value: 123.5)
        Trace.bodyEvaluation(viewType: "FeedRow", identity: 42) {}
        Trace.invalidation(source: "FeedModel.query", target: "FeedRow", targetIdentity: 42, stack: StackID(rawValue: 3))
        Trace.layoutPass(viewCount: 12) {}
        Trace.inferenceOp("qkv", layer: 3, computeUnit: "cpu", tokenIndex: 9, bytesRead: 1 << 33, bytesWritten: 2048, flops: 99) {}
        Trace.token(.shown, index: -5)
        let interaction = Trace.beginInteraction("scroll")
        Trace.endInteraction(interaction)
        Trace.frameCommitted(frameID: 7)
        Trace.frameRenderEnded(frameID: 7)
        Trace.framePresented(frameID: 7, at: Trace.now())
        let stack = recorder.defineStack(addresses: [0x1000, 0x2000])
        #expect(recorder.defineStack(addresses: [0x1000, 0x2000]) == stack)
        recorder.recordSample(threadID: Trace.currentThreadID, timestamp: Trace.now(), stack: stack)
        recorder.defineSymbol(address: 0x1000, size: 16, function: "main.hot()", image: "hitch", offset: 0x10)
        let summary = try recorder.stop()
        #expect(summary.droppedEventCount == 0)

        let (events, reader) = try readAll(path)
        #expect(reader.warnings.isEmpty)
        #expect(reader.metadata["workload"] == "unit-test")
        var kinds: Set<String> = []
        for event in events {
            switch event.payload {
            case let .frameBegan(frame):
                #expect(frame.frameID == 7 && frame.periodNs == 8_333_333)
                #expect(abs(frame.targetNs - frame.vsyncNs - 8_333_333) < 1000)
                kinds.insert("frameBegan")
            case let .intervalComplete(category, name, endNs):
                #expect(reader.string(category) == "stage" && reader.string(name) == "filter" && endNs >= event.timestampNs)
                kinds.insert("interval")
            case let .instant(category, name):
                #expect(reader.string(category) == "input" && reader.string(name) == "keystroke")
                kinds.insert("instant")
            case let .counter(name, value):
                #expect(reader.string(name) == "resident-bytes" && value == 123.5)
                kinds.insert("counter")
            case let .bodyEvaluation(body):
                #expect(reader.string(body.viewType) == "FeedRow" && body.identity == 42)
                kinds.insert("body")
            case let .invalidation(inv):
                #expect(reader.string(inv.source) == "FeedModel.query" && reader.string(inv.target) == "FeedRow")
                #expect(inv.targetIdentity == 42 && inv.stack == StackID(rawValue: 3))
                kinds.insert("invalidation")
            case let .layoutPass(_, viewCount):
                #expect(viewCount == 12)
                kinds.insert("layout")
            case let .inferenceOp(op):
                #expect(reader.string(op.name) == "qkv" && reader.string(op.computeUnit) == "cpu")
                #expect(op.layer == 3 && op.tokenIndex == 9 && op.bytesRead == 1 << 33 && op.bytesWritten == 2048 && op.flops == 99)
                kinds.insert("op")
            case let .token(token):
                #expect(token.stage == .shown && token.index == -5)
                kinds.insert("token")
            case let .interactionBegin(kind):
                #expect(reader.string(kind) == "scroll")
                kinds.insert("interactionBegin")
            case .interactionEnd: kinds.insert("interactionEnd")
            case .frameCommitted(7): kinds.insert("commit")
            case .frameRenderEnded(7): kinds.insert("renderEnd")
            case .framePresented(7): kinds.insert("present")
            case let .sample(s):
                #expect(s == stack)
                #expect(reader.threadName(event.thread) == "test-main")
                kinds.insert("sample")
            case let .stackDefinition(s, addresses):
                #expect(s == stack && addresses == [0x1000, 0x2000])
                kinds.insert("stack")
            case let .symbol(symbol):
                #expect(reader.string(symbol.function) == "main.hot()" && reader.string(symbol.image) == "hitch")
                #expect(symbol.address == 0x1000 && symbol.size == 16 && symbol.offset == 0x10)
                kinds.insert("symbol")
            case .metadata: kinds.insert("metadata")
            default: break
            }
        }
        #expect(kinds.count == 18, "saw \(kinds.sorted())")
    }
}
