import Foundation
import Testing
import HitchReader
@testable import HitchTrace

/// Intervals whose bodies suspend: they resume on other threads of a busy cooperative pool, and
/// their self times are per task (duration minus the async intervals awaited inside them).
struct AsyncIntervalTests {
    /// Busy-waits `milliseconds` of wall time (clock based: preemption does not stretch it).
    static func nowNs() -> Int64 { Trace.now().nanoseconds }

    static func spin(milliseconds: Int) {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while ContinuousClock.now < deadline {}
    }

    /// Runs in a child process (an exit test): the scenario holds the process's one recording
    /// while its tasks are suspended, and other suites' tests blocked waiting for that recording
    /// would occupy the cooperative pool it needs to resume. The child exits 0 unless it crashes and
    /// prints what did not hold: a failed exit test returns no output, and this way the failures
    /// are in the parent's expectation.
    @Test func selfTimeAcrossAwaitOnABusyPoolIsPerTask() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]) {
            let failures = try await AsyncIntervalTests.scenario()
            for failure in failures { print("FAILED: \(failure)") }
            exit(0)
        }
        let output = result.map { String(decoding: $0.standardOutputContent, as: UTF8.self) } ?? ""
        let failures = output.split(separator: "\n").filter { $0.hasPrefix("FAILED: ") }
        #expect(result != nil && failures.isEmpty, "\(failures.joined(separator: "; "))")
        // Everything the child said, stderr too.
        print(output, terminator: "")
        if let errors = result?.standardErrorContent, !errors.isEmpty { print(String(decoding: errors, as: UTF8.self)) }
    }

    /// Records the planted intervals and returns what did not hold (empty: all held).
    static func scenario() async throws -> [String] {
        var failures: [String] = []
        func check(_ condition: Bool, _ message: @autoclosure () -> String) { if !condition { failures.append(message()) } }
        let path = temporaryTracePath("async")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path, configuration: .init())
        let stopNoise = AtomicFlag()
        // Noise: tasks that keep every pool thread busy in 100 µs slices, so a resumed task waits
        // its turn and usually continues on another thread.
        let noise = (0..<4).map { _ in
            Task.detached {
                while !stopNoise.isSet {
                    Self.spin(milliseconds: 0)
                    let deadline = ContinuousClock.now + .microseconds(100)
                    while ContinuousClock.now < deadline {}
                    await Task.yield()
                }
            }
        }
        // Planted, one task at a time (so it waits only behind the noise's 100 µs slices): outer
        // does 2 x 100 ms itself around an awaited inner interval that does 2 x 100 ms around a
        // suspension. The planted durations are what the task itself measured around its own work
        // (on a loaded machine a thread is off the CPU for milliseconds at a time, so 100 ms of
        // spinning is 100 ms of wall time but the code between spins can take longer).
        var crossed = 0
        var planted: [(outerNs: Int64, innerNs: Int64)] = []
        for _ in 0..<3 {
            let (threads, outerNs, innerNs) = await Task.detached {
                var threads: Set<Int32> = []
                var outerNs: Int64 = 0, innerNs: Int64 = 0
                await Trace.interval("outer") {
                    var mark = Self.nowNs()
                    Self.spin(milliseconds: 100)
                    threads.insert(Trace.currentThreadID)
                    outerNs += Self.nowNs() - mark
                    await Trace.interval("inner") {
                        let innerStart = Self.nowNs()
                        Self.spin(milliseconds: 100)
                        try? await Task.sleep(for: .milliseconds(1))
                        threads.insert(Trace.currentThreadID)
                        Self.spin(milliseconds: 100)
                        innerNs = Self.nowNs() - innerStart
                    }
                    mark = Self.nowNs()
                    threads.insert(Trace.currentThreadID)
                    Self.spin(milliseconds: 100)
                    outerNs += Self.nowNs() - mark
                }
                return (threads, outerNs, innerNs)
            }.value
            if threads.count > 1 { crossed += 1 }
            planted.append((outerNs, innerNs))
        }
        print("async intervals: \(crossed) of 3 tasks changed threads; load \((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?")")
        stopNoise.set()
        for task in noise { await task.value }
        try recorder.stop()

        var reader = try TraceReader(path: path)
        var ends: [String: [AsyncIntervalEnd]] = [:]
        var begins = 0
        while let event = try reader.next() {
            switch event.payload {
            case .asyncIntervalBegin: begins += 1
            case .asyncIntervalEnd(let end): ends[reader.string(end.name), default: []].append(end)
            default: break
            }
        }
        check(begins == 6, "\(begins) async begins, not 6")
        check(ends["outer"]?.count == 3 && ends["inner"]?.count == 3, "ends: \(ends.mapValues(\.count))")
        // Self time per task: the outer's excludes the inner's (200 ms or more), wherever each ran.
        // Each is at least what the task measured around its own work (within the clock's
        // rounding), and more only by the few
        // statements outside those measurements, which a preemption can stretch by milliseconds on
        // a loaded machine: 50 ms is far more than that and far less than the inner's time.
        func checkSelf(_ name: String, _ selfNs: Int64, planted: Int64) {
            check(selfNs + 1_000 >= planted && selfNs - planted < 50_000_000,   // 1 µs: ticks to nanoseconds rounds
                  "\(name) self \(Double(selfNs) / 1e6) ms, planted \(Double(planted) / 1e6) ms")
        }
        for (end, plant) in zip(ends["outer"] ?? [], planted) {
            checkSelf("outer", end.selfNs, planted: plant.outerNs)
            check(plant.outerNs >= 200_000_000, "outer planted \(plant.outerNs) ns")
        }
        for (end, plant) in zip(ends["inner"] ?? [], planted) {
            checkSelf("inner", end.selfNs, planted: plant.innerNs)
            check(end.selfNs == end.durationNs, "inner self \(end.selfNs) != duration \(end.durationNs)")
        }
        return failures
    }
}

/// A set-once flag shared with detached tasks.
final class AtomicFlag: Sendable {
    private let value = Locked(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
