// The tuned feed's background work (search, thumbnail decode, freeing old results) runs on
// dedicated serial threads that never take the CPU from the main thread in the middle of a frame.
// - libdispatch on Linux runs userInitiated work at nice -2 (when permitted), above the main
//   thread's nice 0 (the main thread is not user-interactive as on Apple platforms), so a woken
//   worker would preempt the frame.
// - At equal priority, a worker woken onto the main thread's CPU mid-frame could still take that
//   CPU for a scheduler time slice (1-2 ms) before the frame went on.
// So the threads run at nice 19, the lowest ordinary priority (about a utility QoS): a nice-19
// thread's weight is 1/68 of the main thread's, so under the kernel's EEVDF scheduler a woken
// worker's virtual deadline lies far behind the main thread's and it does not preempt a frame,
// while a waking main thread takes the CPU back at once. Not SCHED_IDLE, as the LLM workload's
// inference is: against other processes' busy threads, SCHED_IDLE's weight of 3 can leave the
// search without CPU for a whole session, where nice 19's weight of 15 finishes it. And work queued
// from the main thread wakes its worker only once the main actor's current work, the frame, is done.
// docs/WORKLOADS.md, "Background work", has the measurements behind this.
import Dispatch
import Foundation
import HitchTrace
import Synchronization

/// A serial queue of jobs on one dedicated background thread (see the file comment). The thread
/// ends once the worker is released and its queued jobs have run.
final class BackgroundWorker: Sendable {
    private let jobs = JobQueue()

    /// Starts the thread; `name` is its name in the trace and in `ps`.
    init(name: String) {
        let jobs = self.jobs
        let thread = Thread {
            Trace.setCurrentThreadName(name)
            setpriority(__priority_which_t(0), 0, 19)   // PRIO_PROCESS of the calling thread
            jobs.run()
        }
        thread.name = name
        thread.start()
    }

    deinit { jobs.close() }

    /// Runs `job` on the worker's thread after the jobs queued before it. Called on the main
    /// thread, it wakes the worker only after the main actor's current work (the frame) is done.
    func async(_ job: @escaping @Sendable () -> Void) {
        jobs.push(job, wakeWhenMainThreadIsDone: Thread.isMainThread)
    }
}

/// The worker's jobs, shared with its thread (which must not keep the worker itself alive).
private final class JobQueue: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var closed = false
        /// A wake-up is already queued on the main actor.
        var wakeQueued = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    func push(_ job: @escaping @Sendable () -> Void, wakeWhenMainThreadIsDone: Bool) {
        let queueWake = state.withLock { state in
            state.jobs.append(job)
            guard wakeWhenMainThreadIsDone, !state.wakeQueued else { return false }
            state.wakeQueued = true
            return true
        }
        if !wakeWhenMainThreadIsDone {
            wake.signal()
        } else if queueWake {
            // A main-actor job runs after the main queue's current item, the frame in progress.
            Task { @MainActor [self] in
                state.withLock { $0.wakeQueued = false }
                wake.signal()
            }
        }
    }

    func close() {
        state.withLock { $0.closed = true }
        wake.signal()
    }

    /// The thread's loop: every queued job in order, then sleep until more come or the queue closes.
    func run() {
        var batch: [@Sendable () -> Void] = []
        while true {
            let closed = state.withLock { state in
                swap(&batch, &state.jobs)
                return state.closed
            }
            for job in batch { job() }
            if batch.isEmpty {
                if closed { return }
                wake.wait()
            }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
