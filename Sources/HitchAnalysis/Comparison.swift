import Foundation

// `hitch diff`: per-figure change between two sides (one or more runs each). With two or more runs
// on both sides, a change counts only when Welch's t-test finds it significant, so CI gates on real
// regressions, not noise (docs/METRICS.md "Comparing runs").

/// One compared figure.
public struct FigureChange: Codable, Sendable, Equatable {
    /// A metric path (the same names budgets use).
    public var metric: String
    public var baseValues: [Double]
    public var newValues: [Double]
    public var baseMean: Double
    public var newMean: Double
    /// (new - base) / |base| in percent; nil when base is 0.
    public var changePercent: Double?
    /// True when a larger value is better (tokens per second).
    public var higherIsBetter: Bool
    /// Two-sided p-value of Welch's t-test; nil with fewer than two runs on a side.
    public var pValue: Double?
    /// "regression", "improvement" or "unchanged".
    public var verdict: String
}

public struct Comparison: Codable, Sendable, Equatable {
    public var thresholdPercent: Double
    public var alpha: Double
    public var baseRuns: Int
    public var newRuns: Int
    public var changes: [FigureChange]
    public var regressions: [FigureChange] { changes.filter { $0.verdict == "regression" } }
    public var improvements: [FigureChange] { changes.filter { $0.verdict == "improvement" } }
}

/// A figure `hitch diff` compares (and `hitch history` stores): path, direction, and the smallest
/// absolute change that matters.
public struct ComparedFigure: Sendable, Equatable {
    public var metric: String
    public var value: Double
    public var higherIsBetter: Bool
    public var absoluteFloor: Double
}

extension Analysis {
    /// The figures `hitch diff` compares, by metric path.
    public func comparedFigures() -> [ComparedFigure] {
        var result: [ComparedFigure] = []
        func add(_ metric: String, _ value: Double, higherIsBetter: Bool = false, floor: Double) {
            result.append(ComparedFigure(metric: metric, value: value, higherIsBetter: higherIsBetter, absoluteFloor: floor))
        }
        for key in hitches.keys.sorted() {
            guard let h = hitches[key] else { continue }
            let p = "hitches.\(key)."
            add(p + "hitchTimeRatioMsPerS", h.hitchTimeRatioMsPerS, floor: 0.5)
            add(p + "hitchCount", Double(h.hitchCount), floor: 1)
            add(p + "totalHitchMs", h.totalHitchMs, floor: 1)
            add(p + "longestHitchMs", h.longestHitchMs, floor: 1)
            add(p + "frameTimeMs.p95", h.frameTimeMs.p95, floor: 0.25)
            add(p + "frameTimeMs.p99", h.frameTimeMs.p99, floor: 0.25)
            add(p + "slowFrames", Double(h.slowFrames), floor: 1)
            add(p + "frozenFrames", Double(h.frozenFrames), floor: 1)
        }
        for s in stages {
            add("stages[\(s.name)].totalMs", s.totalMs, floor: 0.5)
            add("stages[\(s.name)].selfMs", s.selfMs, floor: 0.5)
            add("stages[\(s.name)].p95Ms", s.p95Ms, floor: 0.1)
            // The fraction of the stage's own time spent on the main thread, not its share of all
            // main-thread time: that share rises whenever other stages leave the main thread.
            add("stages[\(s.name)].onMainThreadFraction", s.onMainThreadFraction, floor: 0.02)
        }
        for v in views {
            add("views[\(v.type)].totalMs", v.totalMs, floor: 0.5)
            add("views[\(v.type)].bodyEvaluations", Double(v.bodyEvaluations), floor: 1)
            add("views[\(v.type)].longUpdates", Double(v.longUpdates), floor: 1)
        }
        if let d = decode {
            add("decode.tokensPerSecond", d.tokensPerSecond, higherIsBetter: true, floor: 0.1)
            add("decode.timeToFirstTokenMs", d.timeToFirstTokenMs, floor: 1)
            add("decode.bytesPerToken", d.bytesPerToken, floor: 1)
            add("decode.bandwidthGBps", d.bandwidthGBps, higherIsBetter: true, floor: 0.01)
            add("decode.utilization", d.utilization, higherIsBetter: true, floor: 0.005)
        }
        if let t = tokens {
            add("tokens.dropped", Double(t.dropped), floor: 1)
            add("tokens.tokenToScreenMs.p95", t.tokenToScreenMs.p95, floor: 0.5)
        }
        add("droppedEvents", Double(droppedEvents), floor: 1)
        return result
    }
}

public enum RunComparison {
    /// Compares figure by figure. `base` and `new` hold one analysis per run.
    public static func compare(base: [Analysis], new: [Analysis], thresholdPercent: Double, alpha: Double = 0.05) -> Comparison {
        var order: [String] = []
        var info: [String: (higherIsBetter: Bool, floor: Double)] = [:]
        var baseValues: [String: [Double]] = [:], newValues: [String: [Double]] = [:]
        func collect(_ analyses: [Analysis], into values: inout [String: [Double]]) {
            for analysis in analyses {
                for figure in analysis.comparedFigures() {
                    if info[figure.metric] == nil { order.append(figure.metric); info[figure.metric] = (figure.higherIsBetter, figure.absoluteFloor) }
                    values[figure.metric, default: []].append(figure.value)
                }
            }
        }
        collect(base, into: &baseValues)
        collect(new, into: &newValues)
        var changes: [FigureChange] = []
        for metric in order {
            guard let (higherIsBetter, floor) = info[metric] else { continue }
            // A figure missing from a run (a stage that did not run) counts as 0 there.
            let b = padded(baseValues[metric] ?? [], to: base.count)
            let n = padded(newValues[metric] ?? [], to: new.count)
            let baseMean = mean(b), newMean = mean(n)
            let delta = newMean - baseMean
            let percent: Double? = baseMean != 0 ? delta / abs(baseMean) * 100 : nil
            let p: Double? = (b.count >= 2 && n.count >= 2) ? welchTTest(b, n) : nil
            let worse = higherIsBetter ? delta < 0 : delta > 0
            let beyondThreshold = abs(delta) > floor && (percent.map { abs($0) > thresholdPercent } ?? true)
            let significant = p.map { $0 < alpha } ?? true
            let verdict = beyondThreshold && significant ? (worse ? "regression" : "improvement") : "unchanged"
            changes.append(FigureChange(metric: metric, baseValues: b, newValues: n, baseMean: baseMean, newMean: newMean,
                                        changePercent: percent, higherIsBetter: higherIsBetter, pValue: p, verdict: verdict))
        }
        return Comparison(thresholdPercent: thresholdPercent, alpha: alpha, baseRuns: base.count, newRuns: new.count, changes: changes)
    }

    private static func padded(_ values: [Double], to count: Int) -> [Double] {
        values.count >= count ? values : values + Array(repeating: 0, count: count - values.count)
    }

    static func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }

    static func variance(_ values: [Double]) -> Double {
        guard values.count >= 2 else { return 0 }
        let m = mean(values)
        return values.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(values.count - 1)
    }

    /// Two-sided p-value of Welch's unequal-variances t-test.
    public static func welchTTest(_ a: [Double], _ b: [Double]) -> Double {
        let na = Double(a.count), nb = Double(b.count)
        let va = variance(a) / na, vb = variance(b) / nb
        let difference = mean(a) - mean(b)
        guard va + vb > 0 else { return difference == 0 ? 1 : 0 }
        let t = difference / (va + vb).squareRoot()
        let df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1))
        // P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2)
        return regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5)
    }

    /// Two-sided p-value of Student's t-test with pooled variance: both samples are taken to share one
    /// spread, so a short sample's chance low spread does not make a small difference look certain
    /// (what change-point detection needs: its candidate segments are picked for looking uniform).
    public static func pooledTTest(_ a: [Double], _ b: [Double]) -> Double {
        pooledTTest(countA: Double(a.count), meanA: mean(a), varianceA: variance(a),
                    countB: Double(b.count), meanB: mean(b), varianceB: variance(b))
    }

    /// The same from each sample's count, mean and (n - 1) variance.
    public static func pooledTTest(countA na: Double, meanA: Double, varianceA: Double,
                                   countB nb: Double, meanB: Double, varianceB: Double) -> Double {
        guard na + nb > 2 else { return 1 }
        let pooled = (varianceA * max(na - 1, 0) + varianceB * max(nb - 1, 0)) / (na + nb - 2)
        let difference = meanA - meanB
        let standardError = (pooled * (1 / na + 1 / nb)).squareRoot()
        guard standardError > 0 else { return difference == 0 ? 1 : 0 }
        let t = difference / standardError, df = na + nb - 2
        return regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5)
    }

    /// I_x(a, b) by Lentz's continued fraction (Numerical Recipes' betacf).
    static func regularizedIncompleteBeta(_ x: Double, _ a: Double, _ b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let logGammas: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let logPowers: Double = a * log(x) + b * log(1 - x)
        let logFront = logGammas + logPowers
        if x > (a + 1) / (a + b + 2) { return 1 - regularizedIncompleteBeta(1 - x, b, a) }
        let tiny = 1e-300
        var c = 1.0, d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...300 {
            let m = Double(m), m2 = 2 * m
            var aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2))
            d = 1 + aa * d; if abs(d) < tiny { d = tiny }
            c = 1 + aa / c; if abs(c) < tiny { c = tiny }
            d = 1 / d; h *= d * c
            aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))
            d = 1 + aa * d; if abs(d) < tiny { d = tiny }
            c = 1 + aa / c; if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-12 { break }
        }
        return exp(logFront) * h / a
    }
}
