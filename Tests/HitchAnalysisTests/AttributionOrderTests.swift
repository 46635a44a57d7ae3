import Foundation
import HitchAlgorithms
import HitchReader
import HitchTestSupport
import HitchTrace
import Testing
@testable import HitchAnalysis

/// Events in another file order (each thread's own order kept, as docs/FORMAT.md allows) give the
/// same `Analysis`, bit for bit; hitch attribution takes each frame's windows from its own timestamps.
@Suite struct AttributionOrderTests {
    static let ms: Int64 = 1_000_000
    static let period: Int64 = 8_333_333

    /// The events re-interleaved at random: runs of 1...`maxRun` events taken from a random thread's
    /// stream, each thread's order kept (thread-less records, ThreadID 0, form a stream of their own).
    static func interleaved(_ list: TraceEventList, seed: UInt64, maxRun: Int) -> TraceEventList {
        var streams: [UInt32: [TraceEvent]] = [:]
        for event in list.events { streams[event.thread.rawValue, default: []].append(event) }
        var queues = streams.sorted { $0.key < $1.key }.map { (events: $0.value, next: 0) }
        var random = SeededGenerator(seed: seed)
        var out = list
        out.events.removeAll(keepingCapacity: true)
        while !queues.isEmpty {
            let pick = random.below(queues.count)
            let take = min(1 + random.below(maxRun), queues[pick].events.count - queues[pick].next)
            out.events += queues[pick].events[queues[pick].next..<(queues[pick].next + take)]
            queues[pick].next += take
            if queues[pick].next == queues[pick].events.count { queues.remove(at: pick) }
        }
        return out
    }

    /// Whole per-thread buffers in a random order: each thread's events cut into buffers of its own
    /// random size, buffers written in a random order that keeps each thread's buffers in order.
    static func buffersShuffled(_ list: TraceEventList, seed: UInt64) -> TraceEventList {
        var random = SeededGenerator(seed: seed ^ 0xB0FF)
        var streams: [UInt32: [TraceEvent]] = [:]
        for event in list.events { streams[event.thread.rawValue, default: []].append(event) }
        var buffers: [[ArraySlice<TraceEvent>]] = streams.sorted { $0.key < $1.key }.map { stream in
            let size = 1 + random.below(max(1, stream.value.count / 3))
            return stride(from: 0, to: stream.value.count, by: size).map { stream.value[$0..<min($0 + size, stream.value.count)] }
        }
        var out = list
        out.events.removeAll(keepingCapacity: true)
        while !buffers.isEmpty {
            let pick = random.below(buffers.count)
            out.events += buffers[pick].removeFirst()
            if buffers[pick].isEmpty { buffers.remove(at: pick) }
        }
        return out
    }

    /// The first lines where two analyses' JSON differ ("" when equal): a short failure message.
    static func difference(_ got: Analysis, _ expected: Analysis) -> String { got.difference(from: expected) }

    /// A recorded trace as an in-memory list in its file order.
    static func load(_ path: String) throws -> TraceEventList { try TraceOrders.load(path) }

    static var tracesDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Traces")
    }

    /// Frame 263 of Traces/feed-naive-120hz.fxt, rebuilt: a 33.3 ms commit hitch whose main thread
    /// normalizes, filters, lays out ten rows (each an image decode) and diffs; the render thread
    /// renders the frame before it. Its buffer (many frames of render work) reaches the file after
    /// the main thread's, and hundreds of render instances older than the frame sit between them.
    static func frame263Shape() -> (list: TraceEventList, frameID: UInt64) {
        var b = TraceBuilder()
        let main = b.main, render = b.render
        var mainEvents: [TraceEvent] = [], renderEvents: [TraceEvent] = []
        let stage = b.list.intern("stage")
        func name(_ text: String) -> StringID { b.list.intern(text) }
        let hitchFrame: UInt64 = 40
        var vsync: Int64 = 10 * ms
        for id in UInt64(0)..<80 {
            let began = vsync + ms / 10
            mainEvents.append(TraceEvent(timestampNs: began, thread: main, payload: .frameBegan(FrameBegan(frameID: id, vsyncNs: vsync, targetNs: vsync + period, periodNs: period))))
            var cursor = began + 10_000
            func stageEvent(_ text: String, _ duration: Int64) {
                mainEvents.append(TraceEvent(timestampNs: cursor, thread: main, payload: .intervalComplete(category: stage, name: name(text), endNs: cursor + duration)))
                cursor += duration + 5_000
            }
            if id == hitchFrame {
                stageEvent("normalize", 14_270_000)
                stageEvent("filter", 3_880_000)
                // layout (7.0 ms) holding ten image decodes of about 1 ms (end-ordered: children first).
                let layoutStart = cursor
                for _ in 0..<10 { stageEvent("image decode", 600_000) }
                let layoutEnd = layoutStart + 7_000_000
                mainEvents.append(TraceEvent(timestampNs: layoutStart, thread: main, payload: .intervalComplete(category: stage, name: name("layout"), endNs: layoutEnd)))
                cursor = layoutEnd + 5_000
                stageEvent("diff", 6_360_000)
            } else {
                stageEvent("layout", 300_000)
                stageEvent("diff", 100_000)
            }
            let commit = cursor + 10_000
            mainEvents.append(TraceEvent(timestampNs: commit, thread: main, payload: .frameCommitted(frameID: id)))
            let renderStart = vsyncAtOrAfter(commit, anchor: vsync, period: period)
            // Many small render instances per frame: the render buffer carries hundreds per frame.
            for k in 0..<20 {
                let start = renderStart + Int64(k) * 20_000
                renderEvents.append(TraceEvent(timestampNs: start, thread: render, payload: .intervalComplete(category: stage, name: name("render"), endNs: start + 10_000)))
            }
            let renderEnd = renderStart + ms
            renderEvents.append(TraceEvent(timestampNs: renderEnd, thread: render, payload: .frameRenderEnded(frameID: id)))
            renderEvents.append(TraceEvent(timestampNs: renderEnd + period / 2, thread: render, payload: .framePresented(frameID: id)))
            vsync = vsyncAtOrAfter(commit, anchor: vsync, period: period)
        }
        b.list.events = mainEvents + renderEvents
        return (b.list, hitchFrame)
    }

    @Test func frame263IsAttributedToItsMainThreadWorkInAnyOrder() throws {
        let (list, frameID) = Self.frame263Shape()
        var orders: [(String, TraceEventList)] = [("main buffer first", list)]
        orders.append(("time order (a Chrome round trip)", TraceOrders.timeOrdered(list)))
        var renderFirst = list
        renderFirst.events = list.events.filter { $0.thread == ThreadID(rawValue: 1) } + list.events.filter { $0.thread != ThreadID(rawValue: 1) }
        orders.append(("render buffer first", renderFirst))
        for seed in UInt64(1)...4 { orders.append(("interleaved \(seed)", Self.interleaved(list, seed: seed, maxRun: 40))) }
        let expected = try Analyzer.analyze([list])
        for (label, order) in orders {
            let analysis = try Analyzer.analyze([order])
            let hitch = try #require(analysis.hitchAttributions.first { $0.frameID == frameID }, "\(label)")
            #expect(hitch.kind == .commit, "\(label)")
            let stages = Dictionary(uniqueKeysWithValues: hitch.stages.map { ($0.name, $0.ms) })
            #expect(abs((stages["normalize"] ?? 0) - 14.27) < 0.01, "\(label): \(hitch.stages)")
            #expect(abs((stages["filter"] ?? 0) - 3.88) < 0.01, "\(label): \(hitch.stages)")
            #expect(abs((stages["diff"] ?? 0) - 6.36) < 0.01, "\(label): \(hitch.stages)")
            #expect(abs((stages["image decode"] ?? 0) - 6.0) < 0.01, "\(label): \(hitch.stages)")
            #expect(abs((stages["layout"] ?? 0) - 1.0) < 0.01, "\(label): self time beside the decodes: \(hitch.stages)")
            // The render thread's window starts at the commit: the previous frame's render is not this frame's.
            #expect((stages["render"] ?? 0) < 0.5, "\(label): \(hitch.stages)")
            let difference = Self.difference(analysis, expected)
            #expect(difference.isEmpty, "\(label): \(difference)")
        }
    }

    /// A generated feed-like session (frames, nested stages, bodies, samples, a worker, input) with
    /// its events in the order the generator wrote them.
    static func generated(frames: Int, seed: UInt64, threadStates: Bool = false) throws -> TraceEventList {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hitch-order-\(getpid())-\(seed).fxt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try TraceFileWriter(path: path)
        var generator = SyntheticTrace(seed: seed)
        generator.threadStates = threadStates
        _ = generator.write(to: writer, targetBytes: .max, maxFrames: frames)
        _ = try writer.close()
        return try load(path)
    }

    /// Threads interleaved at random, event by event or in runs, not only whole buffers.
    @Test func randomInterleavingsGiveTheSameAnalysis() throws {
        let session = try Self.generated(frames: 900, seed: 3)
        let expected = try Analyzer.analyze([session])
        #expect(expected.recorded.hitchCount > 3)
        #expect(expected.hitchAttributions.allSatisfy { !$0.stages.isEmpty })
        for seed in UInt64(1)...10 {
            let order = seed % 2 == 0 ? Self.interleaved(session, seed: seed, maxRun: 1 + Int(seed) * 7)
                                      : Self.buffersShuffled(session, seed: seed)
            let difference = Self.difference(try Analyzer.analyze([order]), expected)
            #expect(difference.isEmpty, "seed \(seed): \(difference)")
        }
    }

    /// Every bundled trace and a generated one in other buffer orders: the same figures, bit for
    /// bit, when the order stays within the bound the trace states (a trace that states none has
    /// none: any order). Beyond it (whole buffers moved: a freshly recorded trace states its flush
    /// interval) the contract promises the warning with the count of the events beyond it, and the
    /// figures that join nothing across threads (`perThreadFigures`).
    @Test(arguments: ["feed-naive-120hz.fxt", "feed-tuned-120hz.fxt", "llm-newest4-120hz.fxt", "llm-q4_0-120hz.fxt", "generated"])
    func bundledTracesGiveBitIdenticalAnalysesInAnyOrder(_ file: String) throws {
        var list: TraceEventList
        if file == "generated" {
            list = try Self.generated(frames: 1000, seed: 5)
        } else {
            let path = Self.tracesDirectory.appendingPathComponent(file).path
            try #require(FileManager.default.fileExists(atPath: path), "the recorded traces are in Traces/")
            // A fresh recording states its bound; one made on an overloaded machine, the bound it kept.
            list = TraceOrders.statingTheBoundItKeeps(try Self.load(path))
        }
        let expected = try Analyzer.analyze([list])
        #expect(expected.eventCount > 1000)
        #expect(TraceOrders.beyondBoundEvents(list) == 0 && EventOrderTests.beyondBoundWarning(expected) == nil)
        // (The Chrome round trip of every bundled trace: ChromeTraceExporterTests.recordedTracesRoundTrip.)
        let orders = [Self.buffersShuffled(list, seed: 3), Self.interleaved(list, seed: 9, maxRun: 500), Self.interleaved(list, seed: 4, maxRun: 3)]
        for (index, order) in orders.enumerated() {
            let got = try Analyzer.analyze([order])
            let beyond = TraceOrders.beyondBoundEvents(order)
            if beyond == 0 {
                #expect(EventOrderTests.beyondBoundWarning(got) == nil, "\(file) order \(index)")
                let difference = Self.difference(got, expected)
                #expect(difference.isEmpty, "\(file) order \(index): \(difference)")
            } else {
                let warning = EventOrderTests.beyondBoundWarning(got) ?? "no warning"
                #expect(warning.hasPrefix("run 1: \(beyond) events reached the file later"), "\(file) order \(index): \(beyond) beyond, \(warning)")
                let difference = Self.difference(Self.perThreadFigures(got), Self.perThreadFigures(expected))
                #expect(difference.isEmpty, "\(file) order \(index), \(beyond) events beyond the bound: \(difference)")
            }
        }
    }

    /// The figures that join nothing across threads (docs/METRICS.md "File order"): what an order
    /// beyond the bound leaves alone. Each is taken from one thread's events (or sums of such, in
    /// integer ns) and released by nothing but the end of the run: the events, stages (but their
    /// time in hitching frames), view evaluations (but per frame), layout, invalidations and
    /// main-thread samples (but those in hitches).
    static func perThreadFigures(_ a: Analysis) -> Analysis {
        var kept = Analysis()
        kept.eventCount = a.eventCount
        kept.droppedEvents = a.droppedEvents
        kept.metadata = a.metadata
        kept.runs = a.runs.map { run in
            var r = RunSummary()
            r.path = run.path; r.eventCount = run.eventCount; r.droppedEvents = run.droppedEvents
            r.durationMs = run.durationMs; r.endedCleanly = run.endedCleanly; r.cutShortAtByte = run.cutShortAtByte
            return r
        }
        kept.stages = a.stages.map { var s = $0; s.inHitchingFramesMs = 0; return s }
        kept.views = a.views.map { var v = $0; v.evaluationsPerFrame = 0; return v }
        kept.layout = a.layout
        kept.invalidations = a.invalidations
        kept.invalidationSources = a.invalidationSources
        kept.samples.mainThreadSamples = a.samples.mainThreadSamples
        kept.samples.folded = a.samples.folded
        return kept
    }
}
