#if canImport(Glibc)
import Glibc
#endif
import CHitchSupport
import Foundation
import Synchronization
import Testing
@testable import HitchWorkloads

/// The floor under background inference: a starved thread is raised, an idle one is left alone.
@Suite struct BackgroundThreadsTests {
    /// SCHED_IDLE, which Glibc's module leaves out (it needs _GNU_SOURCE).
    static let schedIdle: Int32 = 5
    static var schedstatsKept: Bool { hitch_thread_run_delay_ns(hitch_current_tid()) >= 0 }

    /// A thread that `threads` adopted: busy until told to stop, or blocked on a semaphore until then.
    private final class AdoptedThread: Sendable {
        let tid = Mutex<Int32>(0)
        let stop = Atomic<Bool>(false)
        let wake = DispatchSemaphore(value: 0)
        let exited = DispatchSemaphore(value: 0)
        init(_ threads: BackgroundThreads, busy: Bool) {
            let thread = Thread { [self] in
                threads.adoptCurrentThread()
                tid.withLock { $0 = hitch_current_tid() }
                var x: UInt64 = 1
                if busy {
                    while !stop.load(ordering: .relaxed) { for _ in 0..<10_000 { x = x &* 6364136223846793005 &+ 1 } }
                } else {
                    wake.wait()
                }
                if x == 42 { print("") }   // keeps the arithmetic
                threads.releaseCurrentThread()
                exited.signal()
            }
            thread.start()
        }
        func waitForID() -> Int32 {
            while tid.withLock({ $0 }) == 0 { usleep(1_000) }
            return tid.withLock { $0 }
        }
        func finish() { stop.store(true, ordering: .relaxed); wake.signal(); exited.wait() }
    }

    /// Ordinary busy threads, two per core, until `end`: the other processes of a busy machine.
    private final class Contention: Sendable {
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        init() {
            for _ in 0..<(2 * ProcessInfo.processInfo.activeProcessorCount) {
                group.enter()
                Thread { [self] in
                    var x: UInt64 = 1
                    while !stop.load(ordering: .relaxed) { for _ in 0..<10_000 { x = x &* 2862933555777941757 &+ 3 } }
                    if x == 42 { print("") }
                    group.leave()
                }.start()
            }
        }
        func end() { stop.store(true, ordering: .relaxed); group.wait() }
    }

    /// Polls `checkStarvation` every 20 ms for at most `seconds`; returns its sentence if it gave one.
    private static func poll(_ threads: BackgroundThreads, seconds: Double) -> String? {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if let change = threads.checkStarvation(nowNs: Int64(DispatchTime.now().uptimeNanoseconds)) { return change }
            usleep(20_000)
        }
        return nil
    }

    @Test(.enabled(if: schedstatsKept, "this kernel keeps no schedstats")) func aStarvedBackgroundThreadIsRaisedToNormalPriorityAndLaterThreadsStayThere() throws {
        let threads = BackgroundThreads()
        let starved = AdoptedThread(threads, busy: true)
        let tid = starved.waitForID()
        #expect(sched_getscheduler(tid) == Self.schedIdle)
        let contention = Contention()
        let change = Self.poll(threads, seconds: 30)
        let policyAfter = sched_getscheduler(tid)
        contention.end()
        starved.finish()
        let sentence = try #require(change, "a SCHED_IDLE thread behind two busy threads per core was never judged starved")
        #expect(threads.priorityChange == sentence)
        #expect(sentence.contains("for a CPU"))
        if sentence.hasPrefix("raised") {
            #expect(policyAfter == SCHED_OTHER)
            // A thread that joins after the raise is not made background.
            let late = AdoptedThread(threads, busy: false)
            #expect(sched_getscheduler(late.waitForID()) == SCHED_OTHER)
            late.finish()
        } else {
            #expect(sentence.contains("refused"))
        }
        // Judged once: later calls say nothing more.
        #expect(threads.checkStarvation(nowNs: Int64(DispatchTime.now().uptimeNanoseconds) + 10_000_000_000) == nil)
    }

    @Test(.enabled(if: schedstatsKept, "this kernel keeps no schedstats")) func aBackgroundThreadThatBlocksIsNotStarvedHoweverBusyTheMachine() {
        let threads = BackgroundThreads()
        let blocked = AdoptedThread(threads, busy: false)
        #expect(sched_getscheduler(blocked.waitForID()) == Self.schedIdle)
        // Blocked on a semaphore, it waits for no CPU, whatever else runs (the other suites do).
        let contention = Contention()
        let change = Self.poll(threads, seconds: 2.5)
        contention.end()
        blocked.finish()
        #expect(change == nil)
        #expect(threads.priorityChange == nil)
    }
}
