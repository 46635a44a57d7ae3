import Dispatch
import Foundation
import Testing
import HitchReader
@testable import HitchTrace

/// A thread that only names itself during a recording (`Trace.setCurrentThreadName`, no events)
/// has its context switches recorded under that name, so the analysis can name it when it takes a
/// frame thread's CPU (docs/FORMAT.md "Thread states", docs/METRICS.md "Who took the CPU").
@Suite(.serialized) struct ThreadNameSwitchTests {
    @Test func aThreadThatOnlyNamesItselfHasItsSwitchesRecorded() async {
        await #expect(processExitsWith: .success) { try Self.aThreadThatOnlyNamesItselfHasItsSwitchesRecordedRecorded() }
    }

    static func aThreadThatOnlyNamesItselfHasItsSwitchesRecordedRecorded() throws {
        let path = temporaryTracePath("named-only")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path)
        let done = DispatchSemaphore(value: 0), stopped = DispatchSemaphore(value: 0)
        Thread {
            Trace.setCurrentThreadName("named-only")
            for _ in 0..<5 { usleep(2_000) }   // sleeps: switches out and back in
            done.signal()
            stopped.wait()   // alive until the recording ends, as an app's worker is
        }.start()
        done.wait()
        Trace.instant("main thread")
        _ = try recorder.stop()
        stopped.signal()
        var reader = try TraceReader(path: path)
        var events: [TraceEvent] = []
        while let event = try reader.next() { events.append(event) }
        guard reader.metadata["schedSource"] == "perf-context-switch" else { return }   // perf refused here: no switch records at all
        let switches = events.filter { reader.threadName($0.thread) == "named-only" && $0.payload.kindName == "schedSwitch" }
        #expect(switches.count >= 5, "switch records of the thread that only named itself: \(switches.count)")
    }
}
