// Percentiles in bounded memory. Exact while few values have been seen; past `exactLimit` the
// values move into a log-linear histogram (HDR-style: 64 sub-buckets per power of two), whose
// quantiles are within 1/128 (0.79%) relative error. Values are signed nanoseconds.

struct QuantileSketch: Sendable {
    static let exactLimit = 4096
    static let subBucketBits = 6
    static let subBuckets = 1 << subBucketBits
    /// Relative error bound of the histogram: half a sub-bucket's width over its lower edge.
    static let histogramRelativeError = 1.0 / Double(2 * subBuckets)

    private(set) var count = 0
    private(set) var sum: Double = 0
    private(set) var maximum: Int64 = .min
    private var exact: [Int64] = []
    private var positive: [UInt32] = []   // buckets of |v| for v > 0
    private var negative: [UInt32] = []   // buckets of |v| for v < 0
    private var zeros = 0
    private var isHistogram = false

    init() {}

    @inline(__always)
    mutating func add(_ value: Int64) {
        count += 1
        sum += Double(value)
        if value > maximum { maximum = value }
        if isHistogram { addToHistogram(value) } else { addExact(value) }
    }

    /// Out of line: a sketch is exact for its first few thousand values only.
    @inline(never)
    private mutating func addExact(_ value: Int64) {
        exact.append(value)
        if exact.count > Self.exactLimit {
            isHistogram = true
            positive = [UInt32](repeating: 0, count: 64 * Self.subBuckets)
            negative = positive
            for v in exact { addToHistogram(v) }
            exact = []
        }
    }

    @inline(__always)
    private mutating func addToHistogram(_ value: Int64) {
        if value > 0 { positive[Self.bucketIndex(value.magnitude)] &+= 1 }
        else if value < 0 { negative[Self.bucketIndex(value.magnitude)] &+= 1 }
        else { zeros += 1 }
    }

    /// Values below 2 * subBuckets map one to one; above, the top subBucketBits+1 bits are kept,
    /// each power of two past that taking subBuckets buckets. One formula for both, no branch.
    @inline(__always)
    static func bucketIndex(_ magnitude: UInt64) -> Int {
        // How far the value's highest bit lies above the subBucketBits+1 bits kept (0 for small values).
        let shift = Swift.max(0, 63 - subBucketBits - magnitude.leadingZeroBitCount)
        return shift << subBucketBits + Int(truncatingIfNeeded: magnitude &>> UInt64(shift))
    }

    /// The midpoint of a bucket's value range.
    static func bucketValue(_ index: Int) -> Double {
        if index < subBuckets { return Double(index) }
        let shift = index / subBuckets - 1
        let mantissa = index % subBuckets + subBuckets
        let low = Double(mantissa) * Double(UInt64(1) << UInt64(shift))
        let width = Double(UInt64(1) << UInt64(shift))
        return low + width / 2
    }

    var relativeError: Double { isHistogram ? Self.histogramRelativeError : 0 }
    var mean: Double { count == 0 ? 0 : sum / Double(count) }

    /// The value at quantile q (0...1), nearest-rank.
    func quantile(_ q: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, Swift.min(count, Int((q * Double(count)).rounded(.up))))
        if !isHistogram {
            return Double(exact.sorted()[rank - 1])
        }
        var seen = 0
        for index in stride(from: negative.count - 1, through: 0, by: -1) where negative[index] > 0 {
            seen += Int(negative[index])
            if seen >= rank { return -Self.bucketValue(index) }
        }
        seen += zeros
        if seen >= rank { return 0 }
        for index in positive.indices where positive[index] > 0 {
            seen += Int(positive[index])
            if seen >= rank { return Swift.min(Self.bucketValue(index), Double(maximum)) }
        }
        return Double(maximum)
    }

    /// Several quantiles at once (one sort in exact mode).
    func quantiles(_ qs: [Double]) -> [Double] {
        guard count > 0 else { return qs.map { _ in 0 } }
        if !isHistogram {
            let sorted = exact.sorted()
            return qs.map { q in
                let rank = Swift.max(1, Swift.min(count, Int((q * Double(count)).rounded(.up))))
                return Double(sorted[rank - 1])
            }
        }
        return qs.map { quantile($0) }
    }

    /// P50/P90/P95/P99/max/mean in milliseconds.
    func percentilesMs() -> Percentiles {
        var result = Percentiles()
        guard count > 0 else { return result }
        let values = quantiles([0.5, 0.9, 0.95, 0.99])
        result.p50 = values[0] / 1e6
        result.p90 = values[1] / 1e6
        result.p95 = values[2] / 1e6
        result.p99 = values[3] / 1e6
        result.max = Double(maximum) / 1e6
        result.mean = mean / 1e6
        result.relativeError = relativeError
        result.count = Int(count)
        return result
    }
}
