// Percentiles in bounded memory. Exact while few values have been seen; past `exactLimit` the
// values move into a log-linear histogram (HDR-style: 64 sub-buckets per power of two), whose
// quantiles are within 1/128 (0.79%) relative error. Values are signed nanoseconds.
//
// A sketch's state is a function of the multiset of values it was given: exact (the values) while
// there are at most `exactLimit`, the histogram's counts past that, an integer sum and the maximum.
// So two sketches merge exactly (`merge`): the merge of sketches of A and B is the sketch of A ∪ B,
// in any order and any grouping (docs/FLEET.md "Merging").

struct QuantileSketch: Sendable {
    static let exactLimit = 4096
    static let subBucketBits = 6
    static let subBuckets = 1 << subBucketBits
    /// Relative error bound of the histogram: half a sub-bucket's width over its lower edge.
    static let histogramRelativeError = 1.0 / Double(2 * subBuckets)

    private(set) var count = 0
    /// Integer, so sums of the same values are the same in any order (a Double sum's last bits are not).
    private(set) var sum: Int64 = 0
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
        sum &+= value
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
    var mean: Double { count == 0 ? 0 : Double(sum) / Double(count) }

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

// MARK: Merging and the summary's form

extension QuantileSketch {
    /// Adds every value `other` was given: afterwards this is the sketch of both sets of values.
    mutating func merge(_ other: QuantileSketch) {
        guard other.count > 0 else { return }
        count +|= other.count
        sum &+= other.sum
        maximum = Swift.max(maximum, other.maximum)
        if !isHistogram && !other.isHistogram && exact.count + other.exact.count <= Self.exactLimit {
            exact.append(contentsOf: other.exact)
            return
        }
        if !isHistogram {
            isHistogram = true
            positive = [UInt32](repeating: 0, count: 64 * Self.subBuckets)
            negative = positive
            for v in exact { addToHistogram(v) }
            exact = []
        }
        if other.isHistogram {
            zeros +|= other.zeros
            for index in other.positive.indices where other.positive[index] > 0 { positive[index] = Self.saturating(positive[index], other.positive[index]) }
            for index in other.negative.indices where other.negative[index] > 0 { negative[index] = Self.saturating(negative[index], other.negative[index]) }
        } else {
            for v in other.exact { addToHistogram(v) }
        }
    }

    /// A bucket holds at most 2^32 - 1 values; a merged fleet past that keeps the bucket full.
    private static func saturating(_ a: UInt32, _ b: UInt32) -> UInt32 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}

extension QuantileSketch: Equatable {
    /// Equal when they hold the same multiset of values (exact) or the same counts (histogram).
    static func == (a: QuantileSketch, b: QuantileSketch) -> Bool {
        a.count == b.count && a.sum == b.sum && a.maximum == b.maximum && a.isHistogram == b.isHistogram
            && a.zeros == b.zeros && a.positive == b.positive && a.negative == b.negative && a.exact.sorted() == b.exact.sorted()
    }
}

/// In a summary (docs/summary.schema.json "sketch"): `count`, `sumNs`, `maxNs`, and either `values`
/// (exact: every value, sorted) or the histogram's non-empty buckets as [index, count] pairs
/// (`positive`, `negative`) and `zeros`. Sorted, so the same values always encode to the same text.
extension QuantileSketch: Codable {
    private enum CodingKeys: String, CodingKey { case count, sumNs, maxNs, values, zeros, positive, negative }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(count, forKey: .count)
        try c.encode(sum, forKey: .sumNs)
        try c.encode(count > 0 ? maximum : 0, forKey: .maxNs)
        if isHistogram {
            try c.encode(zeros, forKey: .zeros)
            try c.encode(Self.pairs(positive), forKey: .positive)
            try c.encode(Self.pairs(negative), forKey: .negative)
        } else {
            try c.encode(exact.sorted(), forKey: .values)
        }
    }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        let count = try c.decode(Int.self, forKey: .count)
        sum = try c.decode(Int64.self, forKey: .sumNs)
        let maximum = try c.decode(Int64.self, forKey: .maxNs)
        func corrupt(_ why: String) -> DecodingError {
            DecodingError.dataCorrupted(DecodingError.Context(codingPath: c.codingPath, debugDescription: "bad sketch: \(why)"))
        }
        if let values = try c.decodeIfPresent([Int64].self, forKey: .values) {
            guard values.count == count, count <= Self.exactLimit else { throw corrupt("\(values.count) values for a count of \(count) (at most \(Self.exactLimit) are kept exact)") }
            exact = values
            if let largest = values.max(), largest != maximum { throw corrupt("maxNs \(maximum) is not the largest value, \(largest)") }
        } else {
            guard count > Self.exactLimit else { throw corrupt("a histogram of \(count) values (at most \(Self.exactLimit) are kept exact)") }
            isHistogram = true
            positive = try Self.buckets(c.decode([[Int64]].self, forKey: .positive), corrupt)
            negative = try Self.buckets(c.decode([[Int64]].self, forKey: .negative), corrupt)
            zeros = try c.decode(Int.self, forKey: .zeros)
            guard zeros >= 0, zeros <= count else { throw corrupt("\(zeros) zeros for a count of \(count)") }
            let total = positive.reduce(zeros) { $0 + Int($1) } + negative.reduce(0) { $0 + Int($1) }
            guard total == count else { throw corrupt("its buckets hold \(total) values for a count of \(count)") }
        }
        self.count = count
        self.maximum = count > 0 ? maximum : .min
    }

    private static func pairs(_ buckets: [UInt32]) -> [[Int64]] {
        buckets.indices.filter { buckets[$0] > 0 }.map { [Int64($0), Int64(buckets[$0])] }
    }

    private static func buckets(_ pairs: [[Int64]], _ corrupt: (String) -> DecodingError) throws -> [UInt32] {
        var buckets = [UInt32](repeating: 0, count: 64 * subBuckets)
        for pair in pairs {
            guard pair.count == 2, buckets.indices.contains(Int(clamping: pair[0])), pair[1] > 0, pair[1] <= Int64(UInt32.max)
            else { throw corrupt("bucket \(pair) is not [index below \(buckets.count), count from 1 to \(UInt32.max)]") }
            buckets[Int(pair[0])] = UInt32(pair[1])
        }
        return buckets
    }
}
