/// The additive state behind `HangFigures` (docs/FLEET.md "Merging"): per tier the count, total and
/// longest stretch in integer nanoseconds, the recording time the rates divide by, and the longest
/// stretches with the trace each is in. The rates are derived, so the merge of two is the figures of
/// both as runs of one analysis: hang time summed over recording time summed.
struct HangTotals: Codable, Sendable, Equatable {
    /// The longest stretches a summary keeps, over both tiers.
    static let worstLimit = 100

    struct Tier: Codable, Sendable, Equatable {
        var count = 0, totalNs: Int64 = 0, longestNs: Int64 = 0
        mutating func add(_ ns: Int64) { count += 1; totalNs +|= ns; longestNs = max(longestNs, ns) }
        mutating func merge(_ other: Tier) { count +|= other.count; totalNs +|= other.totalNs; longestNs = max(longestNs, other.longestNs) }

        func figures(recordedNs: Int64) -> HangTierFigures {
            var f = HangTierFigures()
            f.count = count; f.totalMs = milliseconds(totalNs); f.longestMs = milliseconds(longestNs)
            f.rateSecondsPerHour = recordedNs > 0 ? Double(totalNs) / 1e9 / (Double(recordedNs) / 3.6e12) : 0
            return f
        }
    }

    /// The thresholds the stretches were judged by: totals judged by others do not merge.
    var hangThresholdNs: Int64
    var briefThresholdNs: Int64
    var recordedNs: Int64 = 0
    /// Some run had a main-thread frame loop or hang events: without one, nothing says whether the
    /// main thread hung, and there are no hang figures (the recording time still counts).
    var observed = false
    var hangs = Tier(), briefs = Tier()
    var watchdogThresholdMs: Double? = nil
    /// The longest stretches (of those a trace lists, `HangDetail.limit`), each with its trace.
    var worst: [HangDetail] = []
    /// Hang events that name a type, per producer and type, as written (`HangFigures.byType`), in
    /// (source, type) order; nil when no hang named one.
    var byType: [TypeTotals]? = nil
    /// The (source, type) pairs kept: a hostile trace's every hang may name its own.
    static let typeLimit = 256

    struct TypeTotals: Codable, Sendable, Equatable {
        var source: String, type: String
        var tier: Tier
        var key: TypeKey { TypeKey(source: source, type: type) }
    }
    struct TypeKey: Hashable { var source: String, type: String }

    init(hangThresholdNs: Int64, briefThresholdNs: Int64) {
        self.hangThresholdNs = hangThresholdNs
        self.briefThresholdNs = briefThresholdNs
    }

    /// Keeps the longest of `details`.
    mutating func keepWorst(_ details: [HangDetail]) {
        worst = Array((worst + details).sorted(by: Self.isLonger).prefix(Self.worstLimit))
    }

    /// Longer first; between equals, by trace, run and start (a total order, so merging in any order agrees).
    static func isLonger(_ a: HangDetail, _ b: HangDetail) -> Bool {
        if a.durationMs != b.durationMs { return a.durationMs > b.durationMs }
        return (a.trace ?? "", a.run, a.startMs, a.thread) < (b.trace ?? "", b.run, b.startMs, b.thread)
    }

    mutating func merge(_ other: HangTotals) {
        recordedNs +|= other.recordedNs
        observed = observed || other.observed
        hangs.merge(other.hangs)
        briefs.merge(other.briefs)
        // The smallest watchdog threshold among the traces that had one (any merge order agrees).
        if let theirs = other.watchdogThresholdMs { watchdogThresholdMs = min(watchdogThresholdMs ?? theirs, theirs) }
        keepWorst(other.worst)
        if let theirs = other.byType { mergeTypes(theirs) }
    }

    /// Adds per-type totals; the result is in (source, type) order and keeps the first `typeLimit`
    /// pairs of that order (a pair dropped in a partial merge ranks past the limit in every larger
    /// one, so any merge order agrees).
    mutating func mergeTypes(_ types: [TypeTotals]) {
        var merged = Dictionary(uniqueKeysWithValues: (byType ?? []).map { ($0.key, $0) })
        for t in types { merged[t.key, default: TypeTotals(source: t.source, type: t.type, tier: Tier())].tier.merge(t.tier) }
        let sorted = merged.values.sorted { ($0.source, $0.type) < ($1.source, $1.type) }
        byType = sorted.isEmpty ? nil : Array(sorted.prefix(Self.typeLimit))
    }

    /// The figures of every stretch merged, nil when nothing was observed; the list is the longest
    /// stretches, longest first.
    var figures: HangFigures? {
        guard observed else { return nil }
        var f = HangFigures()
        f.hangThresholdMs = milliseconds(hangThresholdNs)
        f.briefThresholdMs = milliseconds(briefThresholdNs)
        f.recordedSeconds = Double(recordedNs) / 1e9
        let tier = hangs.figures(recordedNs: recordedNs)
        f.count = tier.count; f.totalMs = tier.totalMs; f.longestMs = tier.longestMs; f.rateSecondsPerHour = tier.rateSecondsPerHour
        f.brief = briefs.figures(recordedNs: recordedNs)
        f.watchdogThresholdMs = watchdogThresholdMs
        f.list = worst
        f.listTruncated = hangs.count + briefs.count > worst.count
        f.byType = byType.map { types in
            types.map { HangTypeFigures(source: $0.source, type: $0.type, count: $0.tier.count,
                                        totalMs: milliseconds($0.tier.totalNs), longestMs: milliseconds($0.tier.longestNs)) }
                .sorted { ($0.source, -$0.totalMs, $0.type) < ($1.source, -$1.totalMs, $1.type) }
        }
        return f
    }
}
