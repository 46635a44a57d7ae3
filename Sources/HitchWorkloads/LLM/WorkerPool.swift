// A persistent pool for the decode loop's data-parallel ops. Threads are created once; dispatch is a
// few atomic stores (no allocation, no lock on the hot path), so an op costs well under a microsecond
// to hand out.
//
// Each thread owns a contiguous run of an op's chunks and claims them in order, so a thread streams one
// range of a matrix from start to end: the kernels prefetch a few KB ahead, and that prefetch runs on
// into the thread's next chunk instead of into rows another thread reads. A thread whose run is done
// goes on with the others' runs, claiming their next chunks as their owners would: a core stolen by
// another process slows the op instead of stalling it behind a fixed share, and the thread that took
// over still streams that run upward.

#if canImport(Glibc)
import Glibc
#endif
import CHitchSupport
import Foundation
import Synchronization

/// Work split into `chunkCount` independent chunks; `execute` may run on any pool thread.
public protocol ParallelTask: AnyObject {
    func execute(chunk: Int)
}

/// One thread's run of an op's chunks: (generation << 32) | (next << 16) | end. Every thread claims
/// `next`, upward (the owner first, others once their own run is done).
private final class ChunkRun: Sendable {
    let word = Atomic<UInt64>(0)
    /// Keeps two runs' words out of one cache line (each owner claims from its own without contention).
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0)
}

public final class WorkerPool: @unchecked Sendable {
    // @unchecked: `task` is written by the dispatching thread only before publishing a generation
    // (release) and read by workers only after claiming a chunk of that generation (acquire).

    /// Threads that run chunks, the dispatching thread included.
    public let threadCount: Int
    /// The generation of the op last published (workers wait for it to change).
    private let work = Atomic<UInt64>(0)
    /// Thread t's run of the current op (t = 0: the dispatching thread).
    private let runs: [ChunkRun]
    private let completed = Atomic<Int>(0)
    private let shuttingDown = Atomic<Bool>(false)
    /// Unowned: `run` holds the task for as long as any chunk of it can run, and a strong reference
    /// here would have every chunk retain and release it, both threads on one reference count.
    private nonisolated(unsafe) unowned(unsafe) var task: (any ParallelTask)?
    private var generation: UInt64 = 0
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var sleepers = 0
    private let exited = Atomic<Int>(0)
    /// Where the pool's own threads run as background work (the dispatching thread is left alone).
    private let background: BackgroundThreads?

    /// `threadCount` includes the caller of `run`, so `threadCount - 1` threads are created.
    public init(threadCount: Int = max(1, ProcessInfo.processInfo.activeProcessorCount), background: BackgroundThreads? = nil) {
        self.threadCount = max(1, threadCount)
        self.background = background
        runs = (0..<self.threadCount).map { _ in ChunkRun() }
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
        for index in 1..<self.threadCount {
            let thread = Thread { [self] in self.workerLoop(index: index) }
            thread.name = "hitch-llm-worker"
            thread.start()
        }
    }

    deinit {
        // Workers hold `self` strongly while running, so deinit only runs after `shutdown()`.
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Stops the worker threads (call once, when the pool is no longer needed).
    public func shutdown() {
        shuttingDown.store(true, ordering: .releasing)
        pthread_mutex_lock(&mutex)
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
        while exited.load(ordering: .acquiring) < threadCount - 1 { sched_yield() }
    }

    /// Runs `task.execute(chunk:)` for every chunk in 0..<chunkCount across the pool; returns when all are done.
    /// Not reentrant: one dispatching thread at a time.
    public func run(_ task: any ParallelTask, chunkCount: Int) {
        precondition(chunkCount < 1 << 16, "too many chunks")
        if chunkCount == 0 { return }
        if threadCount == 1 || chunkCount == 1 {
            for chunk in 0..<chunkCount { task.execute(chunk: chunk) }
            return
        }
        self.task = task
        completed.store(0, ordering: .relaxed)
        generation &+= 1
        let tag = (generation & 0xFFFF_FFFF) << 32
        for (index, run) in runs.enumerated() {
            let start = index * chunkCount / threadCount, end = (index + 1) * chunkCount / threadCount
            run.word.store(tag | UInt64(start) << 16 | UInt64(end), ordering: .releasing)
        }
        work.store(generation, ordering: .releasing)
        pthread_mutex_lock(&mutex)
        if sleepers > 0 { pthread_cond_broadcast(&condition) }
        pthread_mutex_unlock(&mutex)
        let mine = drain(generation: generation, index: 0)
        if mine < chunkCount {
            var spins = 0
            while completed.load(ordering: .acquiring) + mine < chunkCount {
                spins &+= 1
                if spins > 1 << 14 { sched_yield() }
            }
        }
        self.task = nil
    }

    /// Claims and runs chunks of `generation`, thread `index`'s own run first, then the others', until
    /// none are left; returns how many this thread ran.
    private func drain(generation: UInt64, index: Int) -> Int {
        var ran = 0
        for offset in 0..<threadCount {
            unowned(unsafe) let run = runs[(index + offset) % threadCount]
            var current = run.word.load(ordering: .acquiring)
            while true {
                guard current >> 32 == generation & 0xFFFF_FFFF else { return ran }
                let next = (current >> 16) & 0xFFFF, end = current & 0xFFFF
                guard next < end else { break }
                let claimed = current + (1 << 16)
                let (exchanged, original) = run.word.compareExchange(expected: current, desired: claimed,
                                                                     ordering: .acquiringAndReleasing)
                if !exchanged { current = original; continue }
                task!.execute(chunk: Int(next))
                ran += 1
                current = claimed
            }
        }
        return ran
    }

    private func workerLoop(index: Int) {
        background?.adoptCurrentThread()
        defer { background?.releaseCurrentThread() }
        var seenGeneration: UInt64 = 0
        while !shuttingDown.load(ordering: .acquiring) {
            var spins = 0
            var current = work.load(ordering: .acquiring)
            while current == seenGeneration && !shuttingDown.load(ordering: .relaxed) {
                spins += 1
                if spins < 20_000 {
                    current = work.load(ordering: .acquiring)
                    continue
                }
                pthread_mutex_lock(&mutex)
                sleepers += 1
                while work.load(ordering: .acquiring) == seenGeneration && !shuttingDown.load(ordering: .relaxed) {
                    pthread_cond_wait(&condition, &mutex)
                }
                sleepers -= 1
                pthread_mutex_unlock(&mutex)
                current = work.load(ordering: .acquiring)
            }
            seenGeneration = current
            let ran = drain(generation: seenGeneration, index: index)
            if ran > 0 { completed.add(ran, ordering: .releasing) }
        }
        exited.add(1, ordering: .releasing)
    }
}
