/// The mergeable state of an analysis: what a trace's summary and a fleet's keep, and what a fleet's
/// `Analysis` is derived from (`contribute`). The passes fill their parts as they contribute their
/// figures (`PassContext.mergeable`), from the same totals their figures come from.
struct FigureTotals: Codable, Sendable, Equatable {
    var runs = 0
    /// Runs cut short (docs/METRICS.md "Evidence"), and runs whose trace promised no end-of-recording marker.
    var runsCutShort = 0
    var runsWithoutEndMarker = 0
    var eventCount: UInt64 = 0
    var droppedEvents: UInt64 = 0
    /// Hitch figures: recorded frames and each judged rate.
    var hitches = RateTotals()
    /// Every offender, one per kind and name, sorted by them.
    var offenders: [OffenderTotals] = []
    /// Nil without inference ops.
    var decode: DecodeTotals? = nil
    /// Nil in a version 1 summary (summary version 2 on).
    var hangs: HangTotals? = nil

    mutating func merge(_ other: FigureTotals) {
        runs +|= other.runs
        runsCutShort +|= other.runsCutShort
        runsWithoutEndMarker +|= other.runsWithoutEndMarker
        eventCount &+= other.eventCount
        droppedEvents &+= other.droppedEvents
        hitches.merge(other.hitches)
        offenders = OffenderTotals.canonical(offenders + other.offenders)
        if let theirs = other.decode {
            if decode == nil { decode = theirs } else { decode!.merge(theirs) }
        }
        if let theirs = other.hangs {
            if hangs == nil { hangs = theirs } else { hangs!.merge(theirs) }
        }
    }

    /// The figures of every run merged, as `hitch analyze` gives them for those runs: hitches at
    /// every rate, the heaviest offenders, decode, hangs (their list: the longest), counts and evidence. `metadata` is what every
    /// trace agrees on (decode reads its peaks from it).
    func contribute(to a: inout Analysis, metadata: [String: String], deviceBudgetBytes: UInt64) {
        a.metadata = metadata
        a.eventCount = eventCount
        a.droppedEvents = droppedEvents
        hitches.contribute(to: &a)
        a.offenders = Offender.ranked(offenders.map(\.figures))
        a.decode = decode?.figures(metadata: metadata, deviceBudgetBytes: deviceBudgetBytes)
        a.hangs = hangs?.figures ?? nil
        a.evidence = Evidence(of: a)
        a.evidence.runsCutShort = runsCutShort
        a.evidence.endedCleanly = runsCutShort == 0
        a.evidence.runsWithoutEndMarker = runsWithoutEndMarker
        a.headline = Headline(of: a)
    }
}
