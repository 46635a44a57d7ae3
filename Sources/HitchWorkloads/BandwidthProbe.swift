// A STREAM-style memory bandwidth probe and a peak arithmetic probe, run on the same worker pool (so
// the same thread count) as the decode loop. Arrays are at least 4x this machine's last-level cache
// (read from sysfs) so every pass goes to DRAM, as STREAM's rule asks; each figure is the best of
// several passes, as STREAM reports.

import Foundation
import HitchTrace
#if canImport(Glibc)
import Glibc
#endif

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
    /// The cache the arrays were sized against, and whether each array is at least 4x it.
    public var sizing: ProbeSizing

    /// Metadata keys and values as recorded in a trace.
    public var metadata: [(key: MetadataKey, value: String)] {
        [(.peakBandwidthGBps, Self.format(peakBandwidthGBps)), (.triadGBps, Self.format(triadGBps)),
         (.readGBps, Self.format(readGBps)), (.peakGFLOPS, Self.format(peakGFLOPS)),
         (.bandwidthProbeThreads, String(threads)), (.bandwidthProbeArrayBytes, String(arrayBytes))]
            + sizing.metadata
    }

    static func format(_ value: Double) -> String { String(format: "%.2f", value) }
}

/// The machine's last-level cache: the largest `level` among
/// /sys/devices/system/cpu/cpu0/cache/index*/ (its `size`), else glibc's
/// sysconf(_SC_LEVEL3_CACHE_SIZE), else an assumed 32 MiB (`source` says which).
public struct LastLevelCache: Sendable, Codable, Equatable {
    public var bytes: Int
    public var level: Int
    /// "sysfs", "sysconf" or "assumed".
    public var source: String

    public static let assumedBytes = 32 << 20

    public static func detect(sysfsDirectory: String = "/sys/devices/system/cpu/cpu0/cache") -> LastLevelCache {
        if let found = fromSysfs(sysfsDirectory) { return found }
        let level3 = sysconf(Int32(_SC_LEVEL3_CACHE_SIZE)), level2 = sysconf(Int32(_SC_LEVEL2_CACHE_SIZE))
        if level3 > 0 { return LastLevelCache(bytes: level3, level: 3, source: "sysconf") }
        if level2 > 0 { return LastLevelCache(bytes: level2, level: 2, source: "sysconf") }
        return LastLevelCache(bytes: assumedBytes, level: 0, source: "assumed")
    }

    /// The data or unified cache with the highest level (the largest size among equals).
    static func fromSysfs(_ directory: String) -> LastLevelCache? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        var best: LastLevelCache?
        for entry in entries where entry.hasPrefix("index") {
            func read(_ name: String) -> String? {
                (try? String(contentsOfFile: directory + "/" + entry + "/" + name, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let level = read("level").flatMap({ Int($0) }), let size = read("size").flatMap(parseSize),
                  read("type") != "Instruction" else { continue }
            if best.map({ (level, size) > ($0.level, $0.bytes) }) ?? true {
                best = LastLevelCache(bytes: size, level: level, source: "sysfs")
            }
        }
        return best
    }

    /// sysfs sizes: "266240K", "32M", "1G", or plain bytes.
    static func parseSize(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.last, let unit = units[last.uppercased().first!] {
            return Int(text.dropLast()).map { $0 * unit }
        }
        return Int(text)
    }
}

/// How big the probe's arrays are, and why.
public struct ProbeSizing: Sendable, Codable, Equatable {
    public var lastLevelCache: LastLevelCache
    public var arrayBytes: Int
    /// Every array is at least `cacheMultiple` x the last-level cache.
    public var meetsCacheRule: Bool
    /// Why the rule is not met (memory, or an explicit size); nil when it is.
    public var shortfall: String?

    /// STREAM's rule: each array at least 4x the largest cache.
    public static let cacheMultiple = 4
    /// The three arrays may take at most this share of the memory available.
    public static let memoryShare = 0.5

    /// 4x the cache, or as much as half the available memory allows for three arrays (then the
    /// rule is not met, and `shortfall` says so).
    public static func fromMachine(cache: LastLevelCache = .detect(),
                                   availableMemoryBytes: Int? = ProbeSizing.availableMemoryBytes()) -> ProbeSizing {
        let wanted = cacheMultiple * cache.bytes
        guard let available = availableMemoryBytes else {
            return ProbeSizing(lastLevelCache: cache, arrayBytes: wanted, meetsCacheRule: true, shortfall: nil)
        }
        let allowed = Int(Double(available) * memoryShare) / 3
        if wanted <= allowed { return ProbeSizing(lastLevelCache: cache, arrayBytes: wanted, meetsCacheRule: true, shortfall: nil) }
        let bytes = max(allowed, 1 << 20)
        return ProbeSizing(lastLevelCache: cache, arrayBytes: bytes, meetsCacheRule: bytes >= wanted,
                           shortfall: "memory allows \(bytes >> 20) MiB per array, below \(cacheMultiple)x the \(cache.bytes >> 20) MiB last-level cache: the peak may be a cache figure")
    }

    /// An explicit array size (tests, `--probe-bytes`), judged against the cache all the same.
    public static func explicit(arrayBytes: Int, cache: LastLevelCache = .detect()) -> ProbeSizing {
        let meets = arrayBytes >= cacheMultiple * cache.bytes
        return ProbeSizing(lastLevelCache: cache, arrayBytes: arrayBytes, meetsCacheRule: meets,
                           shortfall: meets ? nil : "arrays of \(arrayBytes >> 20) MiB chosen explicitly, below \(cacheMultiple)x the \(cache.bytes >> 20) MiB last-level cache: the peak may be a cache figure")
    }

    /// MemAvailable from /proc/meminfo, capped by the cgroup's memory.max; nil when neither is readable.
    public static func availableMemoryBytes() -> Int? {
        var result: Int?
        if let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
           let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }) {
            let fields = line.split(separator: " ")
            if fields.count >= 2, let kib = Int(fields[1]) { result = kib * 1024 }
        }
        if let text = try? String(contentsOfFile: "/sys/fs/cgroup/memory.max", encoding: .utf8),
           let limit = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            result = min(result ?? limit, limit)
        }
        return result
    }

    /// Recorded with the probe's figures in trace metadata and `hitch bench decode` JSON.
    public var metadata: [(key: MetadataKey, value: String)] {
        var pairs: [(key: MetadataKey, value: String)] = [(.lastLevelCacheBytes, String(lastLevelCache.bytes)), (.lastLevelCacheLevel, String(lastLevelCache.level)),
                     (.lastLevelCacheSource, lastLevelCache.source),
                     (.bandwidthProbeMeetsCacheRule, meetsCacheRule ? "true" : "false")]
        if let shortfall { pairs.append((.bandwidthProbeShortfall, shortfall)) }
        return pairs
    }
}

public enum BandwidthProbe {
    /// Runs the probes with arrays sized by `sizing` (from this machine by default), `repetitions`
    /// passes each. When the arrays cannot be 4x the last-level cache, `sizing.shortfall` says so.
    public static func measure(pool: WorkerPool, sizing: ProbeSizing = .fromMachine(), repetitions: Int = 5) -> BandwidthProbeResult {
        let arrays = StreamArrays(pool: pool, sizing: sizing)
        var bestTriad = 0.0, bestRead = 0.0
        for _ in 0..<repetitions {
            bestTriad = max(bestTriad, arrays.triadPassGBps())
            bestRead = max(bestRead, arrays.readPassGBps())
        }
        return BandwidthProbeResult(triadGBps: bestTriad, readGBps: bestRead, peakBandwidthGBps: bestTriad,
                                    peakGFLOPS: measurePeakGFLOPS(pool: pool, repetitions: repetitions),
                                    threads: pool.threadCount, arrayBytes: arrays.arrayBytes, sizing: arrays.sizing)
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
    public let sizing: ProbeSizing

    public init(pool: WorkerPool, sizing: ProbeSizing = .fromMachine()) {
        let count = max((sizing.arrayBytes + 4095) / 4096 * 1024, 1024)
        self.pool = pool
        self.arrayBytes = count * 4
        self.sizing = sizing
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
