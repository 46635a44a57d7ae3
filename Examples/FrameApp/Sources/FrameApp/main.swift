// A 60 Hz app shaped like a display-link app, recording its frames with HitchTrace.
//
// The main thread waits for each vsync, does the frame's work and commits it; a render thread
// renders each committed frame at the next vsync and presents it at the one after. Every time
// is read from the clock after a real wait, jitter included. Frames 60 and 120 stall the main
// thread for 40 ms and 25 ms: `hitch analyze` reports exactly those two hitches, of two periods
// (33.3 ms) and one period (16.7 ms).
//
//   swift run -c release FrameApp frameapp.fxt && hitch analyze frameapp.fxt --refresh 60
import Foundation
import HitchTrace
import Synchronization

let refreshRateHz = 60.0
let periodNs = Int64((1e9 / refreshRateHz).rounded())
let frameCount: UInt64 = 180
/// Main-thread stalls planted in some frames (frame -> extra milliseconds of work).
let plantedStallsMs: [UInt64: Int] = [60: 40, 120: 25]

/// The display's vsync grid on the trace clock (a stand-in for CADisplayLink or a swap chain).
struct Display: Sendable {
    let originNs = Trace.now().nanoseconds

    /// The first vsync at or after `ns`.
    func vsync(atOrAfter ns: Int64) -> Int64 {
        let periods = (ns - originNs + periodNs - 1) / periodNs
        return originNs + max(0, periods) * periodNs
    }

    /// Sleeps until `ns` (no-op if it has passed) and returns the clock read on waking: a little
    /// after `ns`, as every real display callback is.
    func sleep(until ns: Int64) -> TraceTimestamp {
        let remaining = ns - Trace.now().nanoseconds
        if remaining > 0 { usleep(UInt32(remaining / 1000)) }
        return Trace.now()
    }
}

/// Busy work for `milliseconds` (stands in for updating views, layout, encoding draw calls).
func work(milliseconds: Int) {
    let end = Trace.now().nanoseconds + Int64(milliseconds) * 1_000_000
    while Trace.now().nanoseconds < end {}
}

/// Committed frames waiting for the render thread.
final class CommitQueue: Sendable {
    private let frames = Mutex<[(id: UInt64, committedNs: Int64)]>([])
    private let available = DispatchSemaphore(value: 0)
    func push(_ id: UInt64, committedNs: Int64) {
        frames.withLock { $0.append((id, committedNs)) }
        available.signal()
    }
    func pop() -> (id: UInt64, committedNs: Int64) {
        available.wait()
        return frames.withLock { $0.removeFirst() }
    }
}

let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "frameapp.fxt"
let recorder = try TraceRecorder.start(path: path)
recorder.setMetadata("workload", "FrameApp")
recorder.setMetadata("refreshRateHz", "60")
Trace.setThreadRole(.main)

let display = Display()
let commits = CommitQueue()
let renderDone = DispatchSemaphore(value: 0)

let renderThread = Thread {
    Trace.setThreadRole(.render)
    for _ in 0..<frameCount {
        let frame = commits.pop()
        // Rendering starts at the first vsync after the commit (at once if that has passed
        // while the previous frame was presented) and is shown at the vsync after that.
        let renderStartNs = display.vsync(atOrAfter: frame.committedNs)
        _ = display.sleep(until: renderStartNs)
        Trace.interval("render", category: .stage) { work(milliseconds: 2) }
        Trace.frameRenderEnded(frameID: frame.id)
        let shown = display.sleep(until: renderStartNs + periodNs)
        Trace.framePresented(frameID: frame.id, at: shown)
    }
    renderDone.signal()
}
renderThread.start()

for frameID in 0..<frameCount {
    // The display link fires: the clock read after the wait is this frame's vsync, and the
    // frame must be committed by the next vsync (its target).
    let vsync = display.sleep(until: display.vsync(atOrAfter: Trace.now().nanoseconds + 1))
    let target = vsync.advanced(byNanoseconds: periodNs)
    Trace.frameBegan(frameID: frameID, vsync: vsync, target: target, periodNs: periodNs)
    Trace.interval("update", category: .stage, with: .int("frame", Int(frameID))) {
        work(milliseconds: 2 + (plantedStallsMs[frameID] ?? 0))
    }
    Trace.frameCommitted(frameID: frameID)
    commits.push(frameID, committedNs: Trace.now().nanoseconds)
}

renderDone.wait()
let summary = try recorder.stop()
print("FrameApp: \(frameCount) frames, \(summary.eventCount) events -> \(path)")
