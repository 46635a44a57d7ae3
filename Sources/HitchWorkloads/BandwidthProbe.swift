// A STREAM-style memory bandwidth probe and a peak arithmetic probe, run on the same worker pool (so
// the same thread count) as the decode loop. Arrays are at least 4x the last-level cache so every pass
// goes to DRAM; each figure is the best of several passes, as STREAM reports.

import Foundation
import HitchTrace

public struct BandwidthProbeResult: Sendable, Codable, Equatable {
    /// a[i] = b[i] + s * c[i]; bytes counted as STREAM does (2 reads + 1 write, no write-allocate).
    public var triadGBps: Double
    /// sum += a[i] over one array.
    public var readGBps: Double
    /// The figure decode utilization is judged against: the triad (as STREAM and llama.cpp
    /// comparisons use), recorded as the trace's `peakBandwidthGBps`.
    public var peakBandwidthGBps: Double
    /// Independent multiply-adds in registers (the kernels' SIMD width on this build's target).
    public var peakGFLOPS: Double
    public var threads: Int
    public var arrayBytes: Int

    /// Metadata keys and values as recorded in a trace.
    public var metadata: [(key: String, value: String)] {
        [("peakBandwidthGBps", Self.format(peakBandwidthGBps)), ("triadGBps", Self.format(triadGBps)),
         ("readGBps", Self.format(readGBps)), ("peakGFLOPS", Self.format(peakGFLOPS)),
         ("bandwidthProbeThreads", String(threads)), ("bandwidthProbeArrayBytes", String(arrayBytes))]
    }

    static func format(_ value: Double) -> String { String(format: "%.2f", value) }
}

public enum BandwidthProbe {
    /// The last-level cache of the machine this suite targets (32 MB); arrays are 4x that or more.
    public static let lastLevelCacheBytes = 32 << 20

    /// Runs the probes. `arrayBytes` per array (default 5x the LLC), `repetitions` passes each.
    public static func measure(pool: WorkerPool, arrayBytes: Int = 5 * lastLevelCacheBytes, repetitions: Int = 5) -> BandwidthProbeResult {
        let arrays = StreamArrays(pool: pool, arrayBytes: arrayBytes)
        var bestTriad = 0.0, bestRead = 0.0
        for _ in 0..<repetitions {
            bestTriad = max(bestTriad, arrays.triadPassGBps())
            bestRead = max(bestRead, arrays.readPassGBps())
        }
        return BandwidthProbeResult(triadGBps: bestTriad, readGBps: bestRead, peakBandwidthGBps: bestTriad,
                                    peakGFLOPS: measurePeakGFLOPS(pool: pool, repetitions: repetitions),
                                    threads: pool.threadCount, arrayBytes: arrays.arrayBytes)
    }

    public static func measurePeakGFLOPS(pool: WorkerPool, repetitions: Int = 5) -> Double {
        let task = FlopTask(iterations: 2_000_000)
        var best = Double.infinity
        for _ in 0..<repetitions { best = min(best, time { pool.run(task, chunkCount: pool.threadCount) }) }
        return Double(pool.threadCount * task.flopsPerChunk) / best / 1e9
    }

    /// Records the result into the active trace's metadata.
    public static func record(_ result: BandwidthProbeResult) {
        guard let recorder = TraceRecorder.current else { return }
        for (key, value) in result.metadata { recorder.setMetadata(key, value) }
    }

    static func time(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// The probe's three arrays, allocated and touched once, for single timed passes: a benchmark can
/// interleave triad passes with the work it measures, so both see the same machine load.
public final class StreamArrays {
    private let a, b, c: UnsafeMutablePointer<Float>
    private let task: StreamTask
    private let pool: WorkerPool
    public let arrayBytes: Int

    public init(pool: WorkerPool, arrayBytes: Int = 5 * BandwidthProbe.lastLevelCacheBytes) {
        let count = max(arrayBytes / 4 / 1024 * 1024, 1024)
        self.pool = pool
        self.arrayBytes = count * 4
        // The same pages as the weights (2 MB where available), so the reference is not handicapped.
        func array() -> UnsafeMutablePointer<Float> {
            LargePages.allocate(byteCount: count * 4).bindMemory(to: Float.self, capacity: count)
        }
        a = array(); b = array(); c = array()
        task = StreamTask(a: a, b: b, c: c, count: count)
        task.kind = .fill
        pool.run(task, chunkCount: task.chunks)
    }

    deinit {
        for array in [a, b, c] { LargePages.deallocate(UnsafeMutableRawPointer(array), byteCount: arrayBytes) }
    }

    /// One triad pass (a = b + s * c) on the pool; bytes counted as STREAM does (2 reads + 1 write).
    public func triadPassGBps() -> Double {
        task.kind = .triad
        return Double(3 * arrayBytes) / BandwidthProbe.time { pool.run(task, chunkCount: task.chunks) } / 1e9
    }

    /// One read-only pass (sum of one array) on the pool.
    public func readPassGBps() -> Double {
        task.kind = .read
        return Double(arrayBytes) / BandwidthProbe.time { pool.run(task, chunkCount: task.chunks) } / 1e9
    }
}

final class StreamTask: ParallelTask, @unchecked Sendable {
    // @unchecked: chunks touch disjoint ranges; `kind` is set before each dispatch; `sums` has one slot per chunk.
    enum Kind { case fill, triad, read }
    var kind = Kind.fill
    let a, b, c: UnsafeMutablePointer<Float>
    let count: Int
    let chunks = 64
    let sums: UnsafeMutablePointer<Float>

    init(a: UnsafeMutablePointer<Float>, b: UnsafeMutablePointer<Float>, c: UnsafeMutablePointer<Float>, count: Int) {
        self.a = a; self.b = b; self.c = c; self.count = count
        sums = .allocate(capacity: chunks)
        sums.initialize(repeating: 0, count: chunks)
    }
    deinit { sums.deallocate() }

    func execute(chunk: Int) {
        let per = count / chunks / 64 * 64
        let start = chunk * per, end = chunk == chunks - 1 ? count : start + per
        switch kind {
        case .fill:
            for i in start..<end { a[i] = 0; b[i] = Float(i & 1023); c[i] = 0.5 }
        case .triad:
            let scalar: Float = 3
            var i = start
            while i + 16 <= end {
                let value = load16(b + i) + load16(c + i) * scalar
                UnsafeMutableRawPointer(a + i).storeBytes(of: value, as: SIMD16<Float>.self)
                i &+= 16
            }
            while i < end { a[i] = b[i] + scalar * c[i]; i += 1 }
        case .read:
            var s0 = SIMD16<Float>(), s1 = SIMD16<Float>()
            var i = start
            while i + 32 <= end { s0 += load16(a + i); s1 += load16(a + (i &+ 16)); i &+= 32 }
            var total = (s0 + s1).sum()
            while i < end { total += a[i]; i += 1 }
            sums[chunk] = total // kept so the loads are not optimized away
        }
    }
}

final class FlopTask: ParallelTask, @unchecked Sendable {
    // @unchecked: each chunk writes only its own slot of `sink`.
    let iterations: Int
    /// 10 SIMD8 fused multiply-adds (2 FLOPs per lane) per iteration: ten independent chains cover
    /// the FMA latency on both FMA ports, so this is the core's arithmetic peak, the roofline's roof.
    /// (`a * m + b` is not contracted to an FMA in Swift: it would measure half the peak at best.)
    var flopsPerChunk: Int { iterations * 10 * 8 * 2 }
    private let sink = UnsafeMutablePointer<Float>.allocate(capacity: 64)
    private let multiplier: Float
    init(iterations: Int) {
        self.iterations = iterations
        multiplier = Float(ProcessInfo.processInfo.processIdentifier % 3 + 1) * 0.25 + 0.24 // not a compile-time constant
    }
    deinit { sink.deallocate() }
    func execute(chunk: Int) {
        sink[chunk % 64] = fusedMultiplyAddChains(iterations: iterations, multiplier: multiplier)
    }
}

/// Ten independent SIMD8 FMA chains. A tuple of accumulators in a free function: written as ten
/// local vars inside the method, the whole-module optimizer split the vectors into 128-bit pieces
/// with spills (6 GFLOP/s instead of ~75 on one core here).
@inline(never)
private func fusedMultiplyAddChains(iterations: Int, multiplier: Float) -> Float {
    let m = SIMD8<Float>(repeating: multiplier), b = SIMD8<Float>(repeating: 0.5)
    var a = (SIMD8<Float>(repeating: 1), SIMD8<Float>(repeating: 2), SIMD8<Float>(repeating: 3), SIMD8<Float>(repeating: 4),
             SIMD8<Float>(repeating: 5), SIMD8<Float>(repeating: 6), SIMD8<Float>(repeating: 7), SIMD8<Float>(repeating: 8),
             SIMD8<Float>(repeating: 9), SIMD8<Float>(repeating: 10))
    for _ in 0..<iterations {
        a.0 = b.addingProduct(a.0, m); a.1 = b.addingProduct(a.1, m); a.2 = b.addingProduct(a.2, m)
        a.3 = b.addingProduct(a.3, m); a.4 = b.addingProduct(a.4, m); a.5 = b.addingProduct(a.5, m)
        a.6 = b.addingProduct(a.6, m); a.7 = b.addingProduct(a.7, m); a.8 = b.addingProduct(a.8, m)
        a.9 = b.addingProduct(a.9, m)
    }
    return (a.0 + a.1 + a.2 + a.3 + a.4 + a.5 + a.6 + a.7 + a.8 + a.9).sum()
}
