// The tuned feed's background work (search, thumbnail decode, freeing old results) runs on
// dedicated serial threads that never take the CPU from the main thread in the middle of a frame.
//
// Measured with perf sched on the tuned feed (2-core VM, load about 15): its slow frames were
// ~0.3 ms on the main thread's CPU clock and 2-20 ms runnable but not running, each right after
// the main thread had woken a pipeline worker.
// - libdispatch on Linux runs userInitiated work at nice -2 (when permitted), above the main
//   thread's nice 0 (the main thread is not user-interactive as on Apple platforms), so the
//   woken worker preempted the frame.
// - At equal or lower priority, a worker woken onto the main thread's CPU mid-frame could still
//   take that CPU for a scheduler time slice (1-2 ms) before the frame went on.
// So the threads run under SCHED_IDLE (`hitch_thread_make_background`, as the LLM workload's
// inference does), Linux's counterpart of background QoS: they run when no normal thread of the
// process wants the CPU, and a waking main thread takes the CPU back at once. (Under autogroup or a per-process cgroup they compete with other processes as the process
// does; the main thread is idle most of each frame, so they still run.) And work queued from the
// main thread wakes its worker only once the main actor's current work, the frame, is done.
import CHitchSupport
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
            _ = hitch_thread_make_background()
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
