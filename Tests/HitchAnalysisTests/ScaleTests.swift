import Foundation
import HitchReader
import Testing
@testable import HitchAnalysis

/// A seeded generator of big, realistic traces: 120 Hz frames with main-thread stages, body
/// evaluations, invalidations and occasional stalls (hitches), written by `TraceFileWriter`.
struct ScaleTraceGenerator {
    /// SplitMix64: deterministic for a seed, fast, no Foundation randomness.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: UInt64) -> UInt64 { next() % n }
    }

    static let periodNs: Int64 = 8_333_333

    /// Writes frames `range` of the seeded session to `path` (the same frame index always gets the
    /// same events, so a session split over several files holds exactly the frames of one file).
    /// Returns the events written.
    @discardableResult
    static func write(path: String, frames range: Range<Int>, seed: UInt64 = 42) throws -> Int {
        let w = try TraceFileWriter(path: path)
        let main = w.thread(name: "main", threadID: 1)
        let render = w.thread(name: "render", threadID: 2)
        w.setMetadata("refreshRateHz", "120", thread: main, timestampNs: Int64(range.lowerBound) * periodNs)
        let stage = w.string("stage")
        let stageNames = ["normalize", "filter", "sort", "diff", "layout-prep"].map { w.string($0) }
        let views = ["FeedRow", "FeedHeader", "Thumbnail"].map { w.string($0) }
        let source = w.string("FeedModel.query")
        var events = 1
        for f in range {
            var random = Random(state: seed ^ UInt64(f) &* 0x2545_F491_4F6C_DD1D)
            let vsync = Int64(f) * periodNs
            let frameID = UInt64(f + 1)
            w.write(TraceEvent(timestampNs: vsync, thread: main, payload: .frameBegan(FrameBegan(
                frameID: frameID, vsyncNs: vsync, targetNs: vsync + periodNs, periodNs: periodNs))))
            // Main-thread work: usually 2-6 ms, one frame in 50 stalls 10-30 ms.
            let stall = random.below(50) == 0
            let workNs = stall ? Int64(10_000_000 + random.below(20_000_000)) : Int64(2_000_000 + random.below(4_000_000))
            var t = vsync + 50_000
            let stageCount = 2 + Int(random.below(3))
            let slice = workNs / Int64(stageCount + 1)
            for s in 0..<stageCount {
                let name = stageNames[(f + s) % stageNames.count]
                w.write(TraceEvent(timestampNs: t, thread: main, payload: .intervalComplete(category: stage, name: name, endNs: t + slice)))
                let view = views[Int(random.below(UInt64(views.count)))]
                w.write(TraceEvent(timestampNs: t + 1000, thread: main, payload: .bodyEvaluation(BodyEvaluation(
                    viewType: view, identity: random.below(10_000), endNs: t + slice / 2))))
                t += slice
                events += 2
            }
            w.write(TraceEvent(timestampNs: t, thread: main, payload: .invalidation(Invalidation(
                source: source, target: views[0], targetIdentity: UInt64(f % 10_000), stack: nil))))
            let commit = vsync + workNs
            w.write(TraceEvent(timestampNs: commit, thread: main, payload: .frameCommitted(frameID: frameID)))
            let renderStart = vsync + ((commit - vsync + periodNs - 1) / periodNs) * periodNs
            w.write(TraceEvent(timestampNs: renderStart + 1_500_000, thread: render, payload: .frameRenderEnded(frameID: frameID)))
            events += 4
        }
        _ = try w.close()
        return events
    }
}

/// Scale: a big generated trace analyzes in one pass with bounded resident memory, and a
/// session split over several traces gives the figures of the same frames in one trace.
@Suite struct ScaleTests {
    /// Generates a ~`HITCH_SCALE_MB` (default 60) MB trace in a child process, resets the peak
    /// resident size, analyzes it, and checks the peak grew by less than 100 MB. The child prints its
    /// figures. `HITCH_SCALE_MB=2048` gives the 2 GB figure (docs/RELIABILITY.md).
    @Test func bigTraceAnalyzesWithBoundedResidentMemory() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let megabytes = Int(ProcessInfo.processInfo.environment["HITCH_SCALE_MB"] ?? "") ?? 60
            let path = NSTemporaryDirectory() + "hitch-scale-\(getpid()).fxt"
            defer { unlink(path) }
            // About 330 bytes per frame (10-12 events).
            let frames = megabytes * 1_000_000 / 330
            let generateStart = Date()
            let events = try ScaleTraceGenerator.write(path: path, frames: 0..<frames)
            let generateSeconds = Date().timeIntervalSince(generateStart)
            let bytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
            // Peak resident size from here on (Linux: writing 5 to clear_refs resets VmHWM).
            try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
            let before = ScaleTests.statusKB("VmRSS")
            let start = Date()
            let analysis = try Analyzer.analyze(paths: [path], options: AnalyzerOptions(refreshRatesHz: [60, 120]))
            let seconds = Date().timeIntervalSince(start)
            let peak = ScaleTests.statusKB("VmHWM")
            let growthMB = Double(peak - before) / 1024
            print(String(format: "scale: %.1f MB trace, %d frames, %d events; generated in %.1f s; analyzed in %.1f s (%.2f M events/s, debug build); RSS before %.1f MB, peak %.1f MB, growth %.1f MB; hitches at 120 Hz: %d",
                         Double(bytes) / 1e6, frames, events, generateSeconds, seconds, Double(events) / seconds / 1e6,
                         Double(before) / 1024, Double(peak) / 1024, growthMB, analysis.hitches["120"]?.hitchCount ?? -1))
            guard analysis.recorded.frameCount == frames, UInt64(events) <= analysis.eventCount + 16 else {
                print("scale: wrong figures: \(analysis.recorded.frameCount) frames of \(frames), \(analysis.eventCount) events of \(events)")
                exit(3)
            }
            guard growthMB < 100 else { print("scale: resident memory grew by \(growthMB) MB"); exit(4) }
        }
        if let output = result?.standardOutputContent { print(String(decoding: output, as: UTF8.self), terminator: "") }
    }

    /// The same frames in one trace and split over several traces (`hitch analyze A B C`): the same
    /// frame, hitch and stage figures at the recorded and at a replayed rate; the hitch time ratio
    /// differs only by the gaps between runs. `HITCH_MERGE_FRAMES=10000000 HITCH_MERGE_PIECES=12`
    /// gives the 10-million-frame figure (docs/RELIABILITY.md; ~3.3 GB per copy in $TMPDIR).
    @Test func splitTracesMergeToTheFiguresOfOneTrace() throws {
        let environment = ProcessInfo.processInfo.environment
        let frames = max(1_000, Int(environment["HITCH_MERGE_FRAMES"] ?? "") ?? 24_000)
        let pieces = min(max(2, Int(environment["HITCH_MERGE_PIECES"] ?? "") ?? 3), 100)
        let whole = NSTemporaryDirectory() + "hitch-merge-whole-\(getpid()).fxt"
        let parts = (0..<pieces).map { NSTemporaryDirectory() + "hitch-merge-part\($0)-\(getpid()).fxt" }
        defer { for path in [whole] + parts { unlink(path) } }
        try ScaleTraceGenerator.write(path: whole, frames: 0..<frames)
        // Uneven cuts, odd and even, so some fall inside a replayed frame group.
        let cuts = [0] + (1..<pieces).map { k in k * frames / pieces + (k % 2 == 1 ? 1 : -k * 7) } + [frames]
        for (index, path) in parts.enumerated() {
            try ScaleTraceGenerator.write(path: path, frames: cuts[index]..<cuts[index + 1])
        }
        let one = try Analyzer.analyze(paths: [whole])
        let merged = try Analyzer.analyze(paths: parts)
        #expect(merged.runs.count == pieces)
        #expect(one.recorded.frameCount == frames)
        #expect(merged.recorded.frameCount == one.recorded.frameCount)
        // At the recorded rate (120 Hz) every figure is equal.
        let a = try #require(one.hitches["120"]), b = try #require(merged.hitches["120"])
        #expect(a.source == .recorded && a.hitchCount > 0)
        #expect(b.frameCount == a.frameCount)
        #expect(b.hitchCount == a.hitchCount)
        #expect(abs(b.totalHitchMs - a.totalHitchMs) < 1e-6 * max(1, a.totalHitchMs), "\(b.totalHitchMs) vs \(a.totalHitchMs)")
        #expect(b.longestHitchMs == a.longestHitchMs)
        #expect(b.slowFrames == a.slowFrames && b.frozenFrames == a.frozenFrames)
        // The histogram holds every frame, also past the 20,000 `frames[]` samples, and merges exactly.
        #expect(one.framesTruncated == (frames > FrameSample.limit))
        #expect(a.frameTimeHistogram.counts.reduce(0, +) == frames)
        #expect(b.frameTimeHistogram == a.frameTimeHistogram)
        #expect(b.commitHitchCount == a.commitHitchCount && b.renderHitchCount == a.renderHitchCount)
        // Animating time loses at most the gaps at the two cuts (a few periods of 200 s).
        #expect(abs(b.hitchTimeRatioMsPerS - a.hitchTimeRatioMsPerS) <= 0.001 * a.hitchTimeRatioMsPerS,
                "\(b.hitchTimeRatioMsPerS) vs \(a.hitchTimeRatioMsPerS) ms/s")
        // Percentiles come from mergeable sketches: equal within the sketch's stated error.
        let tolerance = max(a.frameTimeMs.relativeError, 0.01)
        for (x, y) in [(a.frameTimeMs.p50, b.frameTimeMs.p50), (a.frameTimeMs.p99, b.frameTimeMs.p99), (a.frameTimeMs.max, b.frameTimeMs.max)] {
            #expect(abs(x - y) <= tolerance * max(abs(x), 1e-9) + 1e-9, "frame time percentile \(x) vs \(y)")
        }
        // At a replayed rate (60 Hz) each later piece starts after the previous one ended, so the
        // replay continues one vsync grid across the cuts and gives the figures of the whole trace.
        let r1 = try #require(one.hitches["60"]), r2 = try #require(merged.hitches["60"])
        #expect(r1.source == .replay && r1.hitchCount > 0)
        #expect(r2.frameCount == r1.frameCount, "60 Hz frames \(r2.frameCount) vs \(r1.frameCount)")
        #expect(r2.hitchCount == r1.hitchCount, "60 Hz hitches \(r2.hitchCount) vs \(r1.hitchCount)")
        #expect(r2.slowFrames == r1.slowFrames && r2.frozenFrames == r1.frozenFrames)
        #expect(r2.longestHitchMs == r1.longestHitchMs)
        #expect(abs(r2.totalHitchMs - r1.totalHitchMs) < 1e-6 * max(1, r1.totalHitchMs), "60 Hz hitch ms \(r2.totalHitchMs) vs \(r1.totalHitchMs)")
        #expect(abs(r2.worstWindow.hitchMs - r1.worstWindow.hitchMs) < 1e-6 * max(1, r1.worstWindow.hitchMs))
        #expect(abs(r2.hitchTimeRatioMsPerS - r1.hitchTimeRatioMsPerS) <= 0.001 * r1.hitchTimeRatioMsPerS)
        // A run that starts before the previous one ended (here: the same trace twice) is another
        // recording: it gets a grid of its own, so the figures are exactly twice one trace's.
        print("merge: \(frames) frames, \(pieces) pieces, \(one.eventCount) events: 120 Hz \(a.frameCount) vs \(b.frameCount) frames, \(a.hitchCount) vs \(b.hitchCount) hitches, \(a.totalHitchMs) vs \(b.totalHitchMs) ms; 60 Hz replay \(r1.frameCount) vs \(r2.frameCount) frames, \(r1.hitchCount) vs \(r2.hitchCount) hitches, \(r1.totalHitchMs) vs \(r2.totalHitchMs) ms, ratio \(r1.hitchTimeRatioMsPerS) vs \(r2.hitchTimeRatioMsPerS) ms/s")
        let twice = try Analyzer.analyze(paths: [whole, whole])
        let t = try #require(twice.hitches["60"])
        #expect(t.frameCount == 2 * r1.frameCount && t.hitchCount == 2 * r1.hitchCount && t.slowFrames == 2 * r1.slowFrames)
        #expect(abs(t.totalHitchMs - 2 * r1.totalHitchMs) < 1e-6 * max(1, r1.totalHitchMs))
        let stagesA = Dictionary(uniqueKeysWithValues: one.stages.map { ($0.name, $0) })
        #expect(merged.stages.count == one.stages.count)
        for stage in merged.stages {
            let a = try #require(stagesA[stage.name])
            #expect(stage.count == a.count, "\(stage.name)")
            #expect(abs(stage.totalMs - a.totalMs) < 1e-6 * max(1, a.totalMs), "\(stage.name): \(stage.totalMs) vs \(a.totalMs)")
            #expect(abs(stage.selfMs - a.selfMs) < 1e-6 * max(1, a.selfMs), "\(stage.name)")
        }
        let viewsA = Dictionary(uniqueKeysWithValues: one.views.map { ($0.type, $0) })
        for view in merged.views {
            #expect(view.bodyEvaluations == viewsA[view.type]?.bodyEvaluations, "\(view.type)")
            #expect(view.longUpdates == viewsA[view.type]?.longUpdates, "\(view.type)")
        }
        #expect(merged.invalidations.map(\.count) == one.invalidations.map(\.count))
    }

    static func statusKB(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return 0
    }
}
