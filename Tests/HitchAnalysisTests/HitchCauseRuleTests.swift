import HitchTrace
import Testing
@testable import HitchAnalysis

/// The order of `HitchCauseRule` (docs/METRICS.md "Hitch causes", step 4): a frame late for its own
/// sake is app work when its on-CPU work alone misses, blocked when that work with its own sleeps
/// misses, and only then the largest part of its time not running. At 120 Hz (8.333 ms), on frames
/// whose threads' time is planted part by part, readings from the run delay and from switch records alike.
@Suite struct HitchCauseRuleTests {
    typealias Window = ThreadStateTests.Window
    static let ms = ThreadStateTests.ms

    /// The main thread sleeps 7 ms of its 11 (a read from a disk, say) and the render waits 9 ms for
    /// a CPU: runnable is the largest part, but with no wait at all the commit at 11 ms misses the
    /// render's vsync and the frame is late anyway.
    @Test(arguments: [false, true]) func ownSleepsThatMissWithNoWaitForACPUAreBlocked(switchRecords: Bool) throws {
        var t = ThreadStateTests.StateTrace()
        t.perfSwitches = switchRecords
        t.planted(main: Window(running: 4 * Self.ms, asleep: 7 * Self.ms), render: Window(running: 2 * Self.ms, runnable: 9 * Self.ms))
        let a = try t.analyze()
        try ThreadStateTests.expectAll(a, "120", .blocked, count: 3)
        let states = try #require(a.hitchAttributions.first)
        #expect(states.mainThreadStates?.blockedMs == 7)
        #expect(states.renderThreadStates?.runnableMs == 9)
    }

    /// The same waits with sleeps that fit: work and sleep commit at 7 ms, before the render's vsync,
    /// so the render's wait for a CPU made the frame miss, and it is the largest part.
    @Test(arguments: [false, true]) func sleepsThatFitLeaveTheLargestPartNotRunning(switchRecords: Bool) throws {
        var t = ThreadStateTests.StateTrace()
        t.perfSwitches = switchRecords
        t.planted(main: Window(running: Self.ms, asleep: 6 * Self.ms), render: Window(running: 2 * Self.ms, runnable: 9 * Self.ms))
        try ThreadStateTests.expectAll(try t.analyze(), "120", .waitingForCPU, count: 3)
    }

    /// Own work that misses alone is app work, whatever the sleeps and waits beside it.
    @Test func workThatMissesAloneIsAppWork() throws {
        _ = try ThreadStateTests.analyzePlanted(main: Window(running: 12 * Self.ms, runnable: 3 * Self.ms, asleep: 5 * Self.ms), expecting: .appWork)
    }
}
