import Foundation
import Testing
import HitchReader
import HitchTrace
@testable import HitchAnalysis

/// `FrameMarker` (docs/FRAMES.md "Your own loop") on the real clock: a 60 Hz loop that waits for
/// each vsync and marks it, with one planted stall, recorded, read back and analyzed.
@Suite(.serialized) struct FrameMarkerTests {
    static let periodNs: Int64 = 16_666_667
    static let frames = 40
    static let stalledFrame = 20
    /// Far from any frame id another test may record while this one does.
    static let firstFrameID: UInt64 = 7_000_000_000

    private struct Marked {
        var began: (timestampNs: Int64, event: FrameBegan)?
        var committedNs: Int64?, renderEndedNs: Int64?, presentedNs: Int64?
    }

    /// Sleeps until `deadlineNs` on the trace clock (a display link's wait for the vsync).
    private static func sleep(untilNs deadlineNs: Int64) {
        while true {
            let remaining = deadlineNs - Trace.now().nanoseconds
            if remaining <= 0 { return }
            var request = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
            nanosleep(&request, nil)
        }
    }

    /// The loop on its own thread with the main role: wait for the next vsync of a fixed grid, mark.
    /// Before the stalled frame's wait it stalls 2.5 periods, so that frame reaches the screen at
    /// the third vsync after it began: a commit hitch of two periods.
    private static func runLoop() {
        Trace.setThreadRole(.main)
        var marker = FrameMarker(refreshRateHz: 60, firstFrameID: firstFrameID)
        let startNs = Trace.now().nanoseconds
        marker.mark()   // starts the clock: no frame
        var vsyncIndex: Int64 = 0
        for frame in 0..<frames {
            if frame == stalledFrame { sleep(untilNs: Trace.now().nanoseconds + periodNs * 5 / 2) }
            // The next vsync after now (a late loop waits for the next one, as a swap does).
            vsyncIndex = max(vsyncIndex + 1, (Trace.now().nanoseconds - startNs) / periodNs + 1)
            sleep(untilNs: startNs + vsyncIndex * periodNs)
            marker.mark()
        }
        #expect(marker.nextFrameID == firstFrameID + UInt64(frames))
    }

    @Test func framesMarkedOnTheRealClockReadBackInOrderAndThePlantedStallIsAHitch() async {
        await #expect(processExitsWith: .success) { try Self.framesMarkedOnTheRealClockReadBackInOrderAndThePlantedStallIsAHitchRecorded() }
    }

    static func framesMarkedOnTheRealClockReadBackInOrderAndThePlantedStallIsAHitchRecorded() throws {
        let path = NSTemporaryDirectory() + "hitch-frame-marker-\(getpid()).fxt"
        defer { unlink(path) }
        // Suites record one at a time; wait for another suite's recording to stop.
        let recorder = try TraceRecorder.start(path: path, configuration: .init(waitForOtherRecordingSeconds: 300))
        let done = DispatchSemaphore(value: 0)
        let loop = Thread { Self.runLoop(); done.signal() }
        loop.start()
        done.wait()
        try recorder.stop()

        // Read back: one thread, four events per frame, the ids in sequence.
        var reader = try TraceReader(path: path)
        var marked: [UInt64: Marked] = [:]
        var threads = Set<ThreadID>()
        func mine(_ id: UInt64) -> Bool { id >= Self.firstFrameID && id < Self.firstFrameID + UInt64(Self.frames) }
        while let event = try reader.next() {
            switch event.payload {
            case .frameBegan(let began) where mine(began.frameID):
                marked[began.frameID, default: Marked()].began = (event.timestampNs, began); threads.insert(event.thread)
            case .frameCommitted(let id) where mine(id): marked[id, default: Marked()].committedNs = event.timestampNs
            case .frameRenderEnded(let id) where mine(id): marked[id, default: Marked()].renderEndedNs = event.timestampNs
            case .framePresented(let id) where mine(id): marked[id, default: Marked()].presentedNs = event.timestampNs
            default: break
            }
        }
        #expect(marked.count == Self.frames)
        #expect(threads.count == 1)
        #expect(threads.first.flatMap { reader.threadRole($0) } == "main")
        var previousPresentNs: Int64?
        for offset in 0..<Self.frames {
            let id = Self.firstFrameID + UInt64(offset)
            let frame = try #require(marked[id], "frame \(id)")
            let (beganNs, began) = try #require(frame.began, "frame \(id) began")
            let committed = try #require(frame.committedNs), rendered = try #require(frame.renderEndedNs)
            let presented = try #require(frame.presentedNs)
            // Begun at the previous mark, committed, rendered and presented at this one.
            #expect(beganNs < committed && committed == rendered && rendered == presented, "frame \(id)")
            if let previousPresentNs { #expect(beganNs == previousPresentNs, "frame \(id) begins where the last one ended") }
            previousPresentNs = presented
            // On the model's terms: target = the begin, vsync one period before it.
            #expect(began.periodNs == Self.periodNs)
            #expect(abs(began.targetNs - beganNs) <= 1, "frame \(id)")
            #expect(abs(began.targetNs - began.vsyncNs - Self.periodNs) <= 1, "frame \(id)")
        }
        // Every mark waits for a later vsync of the grid (a late wake-up only shortens the next
        // frame), and the stall skips two: the frames span at least frames + 2 periods.
        let first = try #require(marked[Self.firstFrameID]?.began?.timestampNs)
        #expect(try #require(previousPresentNs) - first >= Int64(Self.frames + 2) * Self.periodNs - 1_000_000)

        // The analyzer, against the model (docs/METRICS.md) on the recorded times: a frame is due
        // on screen one period after its target (its begin); its present is taken as the vsync of
        // its grid within a quarter period, else the next one; lateness is the difference. The
        // hitch is the lateness, or one period less after a frame one period late (triple buffering).
        let analysis = try Analyzer.analyze(paths: [path], options: AnalyzerOptions(refreshRatesHz: [60]))
        let judged = analysis.frames.filter { mine($0.frameID) }
        #expect(judged.count == Self.frames)
        let p = Self.periodNs
        func latenessNs(_ id: UInt64) throws -> Int64 {
            let frame = try #require(marked[id])
            let sinceTarget = try #require(frame.presentedNs) - (try #require(frame.began)).event.targetNs
            let nearest = (sinceTarget + p / 2) / p, after = (sinceTarget + p - 1) / p
            let periods = abs(sinceTarget - nearest * p) <= p / 4 ? nearest : after
            return (periods - 1) * p
        }
        func ms(_ ns: Int64) -> Double { Double(ns) / 1e6 }
        for frame in judged {
            let lateness = try latenessNs(frame.frameID)
            if lateness <= 0 {
                #expect(frame.hitchMs == 0, "frame \(frame.frameID)")
            } else {
                #expect(abs(frame.hitchMs - ms(lateness)) < 1e-5 || abs(frame.hitchMs - ms(lateness - p)) < 1e-5,
                        "frame \(frame.frameID): hitch \(frame.hitchMs) ms, lateness \(ms(lateness)) ms")
            }
        }
        // The stall: 2.5 periods then the wait for the next vsync, so at least two periods late
        // (three or more if the machine woke the loop late), a hitch of the main thread's own.
        let stalledID = Self.firstFrameID + UInt64(Self.stalledFrame)
        let stalled = try #require(judged.first { $0.frameID == stalledID })
        #expect(try latenessNs(stalledID) >= 2 * p)
        #expect(stalled.hitchMs >= ms(p) - 1e-5)
        #expect(stalled.kind == .commit)
    }
}
