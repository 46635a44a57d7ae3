// Where a quantized kernel's time goes: nanoseconds per block per row with its rows in L1 (the
// arithmetic alone) and streamed from memory by one thread, and its rate on the whole pool against
// the STREAM triad measured around it. `hitch bench decode --kernels` prints these per ggml type and
// per instruction set the CPU runs.

import CHitchKernels
import HitchAlgorithms
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One kernel version's figures (docs/WORKLOADS.md "Where the time goes").
public struct KernelMeasurement: Codable, Sendable, Equatable {
    public var type: String
    public var instructionSet: String
    public var bytesPerBlock: Int
    public var weightsPerBlock: Int
    /// Thread CPU time per block per row, eight rows that stay in L1 multiplied again and again.
    public var l1NsPerBlockRow: Double
    /// Thread CPU time per block per row, one thread through a matrix of `matrixBytes` once (the best
    /// of three passes): what the stream from memory adds to the arithmetic, on one core.
    public var memoryNsPerBlockRow: Double
    /// The pool's threads through the same matrix, rows chunked as a decode product chunks them:
    /// bytes over wall time.
    public var poolGBps: Double
    /// The triad on the same pool, the better of the passes just before and after each pool pass
    /// (the median over passes).
    public var triadGBps: Double
    /// poolGBps / triadGBps.
    public var triadShare: Double
    /// threads x bytesPerBlock / l1NsPerBlockRow: what the pool's arithmetic could move were memory
    /// free.
    public var computeGBps: Double
    /// `KernelBound`'s name.
    public var bound: String
}

/// What holds a kernel back on a pool.
public enum KernelBound: String, Sendable {
    /// The cores cannot unpack and multiply as fast as memory delivers: computeGBps < triadGBps.
    case unpacking
    /// The pool reads at 85 % of the triad or more.
    case bandwidth
    /// Neither: the arithmetic could keep up, but the stream's stalls are not hidden.
    case latency

    /// The bandwidth share from which a kernel counts as bandwidth-bound.
    public static let bandwidthShare = 0.85

    public static func of(computeGBps: Double, poolGBps: Double, triadGBps: Double) -> KernelBound {
        if computeGBps < triadGBps { return .unpacking }
        return poolGBps >= bandwidthShare * triadGBps ? .bandwidth : .latency
    }
}

public enum KernelBenchmark {
    /// The quantized types with kernels, in the order of the tables.
    public static let types: [GGMLType] = [.q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q4_K, .q5_K, .q6_K]
    /// Row length of every measured matrix: the bundled model's width.
    public static let columns = 1536
    static let l1Rows = 8

    /// Measures `types` on every instruction set in `instructionSets` the CPU runs (default: all it
    /// runs), each on the pool's threads; `arrays` gives the triad passes (the pool's).
    public static func measure(types: [GGMLType] = types, instructionSets: [String] = QuantizedKernels.available,
                               pool: WorkerPool, arrays: StreamArrays, matrixBytes: Int) -> [KernelMeasurement] {
        var results: [KernelMeasurement] = []
        let activations = QuantizedVector(capacity: columns)
        var generator = SeededGenerator(seed: 7)
        let x = (0..<columns).map { _ in generator.nextSigned() }
        x.withUnsafeBufferPointer {
            activations.quantize8($0.baseAddress!, count: columns)
            activations.quantizeK($0.baseAddress!, count: columns)
        }
        let y = UnsafeMutablePointer<Float>.allocate(capacity: max(matrixBytes / 16, l1Rows))
        defer { y.deallocate() }
        for type in types {
            // One row of the type, encoded from random weights, copied into every row (the values
            // do not change the time).
            let row = type.encode((0..<columns).map { _ in generator.nextSigned() })
            let rowBytes = row.count, blocks = columns / type.blockSize
            let rows = max(l1Rows, matrixBytes / rowBytes / 16 * 16)
            let matrix = LargePages.allocate(byteCount: rows * rowBytes)
            defer { LargePages.deallocate(matrix, byteCount: rows * rowBytes) }
            row.withUnsafeBytes { source in
                for r in 0..<rows { (matrix + r * rowBytes).copyMemory(from: source.baseAddress!, byteCount: rowBytes) }
            }
            // The kernel a decode step runs on matrices of this many rows, on the layout it reads
            // (q4_0: interleaved eight rows at a time, summed in llama.cpp's repacked order).
            let kernelType = MappedSegment.kernelType(type, rows: rows, name: "")
            if kernelType == HITCH_Q4_0_ROWS8 && hitch_interleave_q4_0_rows8(matrix, rowBytes, rows, blocks) == 0 { continue }
            let weights = UnsafePointer(matrix.assumingMemoryBound(to: UInt8.self))
            for isa in instructionSets {
                guard let kernel = hitch_kernel(isa, kernelType) else { continue }
                let l1 = l1Nanoseconds(kernel, weights, rowBytes: rowBytes, blocks: blocks, activations: activations, y: y)
                var memory = Double.infinity
                for _ in 0..<3 {
                    let start = threadCPUNanoseconds()
                    kernel(weights, rowBytes, rows, blocks, activations.ggml, y)
                    memory = min(memory, Double(threadCPUNanoseconds() - start) / Double(rows * blocks))
                }
                let task = KernelTask(kernel: kernel, weights: weights, rowBytes: rowBytes, blocks: blocks, activations: activations, y: y)
                let chunkRows = rowsPerChunk(rows), chunks = (rows + chunkRows - 1) / chunkRows
                task.rows = rows; task.chunkRows = chunkRows
                var triads = [arrays.triadPassGBps()], passes: [Double] = []
                for _ in 0..<3 {
                    let seconds = BandwidthProbe.time { pool.run(task, chunkCount: chunks) }
                    passes.append(Double(rows * rowBytes) / seconds / 1e9)
                    triads.append(arrays.triadPassGBps())
                }
                let references = (0..<passes.count).map { max(triads[$0], triads[$0 + 1]) }
                let poolGBps = median(passes), triadGBps = median(references)
                let computeGBps = Double(pool.threadCount) * Double(type.blockBytes) / l1
                results.append(KernelMeasurement(type: type.name, instructionSet: isa, bytesPerBlock: type.blockBytes,
                                                 weightsPerBlock: type.blockSize, l1NsPerBlockRow: l1, memoryNsPerBlockRow: memory,
                                                 poolGBps: poolGBps, triadGBps: triadGBps, triadShare: poolGBps / triadGBps,
                                                 computeGBps: computeGBps,
                                                 bound: KernelBound.of(computeGBps: computeGBps, poolGBps: poolGBps, triadGBps: triadGBps).rawValue))
            }
        }
        return results
    }

    /// The best of seven timings of enough repetitions over `l1Rows` rows to take a millisecond or more.
    static func l1Nanoseconds(_ kernel: hitch_matvec_fn, _ weights: UnsafePointer<UInt8>, rowBytes: Int, blocks: Int,
                              activations: QuantizedVector, y: UnsafeMutablePointer<Float>) -> Double {
        var repetitions = 1
        while true {
            let start = threadCPUNanoseconds()
            for _ in 0..<repetitions { kernel(weights, rowBytes, l1Rows, blocks, activations.ggml, y) }
            if threadCPUNanoseconds() - start >= 1_000_000 || repetitions >= 1 << 20 { break }
            repetitions *= 2
        }
        var best = Double.infinity
        for _ in 0..<7 {
            let start = threadCPUNanoseconds()
            for _ in 0..<repetitions { kernel(weights, rowBytes, l1Rows, blocks, activations.ggml, y) }
            best = min(best, Double(threadCPUNanoseconds() - start) / Double(repetitions * l1Rows * blocks))
        }
        return best
    }

    /// The kernel over a chunk of rows, as `MatvecTask` splits a product.
    final class KernelTask: ParallelTask, @unchecked Sendable {
        // @unchecked: set before `WorkerPool.run` publishes it; chunks write disjoint rows of `y`.
        let kernel: hitch_matvec_fn
        let weights: UnsafePointer<UInt8>
        let rowBytes, blocks: Int
        let activations: QuantizedVector
        let y: UnsafeMutablePointer<Float>
        var rows = 0, chunkRows = 16

        init(kernel: @escaping hitch_matvec_fn, weights: UnsafePointer<UInt8>, rowBytes: Int, blocks: Int, activations: QuantizedVector,
             y: UnsafeMutablePointer<Float>) {
            self.kernel = kernel; self.weights = weights; self.rowBytes = rowBytes; self.blocks = blocks
            self.activations = activations; self.y = y
        }

        func execute(chunk: Int) {
            let first = chunk * chunkRows, count = min(chunkRows, rows - first)
            kernel(weights + first * rowBytes, rowBytes, count, blocks, activations.ggml, y + first)
        }
    }

    static func threadCPUNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
