import Dispatch
import Foundation
import HitchAnalysis

// `hitch history check`: change points over each metric's series along a branch, and a verdict on
// the newest one. A regression is a change for the worse beyond the relative threshold and beyond
// the metric's absolute floor (the same floors `hitch diff` uses).

/// One change point, named by the runs either side of it.
public struct ChangePointReport: Sendable, Equatable, Codable {
    /// Position of the first run at the new level, in the checked runs (oldest = 0).
    public var runIndex: Int
    /// The first run at the new level.
    public var runID: String
    /// The commit range that holds the cause: the last run before the change .. the first after.
    public var lastGoodCommit: String
    public var firstChangedCommit: String
    public var meanBefore: Double
    public var meanAfter: Double
    public var changePercent: Double?
    public var pValue: Double
    /// "regression", "improvement" or "unchanged" (a change below the threshold or the floor).
    public var verdict: String
    public var commitRange: String { "\(Self.short(lastGoodCommit))..\(Self.short(firstChangedCommit))" }
    static func short(_ commit: String) -> String { commit.count > 12 && commit.allSatisfy(\.isHexDigit) ? String(commit.prefix(12)) : commit }
}

public struct MetricCheck: Sendable, Equatable, Codable {
    public var metric: String
    public var higherIsBetter: Bool
    /// Runs with a value for this metric.
    public var points: Int
    public var changePoints: [ChangePointReport]
    /// The verdict of the newest change point beyond the threshold and floor ("regression" or
    /// "improvement"), or "unchanged" when there is none.
    public var verdict: String
    /// That change point (smaller significant shifts after it do not hide it).
    public var newest: ChangePointReport? { changePoints.last { $0.verdict != "unchanged" } }
}

/// One metric's change point, as part of a change in the code.
public struct MetricChange: Sendable, Equatable, Codable {
    public var metric: String
    public var changePoint: ChangePointReport
}

/// Every metric's change point at one commit range: one change in the code, told once. The metrics
/// that moved together are its evidence; the leading one says what changed.
public struct HistoryChange: Sendable, Equatable, Codable {
    public var lastGoodCommit: String
    public var firstChangedCommit: String
    /// The first run at the new level (oldest = 0).
    public var runIndex: Int
    /// "regression" when any metric regressed here, else "improvement" when any improved, else
    /// "unchanged" (every shift below the threshold or the floor).
    public var verdict: String
    /// Every metric's change point at this range, the leading one first: among those whose verdict is
    /// the change's, the hitch time ratios first (`FigureGroup`), then the largest relative change.
    public var metrics: [MetricChange]
    public var leading: MetricChange { metrics[0] }
    public var regressions: Int { metrics.filter { $0.changePoint.verdict == "regression" }.count }
    public var improvements: Int { metrics.filter { $0.changePoint.verdict == "improvement" }.count }
    public var commitRange: String { leading.changePoint.commitRange }
}

public struct HistoryCheckResult: Sendable, Equatable, Codable {
    public var branch: String
    public var runs: Int
    public var thresholdPercent: Double
    public var maxPValue: Double
    /// The fewest runs in which a change point can be found (`ChangePointOptions.pointsNeeded`);
    /// a change among the newest `runsNeeded / 2 - 1` runs shows once enough runs follow it.
    public var runsNeeded: Int
    public var metrics: [MetricCheck]
    /// Fewer runs than `runsNeeded`: nothing could be judged.
    public var tooFewRuns: Bool { runs < runsNeeded }
    /// Metrics whose newest change point is a regression.
    public var regressions: [MetricCheck] { metrics.filter { $0.verdict == "regression" } }
    /// Every change point, grouped by commit range, oldest first.
    public var changes: [HistoryChange]
    /// The changes that hold a metric's newest regression: what fails the check.
    public var failingChanges: [HistoryChange] {
        let failing = Set(regressions.compactMap { $0.newest?.runIndex })
        return changes.filter { failing.contains($0.runIndex) }
    }
}

public enum HistoryCheck {
    public static func check(_ history: HistorySeries, branch: String, thresholdPercent: Double,
                             options: ChangePointOptions = ChangePointOptions()) -> HistoryCheckResult {
        // Metrics are independent: detect on every core (a 100,000-run branch costs ~25 ms each).
        // NSLock rather than Synchronization.Mutex: ThreadSanitizer sees its pthread mutex (docs/RELIABILITY.md F8).
        let lock = NSLock()
        // nonisolated(unsafe): every access is under `lock`, and all are done when concurrentPerform returns.
        nonisolated(unsafe) var results = [MetricCheck?](repeating: nil, count: history.metrics.count)
        DispatchQueue.concurrentPerform(iterations: history.metrics.count) { index in
            let result = check(history.metrics[index], runs: history.runs, thresholdPercent: thresholdPercent, options: options)
            lock.withLock { results[index] = result }
        }
        let metrics = results.compactMap { $0 }
        return HistoryCheckResult(branch: branch, runs: history.runs.count, thresholdPercent: thresholdPercent,
                                  maxPValue: options.maxPValue(forPoints: history.runs.count), runsNeeded: options.pointsNeeded, metrics: metrics,
                                  changes: changes(metrics, recordedRateHz: history.runs.last?.machine.refreshHz ?? 0))
    }

    /// The change points of every metric grouped by where they are (the first run at the new level and
    /// its commit range), oldest first, each led by the figure that tells it best: the group's way
    /// first, then by `FigureGroup` (hitch time ratios lead), the recorded rate's hitch time ratio
    /// and then its app share before other rates', then the largest relative change.
    static func changes(_ metrics: [MetricCheck], recordedRateHz: Double) -> [HistoryChange] {
        func preference(_ metric: String) -> Int { leadPreference(metric, recordedRateHz: recordedRateHz) }
        var groups: [Int: [MetricChange]] = [:]
        for metric in metrics {
            for point in metric.changePoints { groups[point.runIndex, default: []].append(MetricChange(metric: metric.metric, changePoint: point)) }
        }
        return groups.keys.sorted().map { runIndex in
            let members = groups[runIndex] ?? []
            let verdict = members.contains { $0.changePoint.verdict == "regression" } ? "regression"
                : members.contains { $0.changePoint.verdict == "improvement" } ? "improvement" : "unchanged"
            let ranked = members.sorted { a, b in
                func key(_ m: MetricChange) -> (Int, Int, Int, Double, String) {
                    (m.changePoint.verdict == verdict ? 0 : 1, FigureGroup(metric: m.metric).rawValue, preference(m.metric),
                     -(m.changePoint.changePercent.map(abs) ?? .infinity), m.metric)
                }
                return key(a) < key(b)
            }
            let first = ranked[0].changePoint
            return HistoryChange(lastGoodCommit: first.lastGoodCommit, firstChangedCommit: first.firstChangedCommit,
                                 runIndex: runIndex, verdict: verdict, metrics: ranked)
        }
    }

    /// How well a metric tells a change, among figures of one `FigureGroup`: the recorded rate's hitch
    /// time ratio (0), then its app share (1), then the rest (2). The trend page orders its charts so too.
    public static func leadPreference(_ metric: String, recordedRateHz: Double) -> Int {
        let recorded = "hitches.\(Analyzer.rateKey(recordedRateHz))."
        return metric == recorded + "hitchTimeRatioMsPerS" ? 0 : metric == recorded + "appHitchTimeRatioMsPerS" ? 1 : 2
    }

    static func check(_ series: MetricSeries, runs: [RunRecord], thresholdPercent: Double, options: ChangePointOptions) -> MetricCheck {
        // Runs without the figure are skipped; positions map back to runs.
        var values: [Double] = [], positions: [Int] = []
        values.reserveCapacity(series.values.count)
        for (index, value) in series.values.enumerated() { if let value { values.append(value); positions.append(index) } }
        let points = ChangePointDetector.changePoints(in: values, options: options)
        let reports = points.map { point -> ChangePointReport in
            let after = positions[point.index], before = positions[point.index - 1]
            let delta = point.meanAfter - point.meanBefore
            let worse = series.higherIsBetter ? delta < 0 : delta > 0
            let beyond = abs(delta) > series.absoluteFloor && (point.changePercent.map { abs($0) > thresholdPercent } ?? true)
            return ChangePointReport(runIndex: after, runID: runs[after].id, lastGoodCommit: runs[before].commit,
                                     firstChangedCommit: runs[after].commit, meanBefore: point.meanBefore,
                                     meanAfter: point.meanAfter, changePercent: point.changePercent, pValue: point.pValue,
                                     verdict: beyond ? (worse ? "regression" : "improvement") : "unchanged")
        }
        return MetricCheck(metric: series.metric, higherIsBetter: series.higherIsBetter, points: values.count,
                           changePoints: reports, verdict: reports.last { $0.verdict != "unchanged" }?.verdict ?? "unchanged")
    }
}
