import HitchAnalysis

// Change-point detection as Apache Otava (formerly Hunter, MongoDB's) does it: E-divisive means
// (Matteson & James, "A Nonparametric Approach for Multiple Change Point Analysis of Multivariate
// Data", JASA 2014) run over overlapping windows of the series, each candidate split kept only when
// a t-test between the segments on either side finds the means differ (the significance test Otava
// uses in place of E-divisive's permutation test), then a merge pass that drops the weakest change
// point and re-tests its neighbours until every one left is significant and large enough.
// The t-test pools the two segments' variance (Student's, as Otava's does, not Welch's): E-divisive
// picks splits that make a segment look uniform, so a short segment's own variance is biased low,
// and separate variances would read that as a significant difference.

/// A change in a series' mean, found between `index - 1` and `index`.
public struct ChangePoint: Sendable, Equatable, Codable {
    /// The first point of the new level.
    public var index: Int
    public var meanBefore: Double
    public var meanAfter: Double
    /// Student's t-test (pooled variance) between the segments either side (bounded by the neighbouring change points).
    public var pValue: Double
    /// (after - before) / |before| in percent; nil when before is 0.
    public var changePercent: Double? { meanBefore != 0 ? (meanAfter - meanBefore) / abs(meanBefore) * 100 : nil }
    /// |after - before| / |before|, or infinity when before is 0 and the means differ.
    var magnitude: Double {
        meanBefore != 0 ? abs(meanAfter - meanBefore) / abs(meanBefore) : (meanAfter == meanBefore ? 0 : .infinity)
    }
}

public struct ChangePointOptions: Sendable, Equatable {
    /// Points per E-divisive window (Otava's default is 50); consecutive windows overlap by half.
    public var windowLength: Int = 50
    /// A change point must have a t-test p-value below this. Otava's default is 0.001; 0.0001 keeps
    /// flat 80-run series quiet in 100 of 100 seeds here (0.001: 97) at no cost to finding a 3-sigma step.
    public var maxPValue: Double = 0.0001
    /// ... and a relative change of at least this (0.0 = any).
    public var minMagnitude: Double = 0
    /// The fewest points on either side of a split.
    public var minSegment: Int = 3
    /// A short series gets a laxer bar than `maxPValue`: `familyWiseAlpha` spread over its n - 1
    /// candidate splits (Bonferroni), so the chance of any false alarm in the series stays near 1%.
    /// From 101 points on, that is below `maxPValue`, which then applies. An explicit
    /// `--max-pvalue` turns this off (`scalesWithLength` false).
    public var familyWiseAlpha: Double = 0.01
    public var scalesWithLength = true

    /// The fewest points in which a change point can be found: `minSegment` either side.
    public var pointsNeeded: Int { 2 * minSegment }

    /// The p-value bar for a series of `count` points.
    public func maxPValue(forPoints count: Int) -> Double {
        scalesWithLength && count > 1 ? max(maxPValue, familyWiseAlpha / Double(count - 1)) : maxPValue
    }

    public init() {}
}

public enum ChangePointDetector {
    /// Change points of `series`, oldest first.
    public static func changePoints(in series: [Double], options given: ChangePointOptions = ChangePointOptions()) -> [ChangePoint] {
        guard series.count >= given.pointsNeeded else { return [] }
        var options = given
        options.maxPValue = given.maxPValue(forPoints: series.count)
        let sums = PrefixSums(series)
        // A laxer first pass (as Otava's), so the merge pass has every plausible split to judge.
        let weak = split(series, sums, options: options, maxPValue: min(options.maxPValue * 10, 0.5))
        return merge(weak, sums, options: options)
    }

    /// Running sums of x and x^2 (of x minus the first value, against cancellation), so any
    /// segment's mean and variance cost O(1) (the merge pass re-tests long segments many times).
    struct PrefixSums {
        let count: Int
        private let offset: Double
        private var sum: [Double], squares: [Double]

        init(_ series: [Double]) {
            count = series.count
            offset = series.first ?? 0
            sum = [0]; squares = [0]
            sum.reserveCapacity(count + 1); squares.reserveCapacity(count + 1)
            for value in series {
                let v = value - offset
                sum.append(sum[sum.count - 1] + v)
                squares.append(squares[squares.count - 1] + v * v)
            }
        }

        /// Count, mean and (n - 1) variance of series[from..<to].
        func segment(_ from: Int, _ to: Int) -> (count: Double, mean: Double, variance: Double) {
            let n = Double(to - from)
            let s = sum[to] - sum[from], q = squares[to] - squares[from]
            let mean = s / n
            let variance = n > 1 ? max(0, (q - s * mean) / (n - 1)) : 0
            return (n, mean + offset, variance)
        }
    }

    // MARK: Windows

    static func split(_ series: [Double], _ sums: PrefixSums, options: ChangePointOptions, maxPValue: Double) -> [Int] {
        let window = max(options.windowLength, 2 * options.minSegment)
        let step = max(1, window / 2)
        var start = 0
        var indexes: [Int] = []
        while start < series.count {
            let end = min(start + window, series.count)
            let found = eDivisive(series, sums, start, end, options: options, maxPValue: maxPValue).sorted()
            for index in found where !indexes.contains(index) { indexes.append(index) }
            if end == series.count { break }
            start = max(found.last ?? 0, start + step)
        }
        return indexes.sorted()
    }

    /// E-divisive within series[start..<end]: repeatedly split the segment whose best split has the
    /// largest divergence, while the split is significant.
    static func eDivisive(_ series: [Double], _ sums: PrefixSums, _ start: Int, _ end: Int, options: ChangePointOptions, maxPValue: Double) -> [Int] {
        var bounds = [start, end]
        var found: [Int] = []
        var best: [Int: (index: Int, q: Double)?] = [:]   // per segment start: its best split, cached
        while true {
            var candidate: (index: Int, q: Double)?
            for k in 0..<(bounds.count - 1) {
                let a = bounds[k], b = bounds[k + 1]
                let split: (index: Int, q: Double)?
                if let cached = best[a] { split = cached } else {
                    split = bestSplit(series, a, b, minSegment: options.minSegment)
                    best[a] = split
                }
                if let split, split.q > (candidate?.q ?? -.infinity) { candidate = split }
            }
            guard let candidate else { break }
            let position = bounds.firstIndex { $0 > candidate.index } ?? bounds.count
            let left = bounds[position - 1], right = bounds[position]
            let test = statistics(sums, left, candidate.index, right)
            guard test.pValue < maxPValue else { break }
            found.append(candidate.index)
            bounds.insert(candidate.index, at: position)
            best[left] = nil
            best[candidate.index] = nil
        }
        return found
    }

    /// The split of x[a..<b] maximising E-divisive's q-hat with alpha = 1:
    ///   q(t) = (m n / (m + n)) (2 E|X - Y| - E|X - X'| - E|Y - Y'|)
    /// where X = x[a..<t] (m points), Y = x[t..<b] (n points). O((b - a)^2).
    static func bestSplit(_ x: [Double], _ a: Int, _ b: Int, minSegment: Int) -> (index: Int, q: Double)? {
        let count = b - a
        guard count >= 2 * minSegment else { return nil }
        // within[t] = sum over pairs inside x[a..<a+t]; withinRight[t] = the same for x[a+t..<b].
        var within = [Double](repeating: 0, count: count + 1)
        var withinRight = [Double](repeating: 0, count: count + 1)
        x.withUnsafeBufferPointer { x in
            for t in 1..<count {
                let value = x[a + t]
                var sum = 0.0
                for i in a..<(a + t) { sum += abs(x[i] - value) }
                within[t + 1] = within[t] + sum
            }
            for t in stride(from: count - 2, through: 0, by: -1) {
                let value = x[a + t]
                var sum = 0.0
                for j in (a + t + 1)..<b { sum += abs(x[j] - value) }
                withinRight[t] = withinRight[t + 1] + sum
            }
        }
        let total = within[count]
        var best: (index: Int, q: Double)?
        for t in minSegment...(count - minSegment) {
            let m = Double(t), n = Double(count - t)
            let cross = total - within[t] - withinRight[t]
            let q = (m * n / (m + n)) * (2 * cross / (m * n) - within[t] / (m * (m - 1) / 2) - withinRight[t] / (n * (n - 1) / 2))
            if q > (best?.q ?? -.infinity) { best = (a + t, q) }
        }
        return best
    }

    // MARK: Significance and merging

    static func statistics(_ sums: PrefixSums, _ left: Int, _ index: Int, _ right: Int) -> ChangePoint {
        let before = sums.segment(left, index), after = sums.segment(index, right)
        let p = before.count >= 2 && after.count >= 2
            ? RunComparison.pooledTTest(countA: before.count, meanA: before.mean, varianceA: before.variance,
                                        countB: after.count, meanB: after.mean, varianceB: after.variance)
            : 1
        return ChangePoint(index: index, meanBefore: before.mean, meanAfter: after.mean, pValue: p)
    }

    static func merge(_ indexes: [Int], _ sums: PrefixSums, options: ChangePointOptions) -> [ChangePoint] {
        func evaluate(_ indexes: [Int]) -> [ChangePoint] {
            let bounds = [0] + indexes + [sums.count]
            return indexes.enumerated().map { k, index in statistics(sums, bounds[k], index, bounds[k + 2]) }
        }
        var points = evaluate(indexes)
        while !points.isEmpty {
            // The least significant point goes first; once all are significant, the smallest change.
            var weakest = points.indices.max { points[$0].pValue < points[$1].pValue }!
            if points[weakest].pValue < options.maxPValue {
                weakest = points.indices.min { points[$0].magnitude < points[$1].magnitude }!
                if points[weakest].magnitude >= options.minMagnitude && (options.minMagnitude > 0 || points[weakest].magnitude > 0) { break }
            }
            points.remove(at: weakest)
            // Removing a point widens its neighbours' segments: re-test them.
            let bounds = [0] + points.map(\.index) + [sums.count]
            for k in [weakest - 1, weakest] where points.indices.contains(k) {
                points[k] = statistics(sums, bounds[k], points[k].index, bounds[k + 2])
            }
        }
        return points
    }
}
