import Foundation
import HitchAnalysis
import HitchImport
import HitchTestSupport
import Testing

/// SurfaceFlinger's FrameTimeline read as SurfaceFlinger means it, against truth from outside the
/// importer: `Tests/Fixtures/import/make-frametimeline-truth.py` simulates the display pipeline from
/// FrameTimeline.cpp's rules and writes what FrameTimeline traces with Perfetto's own protos (PyPI
/// `perfetto`, installed on first use: `FrameTimelineTraces`), and the simulation's
/// own numbers as truth: each frame's missed refreshes on the display, its latency behind a stuffed
/// queue, which side was late, and SurfaceFlinger's verdict with trace_processor's tag. At 60 Hz
/// (no present delay: the expected present comes from SurfaceFlinger's expected duration), 90 Hz
/// (present delay, FrameTimeline on two sequences committed out of order) and 120 Hz (present
/// delay, compressed packets, display frames without an expected timeline).
@Suite struct PerfettoFrameTimelineTests {
    struct Truth: Decodable {
        struct Frame: Decodable {
            var token: UInt64
            var judged: Bool
            var dropped: Bool
            var inFlight: Bool
            var expired: Bool
            var hitchNs: Int64?
            var latencyNs: Int64?
            var kind: String?
            var tag: String?
            var jankNames: [String]?
            var platformJanky: Bool?
            var blame: String?
            var gpuComposition: Bool?
            var layer: String?
        }
        struct Agreement: Decodable { var frames, bothJanky, platformOnly, hitchOnly, bothOnTime: Int }
        var rateHz: Double
        var periodNs: Int64
        var framesJudged: Int
        var hitchCount: Int
        var totalHitchNs: Int64
        var longestHitchNs: Int64
        var hitchTimeRatioMsPerS: Double
        var commitHitchCount: Int
        var renderHitchCount: Int
        var appBlamedHitchNs: Int64
        var compositorBlamedHitchNs: Int64
        var droppedFrames: Int
        var inFlightFrames: Int
        var agreement: Agreement
        var frames: [Frame]
    }

    static func load(_ name: String) throws -> (Truth, Analysis, ImportSummary) {
        let directory = try FrameTimelineTraces.directory()
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: directory.appendingPathComponent(name + ".truth.json")))
        let (summary, analysis) = try AnalyzedImport.run(.perfetto, inputs: [directory.appendingPathComponent(name + ".pftrace").path],
                                                        refreshRatesHz: [truth.rateHz])
        return (truth, analysis, summary)
    }

    static let traces = ["frametimeline-60hz", "frametimeline-90hz", "frametimeline-120hz"]

    /// Every frame's hitch, latency and kind, the totals, the hitch time ratio and the agreement with
    /// SurfaceFlinger equal the simulation's: app deadlines missed by 1, 2 and 3 periods, a frame late
    /// on its GPU and the frames stuffed behind it (latency, not hitches), SurfaceFlinger late on its
    /// CPU and GPU and the display HAL late (the compositor's hitches; the frame after each is late in
    /// SurfaceFlinger's eyes, shown one vsync after it on the display), a present off its predicted
    /// vsync (a prediction error SurfaceFlinger calls jank, shown on its vsync), a dropped frame, an
    /// expired prediction after a long stall, a frame in flight.
    @Test(arguments: traces)
    func framesEqualTheSimulation(_ name: String) throws {
        let (truth, analysis, summary) = try Self.load(name)
        let recorded = analysis.recorded
        #expect(recorded.frameCount == truth.framesJudged)
        #expect(recorded.hitchCount == truth.hitchCount)
        #expect(abs(recorded.totalHitchMs - Double(truth.totalHitchNs) / 1e6) < 0.001)
        #expect(abs(recorded.longestHitchMs - Double(truth.longestHitchNs) / 1e6) < 0.001)
        #expect(abs(recorded.hitchTimeRatioMsPerS - truth.hitchTimeRatioMsPerS) < 0.001)
        #expect(recorded.commitHitchCount == truth.commitHitchCount && recorded.renderHitchCount == truth.renderHitchCount)
        #expect(recorded.unjudgedFrames == truth.droppedFrames + truth.inFlightFrames)
        #expect(analysis.recordedRates.map(\.rateHz) == [truth.rateHz])
        // The platform's split of who was late: the app's deadlines are app work, SurfaceFlinger's
        // and the display's the compositor's; the app's share gates Android as it gates our traces.
        #expect(abs(recorded.byCause.appWork.totalHitchMs - Double(truth.appBlamedHitchNs) / 1e6) < 0.001)
        #expect(abs(recorded.byCause.compositor.totalHitchMs - Double(truth.compositorBlamedHitchNs) / 1e6) < 0.001)
        let animatingS = recorded.animatingSeconds
        #expect(abs((recorded.appHitchTimeRatioMsPerS ?? -1) - Double(truth.appBlamedHitchNs) / 1e6 / animatingS) < 0.001)
        let agreement = try #require(analysis.platformAgreement)
        #expect(agreement.frames == truth.agreement.frames && agreement.bothJanky == truth.agreement.bothJanky
                && agreement.platformOnly == truth.agreement.platformOnly && agreement.hitchOnly == truth.agreement.hitchOnly)
        #expect(agreement.trusted)
        #expect(analysis.headline?.untrusted == nil)
        #expect(summary.frames == truth.frames.count)

        let byToken = Dictionary(analysis.frames.map { ($0.frameID & ((1 << 56) - 1), $0) }, uniquingKeysWith: { first, _ in first })
        for frame in truth.frames where frame.judged {
            let sample = try #require(byToken[frame.token], "frame \(frame.token)")
            #expect(abs(sample.hitchMs - Double(frame.hitchNs ?? 0) / 1e6) < 0.001, "frame \(frame.token): hitch")
            let latencyMs = sample.overrunMs - sample.hitchMs
            #expect(abs(latencyMs - Double(frame.latencyNs ?? 0) / 1e6) < 0.001, "frame \(frame.token): latency")
            #expect(sample.kind.rawValue == frame.kind, "frame \(frame.token): kind")
            // SurfaceFlinger's verdict kept per frame: the jank types, trace_processor's tag and the
            // layer, and which side it blames.
            let verdict = try #require(sample.platformVerdict, "frame \(frame.token): verdict")
            for jank in frame.jankNames ?? [] { #expect(verdict.contains(jank), "frame \(frame.token): \(verdict) lacks \(jank)") }
            if let tag = frame.tag { #expect(verdict.contains("(" + tag + ";"), "frame \(frame.token): \(verdict) lacks \(tag)") }
            if let layer = frame.layer { #expect(verdict.contains("layer " + layer)) }
            if frame.gpuComposition == true { #expect(verdict.contains("GPU composition")) }
            let word = verdict.prefix { $0 != ":" }
            let expectedWord = frame.blame == "compositor" ? "janky elsewhere" : frame.platformJanky == true ? "janky" : "on time"
            #expect(word == expectedWord, "frame \(frame.token): \(verdict)")
            if sample.hitchMs > 0 { #expect(sample.cause == (frame.blame == "compositor" ? .compositor : .appWork), "frame \(frame.token)") }
        }
    }

    /// One frame in eight shown a fifth of a period off its predicted vsync: SurfaceFlinger calls it
    /// janky (Prediction Error), the display showed it on its vsync. 12.5% of the frames disagree:
    /// the analysis says its figures are not to be trusted, first.
    @Test func disagreementPastFivePercentIsNotTrusted() throws {
        let (truth, analysis, _) = try Self.load("frametimeline-drift-90hz")
        let agreement = try #require(analysis.platformAgreement)
        #expect(agreement.platformOnly == truth.agreement.platformOnly && truth.agreement.platformOnly == 15)
        #expect(!agreement.trusted && abs(agreement.disagreementRatio - 0.125) < 1e-9)
        let untrusted = try #require(analysis.headline?.untrusted)
        #expect(untrusted.contains("12.5% of the 120 frames") && untrusted.contains("the platform alone called 15 janky"))
        #expect(analysis.recorded.hitchCount == 0)
    }
}
