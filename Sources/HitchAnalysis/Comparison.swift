import Foundation

// `hitch diff` and the HTML comparison: figure-by-figure change between two sides (one or more runs
// each), and one verdict for the whole comparison (docs/METRICS.md "Comparing runs").
//
// - Figures are compared per frame or per second where a total would grow with the run's length
//   (a run that delivers more frames does more rendering in all).
// - Only hitch figures and main-thread figures are *judged*: they are what a user sees. The rest
//   (off-main stages, self times, decode, tokens) are *informational*: shown, never a regression.
// - Of the judged figures, the hitch time ratio and the app's share of it are *primary*: when one
//   moved, the primary figures decide the verdict and the other judged figures that moved the other
//   way are named as its caveats; the other judged figures decide only when no primary one moved.
// - A figure only one side has is reported apart; its effect on the user shows in the judged figures.
// - A change counts when it is beyond the threshold percent and a small absolute floor per figure,
//   and, with two or more runs a side, significant by Welch's t-test.

/// What a compared figure's change means for the comparison's verdict.
public enum FigureRole: String, Codable, Sendable {
    /// A hitch or main-thread figure: a worse value beyond threshold and noise is a regression.
    case judged
    /// Shown for context; never a regression or an improvement.
    case informational
}

/// Which sides have the figure.
public enum FigurePresence: String, Codable, Sendable {
    case both, onlyInBase, onlyInNew
}

/// How a figure is normalized before comparing.
public enum FigureScale: String, Codable, Sendable {
    /// As the analysis states it (a ratio, a percentile, a maximum).
    case asIs
    /// Divided by the run's recorded frames.
    case perFrame
    /// Divided by the run's animating seconds.
    case perSecond
}

/// The direction of a change beyond threshold and noise.
public enum ChangeDirection: String, Codable, Sendable {
    case worse, better, unchanged
}

/// The unit of a compared figure; its raw value is how reports and the JSON spell it.
public enum FigureUnit: String, Codable, Sendable {
    case msPerS = "ms/s"
    case perSecond = "per s"
    case ms
    case percentOfFrames = "% of frames"
    case frames
    case msPerFrame = "ms per frame"
    case perFrame = "per frame"
    case tokensPerSecond = "tok/s"
    case bytes = "B"
    case gigabytesPerSecond = "GB/s"
    case fraction
    case tokens
    case events
    case secondsPerHour = "s/h"
}

/// One compared figure.
public struct FigureChange: Codable, Sendable, Equatable {
    /// The metric path of the figure compared (the names budgets use), before normalization.
    public var metric: String
    /// What the figure is, in words: "hitch time ratio at 120 Hz", "stage 'filter' on the main thread".
    public var label: String
    /// The unit of the compared values.
    public var unit: FigureUnit
    public var scale: FigureScale
    public var role: FigureRole
    public var presence: FigurePresence
    /// One value per run, normalized by `scale`.
    public var baseValues, newValues: [Double]
    public var baseMean, newMean: Double
    /// (new - base) / |base| in percent; nil when base is 0.
    public var changePercent: Double?
    /// True when a larger value is better (tokens per second).
    public var higherIsBetter: Bool
    /// Two-sided p-value of Welch's t-test; nil with fewer than two runs on a side.
    public var pValue: Double?
    /// Worse or better beyond threshold, floor and noise; unchanged otherwise (and for figures one side lacks).
    public var direction: ChangeDirection
    /// A hitch time ratio or the app's share of one: a judged figure that decides the verdict when it moved.
    public var primary: Bool

    /// A judged figure both sides have that got worse: what fails CI.
    public var isRegression: Bool { role == .judged && presence == .both && direction == .worse }
    public var isImprovement: Bool { role == .judged && presence == .both && direction == .better }
}

/// The comparison's one answer, computed here and only rendered elsewhere.
public enum ComparisonOutcome: String, Codable, Sendable {
    /// A primary figure regressed; or, when none moved, another judged figure regressed.
    case worse
    /// A primary figure improved and none regressed; or, when none moved, a judged figure improved and none regressed.
    case better
    /// No judged figure changed beyond threshold and noise.
    case unchanged
    /// No verdict: a side is an import whose frames Hitch and the recording platform judge too
    /// differently to trust (`PlatformAgreement.trusted`); the figures are shown, not judged.
    case notJudged
}

/// Which figures decided a comparison's outcome.
public enum VerdictBasis: String, Codable, Sendable {
    /// A hitch time ratio or the app's share of one moved.
    case hitchTimeRatio
    /// No primary figure moved; the other judged figures (hitch counts, frame times, main-thread work) decided.
    case otherJudgedFigures
    /// No judged figure moved.
    case none
}

public struct ComparisonVerdict: Codable, Sendable, Equatable {
    public var outcome: ComparisonOutcome
    public var basis: VerdictBasis
    /// The judged changes that decided the outcome, most telling first (hitch time ratios lead).
    public var headline: [FigureChange]
    /// How many judged changes decided the outcome (the headline shows the first few).
    public var decidingCount: Int
    /// Judged figures that moved against the outcome ("better, though hitches per second rose"), largest first.
    public var caveats: [FigureChange]
    public var regressionCount, improvementCount: Int
    /// Why there is no verdict (`ComparisonOutcome.notJudged`); nil otherwise.
    public var notJudgedBecause: String? = nil
    /// How many headline figures a one-line rendering shows.
    public static let headlineLimit = 3
}

public struct Comparison: Codable, Sendable, Equatable {
    public var thresholdPercent: Double
    public var alpha: Double
    public var baseRuns: Int
    public var newRuns: Int
    public var verdict: ComparisonVerdict
    public var changes: [FigureChange]
    public var regressions: [FigureChange] { changes.filter(\.isRegression) }
    public var improvements: [FigureChange] { changes.filter(\.isImprovement) }
    /// Every judged change that decided the verdict (the headline shows the first few).
    public var decidingChanges: [FigureChange] {
        let sameWay = verdict.outcome == .worse ? regressions : verdict.outcome == .better ? improvements : []
        return verdict.basis == .hitchTimeRatio ? sameWay.filter(\.primary) : sameWay
    }
    /// Informational figures that moved beyond threshold and noise.
    public var informationalChanges: [FigureChange] {
        changes.filter { $0.role == .informational && $0.presence == .both && $0.direction != .unchanged }
    }
    public var onlyInBase: [FigureChange] { changes.filter { $0.presence == .onlyInBase } }
    public var onlyInNew: [FigureChange] { changes.filter { $0.presence == .onlyInNew } }
    /// Both sides have them, and they did not move beyond threshold and noise.
    public var unchanged: [FigureChange] { changes.filter { $0.presence == .both && $0.direction == .unchanged } }
    /// True when the comparison used Welch's t-test (two or more runs on each side).
    public var usesSignificanceTest: Bool { baseRuns >= 2 && newRuns >= 2 }
}

public enum RunComparison {
    /// The smallest relative change that counts, in percent, unless a command is told otherwise.
    public static let defaultThresholdPercent = 5.0

    /// Compares figure by figure and decides the verdict. `base` and `new` hold one analysis per run.
    /// A run whose figures are not to be trusted (an import Hitch and its platform disagree on,
    /// `PlatformAgreement.trusted`) leaves the comparison without a verdict unless
    /// `acceptingPlatformDisagreement`.
    public static func compare(base: [Analysis], new: [Analysis], thresholdPercent: Double, alpha: Double = 0.05,
                               acceptingPlatformDisagreement: Bool = false) -> Comparison {
        var order: [String] = []
        var info: [String: ComparedFigure] = [:]
        var baseValues: [String: [Double]] = [:], newValues: [String: [Double]] = [:]
        func collect(_ analyses: [Analysis], into values: inout [String: [Double]]) {
            for analysis in analyses {
                for figure in analysis.comparedFigures() {
                    if info[figure.metric] == nil { order.append(figure.metric); info[figure.metric] = figure }
                    values[figure.metric, default: []].append(figure.value)
                }
            }
        }
        collect(base, into: &baseValues)
        collect(new, into: &newValues)
        var changes: [FigureChange] = []
        for metric in order {
            guard let figure = info[metric] else { continue }
            let presence: FigurePresence = baseValues[metric] == nil ? .onlyInNew : newValues[metric] == nil ? .onlyInBase : .both
            // A figure missing from some runs of a side (a stage that did not run) counts as 0 there.
            let b = padded(baseValues[metric] ?? [], to: base.count)
            let n = padded(newValues[metric] ?? [], to: new.count)
            let baseMean = mean(b), newMean = mean(n)
            let delta = newMean - baseMean
            let percent: Double? = baseMean != 0 ? delta / abs(baseMean) * 100 : nil
            let p: Double? = (b.count >= 2 && n.count >= 2) ? welchTTest(b, n) : nil
            // The threshold applies to every figure: a change from 0 is an infinite relative change.
            let relative = percent.map(abs) ?? (delta == 0 ? 0 : .infinity)
            let beyond = abs(delta) > figure.absoluteFloor && relative > thresholdPercent && (p.map { $0 < alpha } ?? true)
            let worse = figure.higherIsBetter ? delta < 0 : delta > 0
            let direction: ChangeDirection = presence == .both && beyond ? (worse ? .worse : .better) : .unchanged
            changes.append(FigureChange(metric: metric, label: figure.label, unit: figure.unit, scale: figure.scale, role: figure.role,
                                        presence: presence, baseValues: b, newValues: n, baseMean: baseMean, newMean: newMean,
                                        changePercent: percent, higherIsBetter: figure.higherIsBetter, pValue: p, direction: direction,
                                        primary: figure.primary && figure.role == .judged))
        }
        var decided = verdict(changes)
        if !acceptingPlatformDisagreement {
            let sides = [("base", base), ("new", new)].compactMap { side, analyses in
                analyses.lazy.compactMap { $0.platformAgreement?.distrust }.first.map { "the \(side) run: \($0)" }
            }
            if !sides.isEmpty {
                decided.outcome = .notJudged
                decided.basis = .none
                decided.notJudgedBecause = sides.joined(separator: "; ")
            }
        }
        return Comparison(thresholdPercent: thresholdPercent, alpha: alpha, baseRuns: base.count, newRuns: new.count,
                          verdict: decided, changes: changes)
    }

    /// The hitch time ratio (and the app's share of it) is what Apple's scales grade and what a user
    /// sees; figures beside it can move the other way for a good reason (a faster app renders more
    /// frames, so it can hitch more often for less time in all). So: when a primary figure moved,
    /// worse if one regressed, better if one improved and none regressed; when none moved, the other
    /// judged figures decide the same way. Judged figures that moved against the outcome are caveats.
    static func verdict(_ changes: [FigureChange]) -> ComparisonVerdict {
        let regressions = changes.filter(\.isRegression), improvements = changes.filter(\.isImprovement)
        let primaryMoved = (regressions + improvements).contains(where: \.primary)
        let basis: VerdictBasis = primaryMoved ? .hitchTimeRatio : regressions.isEmpty && improvements.isEmpty ? .none : .otherJudgedFigures
        let candidates = primaryMoved ? (regressions.filter(\.primary), improvements.filter(\.primary)) : (regressions, improvements)
        let outcome: ComparisonOutcome = !candidates.0.isEmpty ? .worse : !candidates.1.isEmpty ? .better : .unchanged
        let deciding = outcome == .worse ? candidates.0 : candidates.1
        let against = outcome == .worse ? improvements : outcome == .better ? regressions : []
        let ranked = rankedForVerdict(deciding)
        return ComparisonVerdict(outcome: outcome, basis: basis, headline: Array(ranked.prefix(ComparisonVerdict.headlineLimit)),
                                 decidingCount: deciding.count, caveats: rankedForVerdict(against),
                                 regressionCount: regressions.count, improvementCount: improvements.count)
    }

    /// Primary figures first, then the largest relative changes.
    private static func rankedForVerdict(_ changes: [FigureChange]) -> [FigureChange] {
        changes.enumerated().sorted { a, b in
            if a.element.primary != b.element.primary { return a.element.primary }
            if a.element.primary {
                // The whole ratio before the app's share, then the highest refresh rate first.
                let appA = a.element.metric.hasSuffix(".appHitchTimeRatioMsPerS"), appB = b.element.metric.hasSuffix(".appHitchTimeRatioMsPerS")
                return appA != appB ? appB : a.offset > b.offset
            }
            let sizeA = abs(a.element.changePercent ?? .infinity), sizeB = abs(b.element.changePercent ?? .infinity)
            return sizeA != sizeB ? sizeA > sizeB : a.offset < b.offset
        }.map(\.element)
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
