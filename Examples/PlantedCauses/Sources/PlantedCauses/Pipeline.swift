// The frame pipeline: a display link on the main thread, a render thread, a display that shows one
// frame per vsync, and a bounded number of frames in flight between them.
//
// The shapes follow how apps are built, not how Hitch judges them:
// - Apple's frame lifetime (event, commit, render, display): the main thread handles the vsync and
//   commits; rendering starts at the first vsync at or after the commit; the frame is shown at the
//   first vsync after its render ends, and never before the frame ahead of it.
// - Metal's frames in flight: the main thread takes a slot before it encodes a frame (waiting on a
//   semaphore) and the render thread gives it back when the frame's render is done. One slot is a
//   swap chain of one (each commit waits for the previous render); two slots are triple buffering
//   (one frame on screen, one rendering, one being built), where a frame shown late keeps the ones
//   after it a period late until the queue drains (Android's FrameTimeline calls it buffer stuffing).
// - A render thread that shares the main thread's CPU (a phone with few cores, or a pinned render
//   thread): both are pinned to one CPU, so each takes CPU time from the other.
import CPlanted
import Foundation
import HitchTrace
import Synchronization

enum Shape: String, CaseIterable, Sendable {
    case swapChainOfOne = "swap-chain-of-one"
    case swapChainOfTwo = "swap-chain-of-two"
    case sharedCPU = "shared-cpu"

    /// Frames the main thread may have committed whose render has not ended.
    var framesInFlight: Int { self == .swapChainOfOne ? 1 : 2 }
    var mainCPU: Int32 { 0 }
    var renderCPU: Int32 { self == .sharedCPU ? 0 : 1 }
}

/// The display's vsync grid on the trace clock: what a display link or a swap chain's present would
/// tell the app.
struct Display: Sendable {
    let originNs: Int64
    let periodNs: Int64

    func firstVsync(atOrAfter ns: Int64) -> Int64 {
        let periods = (ns - originNs + periodNs - 1) / periodNs
        return originNs + max(0, periods) * periodNs
    }

    func firstVsync(after ns: Int64) -> Int64 { firstVsync(atOrAfter: ns + 1) }

    /// A timed wait for `ns`: wakes a little after it, as every display callback does.
    func sleep(until ns: Int64) {
        while true {
            let remaining = ns - Trace.now().nanoseconds
            if remaining <= 0 { return }
            var request = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
            _ = nanosleep(&request, nil)
        }
    }
}

/// A committed frame handed to the render thread.
struct Commit: Sendable {
    let frameID: UInt64
    let vsyncNs: Int64
    let committedNs: Int64
}

/// Committed frames waiting for the render thread, in order.
final class CommitQueue: Sendable {
    private let frames = Mutex<[Commit]>([])
    private let available = DispatchSemaphore(value: 0)

    func push(_ commit: Commit) {
        frames.withLock { $0.append(commit) }
        available.signal()
    }

    func pop() -> Commit {
        available.wait()
        return frames.withLock { $0.removeFirst() }
    }
}

/// What happened to each frame on the display, as the app saw it.
final class PresentLog: Sendable {
    private let latenessPeriods = Mutex<[UInt64: Int]>([:])

    func record(frameID: UInt64, periods: Int) { latenessPeriods.withLock { $0[frameID] = periods } }

    /// Each frame's present vsync minus its expected present (its vsync + two periods), in periods.
    func periodsLate(frameCount: UInt64) -> [Int] {
        latenessPeriods.withLock { log in (0..<frameCount).map { log[$0] ?? -1 } }
    }
}

/// A clock's time in ns.
private func clockNs(_ clock: clockid_t) -> Int64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// Time on the calling thread's CPU clock.
func threadCPUNs() -> Int64 { clockNs(CLOCK_THREAD_CPUTIME_ID) }

/// Work that needs `milliseconds` of the calling thread's CPU time, however long the scheduler
/// takes to give it that much.
func work(cpuMs milliseconds: Double) {
    let end = threadCPUNs() + Int64(milliseconds * 1e6)
    busy { threadCPUNs() >= end }
}

/// CLOCK_MONOTONIC in ns: usable at once in any process (the trace clock calibrates itself for
/// about 20 ms on its first use in a process).
func monotonicNs() -> Int64 { clockNs(CLOCK_MONOTONIC) }

/// Spins for `milliseconds` of wall time (a thread that takes a CPU for that long).
func spin(wallMs milliseconds: Double) {
    let end = monotonicNs() + Int64(milliseconds * 1e6)
    busy { monotonicNs() >= end }
}

/// Arithmetic on the CPU until `done` says to stop.
private func busy(until done: () -> Bool) {
    var counter: UInt64 = 0
    while !done() {
        for step in 0..<200 { counter = counter &* 6364136223846793005 &+ UInt64(step) }
    }
    blackHole(counter)
}

@inline(never) func blackHole(_ value: UInt64) {
    if value == 42 { print("", terminator: "") }
}

func pinCurrentThread(to cpu: Int32, _ what: String) throws {
    let status = planted_pin_current_thread(cpu)
    if status != 0 { throw PlantError("cannot pin \(what) to CPU \(cpu): \(String(cString: strerror(status)))") }
}

func setCurrentThreadNice(_ nice: Int32, _ what: String) throws {
    let status = planted_set_current_thread_nice(nice)
    if status != 0 {
        throw PlantError("cannot set \(what) to nice \(nice): \(String(cString: strerror(status))) (a negative nice needs root or CAP_SYS_NICE)")
    }
}

struct PlantError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
