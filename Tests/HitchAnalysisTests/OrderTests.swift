import HitchReader
import HitchTestSupport
import HitchTrace
import Testing
@testable import HitchAnalysis

/// The recorder writes each thread's buffer as a unit, so a trace file is in time order per thread
/// only (docs/FORMAT.md). Every pass must give the same figures for the same events whatever the
/// interleaving of threads' buffers.
@Suite struct CrossThreadOrderTests {
    static let ms: Int64 = 1_000_000
    static let period: Int64 = 8_333_333

    /// A streaming-LLM-like session: frames on main/render, stages on main and a worker, body
    /// evaluations, main-thread samples (from a drain thread's buffer), tokens produced on the
    /// inference thread and shown on main, input on an input thread, an interaction begun on main
    /// and ended on the input thread. Every 13th frame stalls the main thread for 11 ms.
    static func session(recordsPresents: Bool = true) -> TraceEventList {
        var b = TraceBuilder()
        let main = b.main
        _ = b.render   // registered second: ThreadID 1
        let inference = b.list.thread("inference"), worker = b.list.thread("worker"), inputThread = b.list.thread("input")
        let stage = b.list.intern("stage"), update = b.list.intern("view update"), decode = b.list.intern("decode")
        let row = b.list.intern("Row"), input = b.list.intern("input"), key = b.list.intern("keystroke")
        let streaming = b.list.intern("streaming")
        b.list.append(0, main, .interactionBegin(kind: streaming))
        var token: Int64 = 0
        for f in 0..<240 {
            let vsync = Int64(f) * period + ms
            if f % 5 == 0 { b.list.append(vsync - ms / 2, inputThread, .instant(category: input, name: key)) }
            let work = f % 13 == 7 ? 11 * ms : 2 * ms
            b.frame(UInt64(f), vsyncNs: vsync, periodNs: period, workNs: work,
                    presentNs: recordsPresents ? vsyncAtOrAfter(vsync + work, anchor: vsync, period: period) + period : nil)
            b.list.append(vsync + ms / 10, main, .intervalComplete(category: stage, name: update, endNs: vsync + work - ms / 10))
            b.list.append(vsync + ms / 5, main, .bodyEvaluation(BodyEvaluation(viewType: row, identity: 1, endNs: vsync + ms)))
            b.list.append(vsync + work / 2, main, .sample(stack: StackID(rawValue: UInt32(f % 3))))
            b.list.append(vsync, worker, .intervalComplete(category: stage, name: decode, endNs: vsync + 3 * ms))
            if f % 2 == 0 {
                b.list.append(vsync + ms / 3, inference, .token(TokenEvent(stage: .produced, index: token)))
                b.list.append(vsync + work + ms / 5, main, .token(TokenEvent(stage: .shown, index: token)))
                token += 1
            }
        }
        b.list.append(240 * period + ms, inputThread, .interactionEnd(kind: streaming))
        // Time order (what a single-threaded producer would write).
        return TraceOrders.timeOrdered(b.list)
    }

    /// The same events as the recorder would write them: per-thread buffers of `capacity(thread)`
    /// events, each written whole when full; the rest at the end, in `finalOrder`.
    static func buffered(_ list: TraceEventList, capacity: (ThreadID) -> Int, finalOrder: [ThreadID]) -> TraceEventList {
        var out = list
        out.events = []
        var buffers: [UInt32: [TraceEvent]] = [:]
        for event in list.events {
            buffers[event.thread.rawValue, default: []].append(event)
            if buffers[event.thread.rawValue]!.count >= capacity(event.thread) {
                out.events += buffers[event.thread.rawValue]!
                buffers[event.thread.rawValue] = []
            }
        }
        for thread in finalOrder { out.events += buffers[thread.rawValue] ?? [] }
        for (raw, rest) in buffers.sorted(by: { $0.key < $1.key }) where !finalOrder.map(\.rawValue).contains(raw) { out.events += rest }
        return out
    }

    static func figures(_ a: Analysis) -> [String] {
        var lines: [String] = []
        for key in a.hitches.keys.sorted() {
            let h = a.hitches[key]!
            lines.append("\(key): frames \(h.frameCount) hitches \(h.hitchCount) total \(h.totalHitchMs) ratio \(h.hitchTimeRatioMsPerS) animating \(h.animatingSeconds)")
        }
        let r = a.recorded
        lines.append("recorded: frames \(r.frameCount) hitches \(r.hitchCount) commit \(r.commitHitchCount) render \(r.renderHitchCount) unjudged \(r.unjudgedFrames) latency \(r.tripleBufferedFrames)")
        if let t = a.tokens { lines.append("tokens: produced \(t.produced) shown \(t.shown) lost \(t.lost) p95 \(t.tokenToScreenMs.p95)") }
        for s in a.stages { lines.append("stage \(s.name): count \(s.count) self \(s.selfMs) inHitch \(s.inHitchingFramesMs)") }
        for o in a.offenders { lines.append("offender \(o.kind) \(o.name): \(o.weightedHitchMs.rounded(decimals: 6)) in \(o.hitchingFrames)") }
        lines.append("samples in hitches \(a.samples.samplesInHitches)")
        for h in a.hitchAttributions {
            lines.append("hitch frame \(h.frameID): \(h.hitchMs) stages \(h.stages.map { "\($0.name)=\($0.ms.rounded(decimals: 6))" }) bodies \(h.bodies.map(\.name)) stacks \(h.stacks.map(\.samples))")
        }
        return lines
    }

    @Test(arguments: [true, false])
    func everyPassGivesTheSameFiguresInAnyBufferOrder(recordsPresents: Bool) throws {
        let ordered = Self.session(recordsPresents: recordsPresents)
        let expected = Self.figures(try Analyzer.analyze([ordered]))
        #expect(expected.contains { $0.hasPrefix("tokens: produced 120 shown 120 lost 0") })
        #expect(expected.contains { $0.hasPrefix("recorded: frames 240 hitches 18") })
        #expect(expected.contains { $0.hasPrefix("hitch frame 228") })
        let main = ThreadID(rawValue: 0), render = ThreadID(rawValue: 1)
        // Threads by registration: main 0, render 1, inference 2, worker 3, input 4.
        let layouts: [(String, (ThreadID) -> Int, [ThreadID])] = [
            ("main buffers small, render large, render flushed last", { $0 == main ? 40 : ($0 == render ? 400 : 64) }, [render]),
            ("render flushed first", { $0 == main ? 90 : ($0 == render ? 300 : 100) }, [render, main]),
            ("inference and input buffers only at the end", { $0 == main ? 25 : ($0 == render ? 50 : 100_000) },
             [main, ThreadID(rawValue: 4), ThreadID(rawValue: 2), render]),
            ("everything at the end, main last", { _ in 1_000_000 }, (1...4).map { ThreadID(rawValue: UInt32($0)) } + [main]),
        ]
        for (label, capacity, finalOrder) in layouts {
            let shuffled = Self.buffered(ordered, capacity: capacity, finalOrder: finalOrder)
            #expect(shuffled.events.count == ordered.events.count)
            let got = Self.figures(try Analyzer.analyze([shuffled]))
            #expect(got == expected, "\(label): \(zip(got, expected).filter { $0 != $1 }.prefix(3))")
        }
    }

    /// A token shown before the file says it was produced is joined by index, not counted lost.
    @Test func tokenShownBeforeItsProducedIsNotLost() throws {
        var b = TraceBuilder()
        let inference = b.list.thread("inference")
        for i in 0..<5 { b.list.append(Int64(i) * Self.ms + 4 * Self.ms, b.main, .token(TokenEvent(stage: .shown, index: Int64(i)))) }
        for i in 0..<5 { b.list.append(Int64(i) * Self.ms, inference, .token(TokenEvent(stage: .produced, index: Int64(i)))) }
        b.list.append(9 * Self.ms, inference, .token(TokenEvent(stage: .produced, index: 5)))
        let t = try #require(try b.analyze().tokens)
        #expect(t.produced == 6)
        #expect(t.shown == 5)
        #expect(t.lost == 1)
        #expect(t.tokenToScreenMs.p50 == 4)
    }
}
