import HitchReader
import HitchTrace

/// A seeded trace with every kind of event the analyzer reads: frames (some late), nested stages,
/// bodies, invalidations with stacks, layout, ops, tokens, counters, interactions, samples, symbols,
/// metadata and a drop count. Events are in time order, as a recorder's reader yields them.
public enum RoundTripTrace {
    public static func make(seed: UInt64 = 7, frames: Int = 240, names: (String) -> String = { $0 }) -> TraceEventList {
        var random = SampleRandom(state: seed)
        var list = TraceEventList()
        let main = list.thread("main"), render = list.thread(names("render")), worker = list.thread(names("inference"))
        let start: Int64 = 1_000_000_000
        var events: [(Int64, ThreadID, TraceEvent.Payload)] = []
        func add(_ t: Int64, _ thread: ThreadID, _ payload: TraceEvent.Payload) { events.append((t, thread, payload)) }
        let stage = list.intern("stage")
        let stageNames = ["filter", "sort", "layout", "commit"].map { list.intern(names($0)) }
        let views = ["FeedRow", "FeedList"].map { list.intern(names($0)) }
        let source = list.intern(names("FeedModel.query"))
        let ops = ["qkv", "attention", "down"].map { list.intern(names($0)) }
        let cpu = list.intern("cpu")
        let input = list.intern("input"), keystroke = list.intern("keystroke")
        let typing = list.intern("typing")
        let resident = list.intern("resident-bytes")
        for (key, value) in [("workload", names("feed")), ("peakBandwidthGBps", "10.5"), ("peakGFLOPS", "90"), ("promptTokens", "4"),
                             ("weightsBytes", "1000000"), ("kvCacheBytes", "20000"), ("refreshRateHz", "120")] {
            add(start, main, .metadata(key: list.intern(key), value: list.intern(value)))
        }
        let addresses: [UInt64] = [0x4010, 0x4020, 0x4030]
        add(start, main, .stackDefinition(stack: StackID(rawValue: 1), addresses: addresses))
        add(start, main, .stackDefinition(stack: StackID(rawValue: 2), addresses: [0x4040, 0x4030]))
        for (index, function) in ["FeedModel.filter", "FeedModel.apply", "main", "FeedModel.sort"].enumerated() {
            add(start, main, .symbol(Symbol(address: 0x4010 + UInt64(index) * 0x10, size: 0x10, function: list.intern(names(function)),
                                             image: list.intern("hitch"), offset: UInt64(index) * 0x10)))
        }
        let period: Int64 = 8_333_333
        add(start, main, .interactionBegin(kind: typing))
        for frame in 0..<frames {
            let vsync = start + Int64(frame) * period
            let late = frame % 17 == 3
            let work = late ? Int64(9_000_000 + random.next() * 20_000_000) : Int64(1_000_000 + random.next() * 3_000_000)
            if frame % 10 == 0 { add(vsync - 200_000, main, .instant(category: input, name: keystroke)) }
            add(vsync, main, .frameBegan(FrameBegan(frameID: UInt64(frame + 1), vsyncNs: vsync, targetNs: vsync + period, periodNs: period)))
            let first = stageNames[frame % 2]
            add(vsync + 10_000, main, .intervalBegin(category: stage, name: first))
            add(vsync + 20_000, main, .invalidation(Invalidation(source: source, target: views[0], targetIdentity: UInt64(frame % 5), stack: StackID(rawValue: 1))))
            add(vsync + 30_000, main, .intervalBegin(category: stage, name: stageNames[2]))
            add(vsync + 40_000, main, .bodyEvaluation(BodyEvaluation(viewType: views[0], identity: UInt64(frame % 5), endNs: vsync + 40_000 + work / 4)))
            if frame % 10 == 0 {
                // A keystroke rebuilds rows 0-2 under new ids (each row and its Text): identity churn.
                for position in 0..<3 {
                    let old = UInt64(10_000 + (frame - 10) * 10 + position), new = UInt64(10_000 + frame * 10 + position)
                    let at = vsync + 41_000 + Int64(position) * 100
                    if frame > 0 {
                        add(at, main, .viewLifetime(ViewLifetime(change: .tornDown, viewType: views[0], identity: old, parentIdentity: 777,
                                                                 position: Int64(position), reason: .identityRemoved)))
                        add(at + 10, main, .viewLifetime(ViewLifetime(change: .tornDown, viewType: views[1], identity: old << 8, parentIdentity: old,
                                                                      position: 0, reason: .parentRemoved)))
                    }
                    add(at + 20, main, .viewLifetime(ViewLifetime(change: .built, viewType: views[0], identity: new, parentIdentity: 777,
                                                                  position: Int64(position), reason: .newIdentity)))
                    add(at + 30, main, .viewLifetime(ViewLifetime(change: .built, viewType: views[1], identity: new << 8, parentIdentity: new,
                                                                  position: 0, reason: .parentBuilt)))
                }
            }
            add(vsync + 50_000 + work / 4, main, .layoutPass(endNs: vsync + 60_000 + work / 3, viewCount: 12))
            add(vsync + 70_000 + work / 3, main, .intervalEnd(category: stage, name: stageNames[2]))
            add(vsync + work / 2, main, .sample(stack: StackID(rawValue: frame % 2 == 0 ? 1 : 2)))
            add(vsync + work, main, .intervalEnd(category: stage, name: first))
            add(vsync + work + 10_000, main, .intervalComplete(category: stage, name: stageNames[3], endNs: vsync + work + 200_000))
            add(vsync + work + 210_000, main, .frameCommitted(frameID: UInt64(frame + 1)))
            let renderEnd = vsync + work + 210_000 + 2_000_000
            add(renderEnd, render, .frameRenderEnded(frameID: UInt64(frame + 1)))
            let present = ((renderEnd - start) / period + 1) * period + start
            add(present, render, .framePresented(frameID: UInt64(frame + 1)))
            add(vsync + 100_000, worker, .counter(name: resident, value: 1_000_000 + Double(frame) * 1000))
        }
        add(start + Int64(frames) * period, main, .interactionEnd(kind: typing))
        // A short decode run on the worker thread: per token, three ops, a produced and a shown token.
        var t = start + 5_000_000
        for token in 0..<12 {
            for (index, op) in ops.enumerated() {
                let duration = Int64(300_000 + index * 200_000)
                add(t, worker, .inferenceOp(InferenceOp(name: op, computeUnit: cpu, layer: Int32(index), tokenIndex: Int32(token),
                                                        bytesRead: 333_333 + UInt64(index), bytesWritten: 1024, flops: UInt64(700_000 * (index + 1)), endNs: t + duration)))
                t += duration
            }
            add(t, worker, .token(TokenEvent(stage: .produced, index: Int64(token))))
            add(t + 1_000_000, main, .token(TokenEvent(stage: .shown, index: Int64(token))))
        }
        add(start + 1_000, main, .droppedEvents(count: 5))
        events.sort { $0.0 < $1.0 }   // stable: same-time events keep their order
        for event in events { list.append(event.0, event.1, event.2) }
        return list
    }
}

/// A linear congruential generator of doubles in [0, 1): the seeded draws of `RoundTripTrace` and
/// the report tests' `SampleAnalysis`.
public struct SampleRandom {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> Double {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Double(state >> 11) / Double(1 << 53)
    }
}
