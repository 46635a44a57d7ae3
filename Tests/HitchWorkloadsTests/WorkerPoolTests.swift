import Testing
@testable import HitchWorkloads

/// The decode pool: every chunk of every op runs exactly once, whatever the thread and chunk counts
/// (each thread claims its own run of chunks, then what is left of the others').
@Suite("Worker pool")
struct WorkerPoolTests {
    /// Counts each chunk's runs.
    final class CountingTask: ParallelTask, @unchecked Sendable {
        // @unchecked: each chunk writes only its own slot of `runs`, and `run` returns after all of them.
        let runs: UnsafeMutablePointer<Int>
        let capacity: Int
        init(capacity: Int) {
            self.capacity = capacity
            runs = .allocate(capacity: capacity); runs.initialize(repeating: 0, count: capacity)
        }
        deinit { runs.deallocate() }
        func reset() {
            runs.update(repeating: 0, count: capacity)
        }
        func execute(chunk: Int) {
            runs[chunk] += 1
        }
    }

    @Test("every chunk runs exactly once, op after op, for 1 to 4 threads and 0 to 100 chunks", arguments: [1, 2, 3, 4])
    func everyChunkOnce(threadCount: Int) {
        let pool = WorkerPool(threadCount: threadCount)
        defer { pool.shutdown() }
        let task = CountingTask(capacity: 100)
        for op in 0..<2_000 {
            let chunks = op % 101
            task.reset()
            pool.run(task, chunkCount: chunks)
            #expect((0..<chunks).allSatisfy { task.runs[$0] == 1 }, "op \(op): \(chunks) chunks on \(threadCount) threads")
            #expect((chunks..<100).allSatisfy { task.runs[$0] == 0 })
        }
    }
}
