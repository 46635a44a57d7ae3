// A persistent pool for the decode loop's data-parallel ops. Threads are created once; dispatch is an
// atomic counter (no allocation, no lock on the hot path), so an op costs well under a microsecond to
// hand out. Work is split into chunks claimed dynamically, so a core stolen by another process slows the
// op instead of stalling it behind a fixed half.

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

public final class WorkerPool: @unchecked Sendable {
    // @unchecked: `task` is written by the dispatching thread only before publishing a generation
    // (release) and read by workers only after claiming a chunk of that generation (acquire).

    /// Threads that run chunks, the dispatching thread included.
    public let threadCount: Int
    /// (generation << 32) | (nextChunk << 16) | chunkCount.
    private let work = Atomic<UInt64>(0)
    private let completed = Atomic<Int>(0)
    private let shuttingDown = Atomic<Bool>(false)
    private nonisolated(unsafe) var task: (any ParallelTask)?
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
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
        for _ in 1..<self.threadCount {
            let thread = Thread { [self] in self.workerLoop() }
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
        work.store((generation << 32) | UInt64(chunkCount), ordering: .releasing)
        pthread_mutex_lock(&mutex)
        if sleepers > 0 { pthread_cond_broadcast(&condition) }
        pthread_mutex_unlock(&mutex)
        let mine = drain(generation: generation)
        if mine < chunkCount {
            var spins = 0
            while completed.load(ordering: .acquiring) + mine < chunkCount {
                spins &+= 1
                if spins > 1 << 14 { sched_yield() }
            }
        }
        self.task = nil
    }

    /// Claims and runs chunks of `generation` until none are left; returns how many this thread ran.
    private func drain(generation: UInt64) -> Int {
        var ran = 0
        var current = work.load(ordering: .acquiring)
        while true {
            guard current >> 32 == generation & 0xFFFF_FFFF else { return ran }
            let next = Int((current >> 16) & 0xFFFF), count = Int(current & 0xFFFF)
            guard next < count else { return ran }
            let claimed = current + (1 << 16)
            let (exchanged, original) = work.compareExchange(expected: current, desired: claimed,
                                                             ordering: .acquiringAndReleasing)
            if !exchanged { current = original; continue }
            task!.execute(chunk: next)
            ran += 1
            current = claimed
        }
    }

    private func workerLoop() {
        background?.adoptCurrentThread()
        defer { background?.releaseCurrentThread() }
        var seenGeneration: UInt64 = 0
        while !shuttingDown.load(ordering: .acquiring) {
            var spins = 0
            var current = work.load(ordering: .acquiring)
            while current >> 32 == seenGeneration && !shuttingDown.load(ordering: .relaxed) {
                spins += 1
                if spins < 20_000 {
                    current = work.load(ordering: .acquiring)
                    continue
                }
                pthread_mutex_lock(&mutex)
                sleepers += 1
                while work.load(ordering: .acquiring) >> 32 == seenGeneration && !shuttingDown.load(ordering: .relaxed) {
                    pthread_cond_wait(&condition, &mutex)
                }
                sleepers -= 1
                pthread_mutex_unlock(&mutex)
                current = work.load(ordering: .acquiring)
            }
            seenGeneration = current >> 32
            let ran = drain(generation: seenGeneration)
            if ran > 0 { completed.add(ran, ordering: .releasing) }
        }
        exited.add(1, ordering: .releasing)
    }
}
