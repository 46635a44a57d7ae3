/// What a report says first (docs/METRICS.md "Headline"): the recorded verdict, the cause that took
/// the most hitch time, the heaviest offender of each kind with its share of all hitch time, and the
/// widest invalidation. Every part is read from figures the passes already made; nothing new is
/// measured here.
public struct Headline: Codable, Sendable, Equatable {
    /// The `hitches` key of the figures judged ("120"); "recorded" when the trace mixes rates.
    public var rateKey = ""
    /// The recorded hitch time ratio and its grade on Apple's test scale.
    public var hitchTimeRatioMsPerS = 0.0
    public var grade: HitchGrade = .ungraded
    /// The cause with the most hitch time (ties: the order of `HitchCause`), with its own ratio and its
    /// share of all hitch time; nil without hitches.
    public var leadingCause: HitchCause? = nil
    public var leadingCauseMsPerS = 0.0, leadingCauseShare = 0.0
    /// The heaviest stage, view, function and app thread among `offenders`, each with its share of all
    /// recorded hitch time (`weightedHitchMs` / `recorded.totalHitchMs`).
    public var offenders: [HeadlineOffender] = []
    /// The invalidation edge with the most invalidations from the widest source
    /// (`invalidationSources.first`); nil without invalidations.
    public var widestInvalidation: InvalidationEdge? = nil
    public init() {}
}

public struct HeadlineOffender: Codable, Sendable, Equatable {
    public var kind: OffenderKind = .stage
    public var name = ""
    public var weightedHitchMs = 0.0
    /// `weightedHitchMs` / all recorded hitch ms (0–1).
    public var shareOfHitchTime = 0.0
    /// For a stage: its share of its time spent on the main thread (`StageFigures.onMainThreadFraction`).
    public var onMainThreadFraction: Double? = nil
    public init() {}
}

extension Headline {
    /// The headline of an analysis whose passes have contributed their figures; nil without frames.
    init?(of analysis: Analysis) {
        guard analysis.recorded.frameCount > 0 else { return nil }
        let recorded = analysis.recordedRates.count == 1
            ? analysis.hitches.first(where: { $0.value.source == .recorded }) : nil
        let figures = recorded?.value ?? analysis.recorded
        rateKey = recorded?.key ?? "recorded"
        hitchTimeRatioMsPerS = figures.hitchTimeRatioMsPerS
        grade = figures.appleTestScale.grade
        if figures.totalHitchMs > 0 {
            let causes = HitchCause.allCases.map { ($0, figures.byCause[$0]) }.filter { $0.1.totalHitchMs > 0 }
            if let leading = causes.max(by: { $0.1.totalHitchMs < $1.1.totalHitchMs }) {
                leadingCause = leading.0
                leadingCauseMsPerS = leading.1.hitchTimeRatioMsPerS
                leadingCauseShare = leading.1.totalHitchMs / figures.totalHitchMs
            }
            let stagesByName = Dictionary(analysis.stages.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for kind in OffenderKind.allCases {
                guard let top = analysis.offenders.first(where: { $0.kind == kind }) else { continue }
                var offender = HeadlineOffender()
                offender.kind = kind
                offender.name = top.name
                offender.weightedHitchMs = top.weightedHitchMs
                offender.shareOfHitchTime = min(1, top.weightedHitchMs / figures.totalHitchMs)
                if kind == .stage { offender.onMainThreadFraction = stagesByName[top.name]?.onMainThreadFraction }
                offenders.append(offender)
            }
            offenders.sort { $0.weightedHitchMs > $1.weightedHitchMs }
        }
        if let widest = analysis.invalidationSources.first {
            widestInvalidation = analysis.invalidations.first { $0.source == widest.source }
        }
    }
}
