import Foundation
import HitchImport
import HitchTestSupport
import Testing
@testable import HitchAnalysis

/// Imported traces judged against what their generators planted, and against the platform's own
/// verdict carried beside each frame (docs/IMPORT.md).
@Suite struct ImportTruthTests {
    static let fixtures = HostileAnalysisTests.repository.appendingPathComponent("Tests/Fixtures/import")

    static func importAndAnalyze(_ format: ImportFormat, _ name: String, options: ImportOptions = ImportOptions()) throws -> (ImportSummary, Analysis) {
        try AnalyzedImport.run(format, inputs: [fixtures.appendingPathComponent(name).path], options: options)
    }

    /// Every FrameInfo column set from Android 6 to 16 (FrameInterval and FrameStartTime swapped in
    /// one header, DisplayPresentTime 0 in it, two windows at 60 and 120 Hz in one dump): each window
    /// has a frame one period late and one two periods late, and Android calls exactly those janky.
    @Test(arguments: ["framestats-android6.txt", "framestats-android8.txt", "framestats-android10.txt", "framestats-android12.txt",
                      "framestats-android12-swapped.txt", "framestats-android14.txt", "framestats-android16.txt"])
    func framestatsJankyFramesAreOurHitches(_ name: String) throws {
        let (summary, analysis) = try Self.importAndAnalyze(.framestats, name)
        // A dump of two windows imports one (the most frames; the first of equals), said in the warnings.
        let windows = 1
        if name.contains("android14") { #expect(summary.warnings.contains { $0.hasPrefix("read window 'com.example.feed/.MainActivity'") }) }
        #expect(summary.frames == 40 * windows)
        let agreement = try #require(analysis.platformAgreement)
        #expect(agreement.frames == 40 * windows)
        #expect(agreement.bothJanky == 2 * windows && agreement.platformOnly == 0 && agreement.hitchOnly == 0)
        // Hitches of one and two periods at each window's own rate (FrameInterval, or inferred).
        let hitches = analysis.frames.filter { $0.hitchMs > 0 }
        #expect(hitches.count == 2 * windows)
        for pair in stride(from: 0, to: hitches.count, by: 2) {
            let period = hitches[pair].periodMs
            #expect(abs(hitches[pair].hitchMs - period) < 0.001)
            #expect(abs(hitches[pair + 1].hitchMs - 2 * period) < 0.001)
            #expect(hitches[pair].kind == .commit && hitches[pair + 1].kind == .commit)
        }
        #expect(analysis.stages.contains { $0.name == "draw" && $0.count == 40 * windows })
    }

    @Test func framestatsRefreshOptionOverridesTheInferredPeriod() throws {
        let (_, analysis) = try Self.importAndAnalyze(.framestats, "framestats-android6.txt", options: ImportOptions(periodNs: 8_333_333))
        #expect(analysis.recordedRates.map(\.rateHz) == [120])
    }

    /// One frame of a Perfetto fixture's ground truth (what make-perfetto-fixtures.py planted in it).
    struct PerfettoTruthFrame: Decodable {
        var token: UInt64
        var scenario: String
        var judged: Bool
        var latenessNs: Int64?
        var hitchNs: Int64?
        var kind: String?
        var androidJanky: Bool?
        var cause: String?
    }

    struct PerfettoTruth: Decodable {
        var periodNs: Int64
        var frames: [PerfettoTruthFrame]
        var totalHitchNs: Int64
        var hitchTimeRatioMsPerS: Double
    }

    /// Perfetto traces written with Perfetto's own Python package (Tests/Fixtures/import/make-perfetto-fixtures.py)
    /// at 60 and 120 Hz, packets in SurfaceFlinger's emit order: each frame's lateness, hitch and
    /// commit/render split, and the hitch time ratio, equal the generator's ground truth; the split
    /// agrees with Android's jank types; dropped and in-flight frames are not judged.
    @Test(arguments: ["perfetto-60hz", "perfetto-120hz"])
    func perfettoFramesEqualTheGeneratorsTruth(_ name: String) throws {
        let truth = try JSONDecoder().decode(PerfettoTruth.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent(name + ".truth.json")))
        let (_, analysis) = try Self.importAndAnalyze(.perfetto, name + ".pftrace")
        let rate = truth.periodNs > 10_000_000 ? "60" : "120"
        let figures = try #require(analysis.hitches[rate])
        #expect(figures.source == .recorded)
        #expect(abs(figures.hitchTimeRatioMsPerS - truth.hitchTimeRatioMsPerS) < 1e-6)
        let ours = Dictionary(analysis.frames.map { ($0.frameID, $0) }, uniquingKeysWith: { first, _ in first })
        for frame in truth.frames {
            guard frame.judged else {
                #expect(ours[frame.token] == nil, "\(frame.scenario) should not be judged")
                continue
            }
            let judged = try #require(ours[frame.token], "\(frame.scenario) missing")
            #expect(abs(judged.hitchMs * 1e6 - Double(frame.hitchNs ?? 0)) < 2, "\(frame.scenario)")
            #expect(abs(judged.overrunMs * 1e6 - Double(frame.latenessNs ?? 0)) < 2, "\(frame.scenario)")
            #expect(judged.kind.rawValue == frame.kind, "\(frame.scenario)")
            let verdict = try #require(judged.platformVerdict)
            #expect(verdict.hasPrefix("janky") == frame.androidJanky, "\(frame.scenario): \(verdict)")
            // The app's misses are commit hitches, the compositor's render hitches.
            if judged.kind == .commit { #expect(verdict.contains("App Deadline Missed") || verdict.contains("Unknown Jank"), "\(verdict)") }
            if judged.kind == .render { #expect(verdict.contains("SurfaceFlinger"), "\(verdict)") }
        }
        let agreement = try #require(analysis.platformAgreement)
        #expect(agreement.agreementRatio == 1)
        #expect(agreement.unjudged == 1)   // the dropped frame
        #expect(analysis.stages.contains { $0.name == "Choreographer#doFrame" } && analysis.stages.contains { $0.name == "DrawFrame" })
    }

    struct PerfettoSchedTruth: Decodable {
        struct App: Decodable { var pid: Int64; var name: String; var frames: Int }
        var frames: [PerfettoTruthFrame]
        var hitchTimeRatioMsPerS: Double
        var app: App
        var otherApp: App
    }

    /// A Perfetto trace with ftrace scheduling (compact_sched on one CPU, sched_switch and
    /// sched_waking events on the other) and doFrame/DrawFrames slices: each janky frame's cause
    /// equals the one the generator planted (the main thread's own work; runnable behind another
    /// process or behind the app's own worker; preempted; asleep), and the hitches equal its truth.
    @Test func perfettoSchedCausesEqualThePlantedOnes() throws {
        let truth = try JSONDecoder().decode(PerfettoSchedTruth.self,
                                             from: Data(contentsOf: Self.fixtures.appendingPathComponent("perfetto-sched-60hz.truth.json")))
        let (summary, analysis) = try Self.importAndAnalyze(.perfetto, "perfetto-sched-60hz.pftrace",
                                                            options: ImportOptions(process: PerfettoProcessSelection(truth.app.name)))
        #expect(summary.frames == truth.app.frames)
        #expect(abs(analysis.recorded.hitchTimeRatioMsPerS - truth.hitchTimeRatioMsPerS) < 1e-6)
        let states = try #require(analysis.threadStates)
        #expect(states.source == .ftrace && states.appThreadSplit)
        #expect(states.framesWithReadings == truth.app.frames)
        let ours = Dictionary(analysis.frames.map { ($0.frameID, $0) }, uniquingKeysWith: { first, _ in first })
        let attributions = Dictionary(analysis.hitchAttributions.map { ($0.frameID, $0) }, uniquingKeysWith: { first, _ in first })
        for frame in truth.frames where frame.judged {
            let judged = try #require(ours[frame.token], "\(frame.scenario) missing")
            #expect(abs(judged.hitchMs * 1e6 - Double(frame.hitchNs ?? 0)) < 2, "\(frame.scenario)")
            #expect(judged.kind.rawValue == frame.kind, "\(frame.scenario)")
            #expect(judged.cause?.rawValue == frame.cause, "\(frame.scenario): \(String(describing: judged.cause))")
            #expect(judged.mainThreadStates != nil, "\(frame.scenario)")
        }
        // The waits for a CPU: 15 ms behind the worker is the app's; behind logd it is not.
        let worker = try #require(truth.frames.first { $0.cause == "waitingForAppThreads" })
        let behindWorker = try #require(attributions[worker.token])
        #expect(behindWorker.cpuTakenBy.first?.name == "worker")
        #expect(abs((behindWorker.mainThreadStates?.runnableBehindAppThreadsMs ?? 0) - 15) < 0.01)
        for frame in truth.frames where frame.cause == "waitingForCPU" {
            let attribution = try #require(attributions[frame.token])
            #expect(attribution.cpuTakenBy.isEmpty, "\(frame.scenario)")
            #expect((attribution.mainThreadStates?.runnableMs ?? 0) > 13.9, "\(frame.scenario)")
        }
    }

    /// A Perfetto trace with two apps' frames is refused without `--process`, the error listing both;
    /// `--process` by pid or by name picks one.
    @Test func perfettoProcessSelection() throws {
        let truth = try JSONDecoder().decode(PerfettoSchedTruth.self,
                                             from: Data(contentsOf: Self.fixtures.appendingPathComponent("perfetto-sched-60hz.truth.json")))
        do {
            _ = try Self.importAndAnalyze(.perfetto, "perfetto-sched-60hz.pftrace")
            Issue.record("a trace with two apps' frames was imported without --process")
        } catch let error as ImportError {
            let text = error.description
            #expect(!text.contains("\n") && text.contains("--process"))
            #expect(text.contains("\(truth.app.name) (pid \(truth.app.pid), \(truth.app.frames) frames)"), "\(text)")
            #expect(text.contains("\(truth.otherApp.name) (pid \(truth.otherApp.pid), \(truth.otherApp.frames) frames)"), "\(text)")
        }
        let (byPid, _) = try Self.importAndAnalyze(.perfetto, "perfetto-sched-60hz.pftrace",
                                                   options: ImportOptions(process: PerfettoProcessSelection(String(truth.otherApp.pid))))
        #expect(byPid.frames == truth.otherApp.frames)
        do {
            _ = try Self.importAndAnalyze(.perfetto, "perfetto-sched-60hz.pftrace", options: ImportOptions(process: .name("com.absent")))
            Issue.record("--process of an absent app was accepted")
        } catch let error as ImportError {
            #expect(error.description.contains("'com.absent'") && error.description.contains(truth.app.name), "\(error)")
        }
    }

    struct XctraceTruth: Decodable {
        var appleHitchCount: Int
        var totalHitchNs: Int64
        var animationNs: Int64
        var hitchTimeRatioMsPerS: Double
        var frames: Int
        var periodsNs: [Int64]
    }

    /// An Instruments export (Tests/Fixtures/import/make-xctrace-fixtures.py: hitches, display-surface-swap with
    /// display-vsyncs-interval, time-profile with <backtrace> and <tagged-backtrace>, ids and refs):
    /// the hitch time ratio is the sum of Apple's hitch durations over the animation time, every
    /// Apple hitch is Hitch's, the periods come from the display, samples become named offenders.
    @Test func xctraceHitchTimeRatioIsApplesDurationsOverTheAnimation() throws {
        let truth = try JSONDecoder().decode(XctraceTruth.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent("xctrace.truth.json")))
        let inputs = ["xctrace-hitches.xml", "xctrace-display.xml", "xctrace-time-profile.xml"].map { Self.fixtures.appendingPathComponent($0).path }
        let (summary, analysis) = try AnalyzedImport.run(.xctrace, inputs: inputs)
        #expect(summary.frames == truth.frames)
        #expect(abs(analysis.recorded.hitchTimeRatioMsPerS - truth.hitchTimeRatioMsPerS) < 1e-6)
        #expect(abs(analysis.recorded.totalHitchMs * 1e6 - Double(truth.totalHitchNs)) < 10)
        #expect(analysis.recorded.hitchCount == truth.appleHitchCount)
        #expect(Set(analysis.recordedRates.map(\.rateHz)) == Set(truth.periodsNs.map { (1e10 / Double($0)).rounded() / 10 }))
        let agreement = try #require(analysis.platformAgreement)
        #expect(agreement.bothJanky == truth.appleHitchCount && agreement.agreementRatio == 1)
        #expect(analysis.offenders.first?.name == "FeedRow.body.getter")
    }

    struct XctraceDetailTruth: Decodable {
        struct Kind: Decodable { var swap: UInt64; var kind: String }
        struct Edge: Decodable { var source: String; var target: String; var count: Int }
        struct GPULate: Decodable { var swap: UInt64; var renderNs: Int64 }
        struct Detail: Decodable {
            var hitchKinds: [Kind]; var bodies: [String: Int]; var edges: [Edge]; var groups: Int
            var renders: Int; var gpus: Int; var frameWaits: Int; var gpuLate: [GPULate]; var gpuLateNs: Int64
        }
        struct DisplayInfo: Decodable { var frames: Int; var periodNs: Int64 }
        var hitchTimeRatioMsPerS: Double
        var detail: Detail
        var displayInfo: DisplayInfo
    }

    /// The same export with `hitches-updates`, `hitches-renders`, `hitches-gpu`, `hitches-framewait`
    /// and the SwiftUI tables (xctrace-detail.xml): each Apple hitch is a commit hitch where the app's
    /// commit of its swap ended after the frame's deadline and a render hitch where only the render
    /// server's render or the GPU's work ran late (another process's late commit of the same swap id
    /// is not the app's); a frame late on the GPU renders until its GPU work ends, which sits in the
    /// `gpu` stage's time in hitching frames; renders, GPU work and frame waits are stages; body
    /// updates are counted by view (representable updates are not bodies), causes of both cause
    /// tables become invalidation edges, each edge once, and update groups stages; the hitch time
    /// ratio is unchanged.
    @Test func xctraceSubTablesSplitCommitFromRenderAndSwiftUIBecomesViewUpdates() throws {
        let truth = try JSONDecoder().decode(XctraceDetailTruth.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent("xctrace.truth.json")))
        let inputs = ["xctrace-detail.xml", "xctrace-hitches.xml", "xctrace-display.xml"].map { Self.fixtures.appendingPathComponent($0).path }
        let (_, analysis) = try AnalyzedImport.run(.xctrace, inputs: inputs)
        #expect(abs(analysis.recorded.hitchTimeRatioMsPerS - truth.hitchTimeRatioMsPerS) < 1e-6)
        let ours = Dictionary(analysis.frames.map { ($0.frameID, $0) }, uniquingKeysWith: { first, _ in first })
        for planted in truth.detail.hitchKinds {
            let frame = try #require(ours[planted.swap + 1], "swap \(planted.swap)")
            #expect(frame.hitchMs > 0 && frame.kind.rawValue == planted.kind, "swap \(planted.swap): \(frame.kind)")
        }
        for (view, count) in truth.detail.bodies {
            #expect(analysis.views.first { $0.type == view }?.bodyEvaluations == count, "\(view)")
        }
        #expect(!analysis.views.contains { $0.type == "MapView" })
        for edge in truth.detail.edges {
            #expect(analysis.invalidations.contains { $0.source == edge.source && $0.target == edge.target && $0.count == edge.count },
                    "\(edge.source) -> \(edge.target)")
        }
        #expect(analysis.stages.contains { $0.name == "Transaction" && $0.count == truth.detail.groups })
        let stages = Dictionary(analysis.stages.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(stages["render"]?.count == truth.detail.renders)
        #expect(stages["gpu"]?.count == truth.detail.gpus)
        #expect(stages["frame wait"]?.count == truth.detail.frameWaits)
        #expect((stages["gpu"]?.inHitchingFramesMs ?? 0) >= Double(truth.detail.gpuLateNs) / 1e6 - 1e-6)
        for late in truth.detail.gpuLate {
            let frame = try #require(ours[late.swap + 1], "swap \(late.swap)")
            #expect(abs(frame.renderMs - Double(late.renderNs) / 1e6) < 1e-6, "swap \(late.swap): \(frame.renderMs) ms")
        }
    }

    /// Real exports of one Animation Hitches trace (Tests/Fixtures/import/README.md): twelve surface
    /// swaps one vsync apart, vsyncs written as 1 ns instants every 16.67 ms, and the render server's
    /// twelve renders. Checked against what the files say: twelve frames at 60 Hz (the step between
    /// the vsyncs), none late, and a `render` stage per render row with the rows' durations.
    @Test func xctraceRealExportOfOneTraceImports() throws {
        let inputs = ["xctrace-real-display-surface-swap.xml", "xctrace-real-display-vsyncs-interval.xml", "xctrace-real-hitches-renders.xml"]
            .map { Self.fixtures.appendingPathComponent($0).path }
        let (summary, analysis) = try AnalyzedImport.run(.xctrace, inputs: inputs)
        #expect(summary.frames == 12)
        #expect(analysis.recordedRates.map(\.rateHz) == [60])
        #expect(analysis.frames.count == 12 && analysis.frames.allSatisfy { $0.hitchMs == 0 })
        // hitches-renders' duration column, row by row.
        let renderDurationsNs: [Int64] = [5_967_958, 6_088_958, 5_717_083, 5_346_250, 6_449_291, 6_092_458,
                                          4_982_458, 4_682_833, 6_500_166, 7_150_000, 5_849_083, 5_139_250]
        let render = try #require(analysis.stages.first { $0.name == "render" })
        #expect(render.count == renderDurationsNs.count)
        #expect(abs(render.totalMs - Double(renderDurationsNs.reduce(0, +)) / 1e6) < 1e-6)
        #expect(abs(render.maxMs - 7.15) < 1e-6)
    }

    /// Without vsync intervals, `device-display-info` gives the period of the display the presents
    /// were on (60 Hz), not the main display's (120 Hz) nor the presents' spacing (a 30 fps app).
    @Test func xctraceDeviceDisplayInfoGivesThePeriodWithoutVsyncs() throws {
        let truth = try JSONDecoder().decode(XctraceDetailTruth.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent("xctrace.truth.json")))
        let (summary, analysis) = try Self.importAndAnalyze(.xctrace, "xctrace-display-info.xml")
        #expect(summary.frames == truth.displayInfo.frames)
        #expect(analysis.recordedRates.map(\.rateHz) == [(1e10 / Double(truth.displayInfo.periodNs)).rounded() / 10])
    }
}
