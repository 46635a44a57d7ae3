/// A trace's (or a fleet's) hitch figures as mergeable totals: the recorded frames, how many were
/// recorded at each rate, and each judged rate's totals. `contribute` turns them into
/// `Analysis.recorded`, `recordedRates` and `hitches`, for one trace and for a fleet alike.
struct RateTotals: Codable, Sendable, Equatable {
    /// Every frame judged on its own recorded period.
    var recorded = HitchTotals(source: .recorded, rateHz: 0)
    /// Frames per recorded rate (Hz to 0.1, keyed by `Analyzer.rateKey`).
    var recordedRates: [String: Int] = [:]
    /// Each judged rate's totals, keyed as `Analysis.hitches`: the recorded frames when every frame
    /// was recorded at that rate, else the replay model's.
    var rates: [String: HitchTotals] = [:]

    /// Judges `recorded` and `replays` (one per `refreshRatesHz`) as `hitch analyze` does: a rate every
    /// frame was recorded at takes the recorded frames; the recorded rate is judged even when not asked for.
    init(recorded: HitchTotals, rateCounts: [Double: Int], refreshRatesHz: [Double], replays: (Int) -> HitchTotals) {
        self.recorded = recorded
        for (rate, count) in rateCounts { recordedRates[Analyzer.rateKey(rate), default: 0] += count }
        for (i, rate) in refreshRatesHz.enumerated() {
            let everyFrameAtRate = !rateCounts.isEmpty && rateCounts.keys.allSatisfy { abs($0 - rate) <= periodTolerance * rate }
            var totals = everyFrameAtRate ? recorded : replays(i)
            totals.rateHz = rate
            rates[Analyzer.rateKey(rate)] = totals
        }
        if rateCounts.count == 1, let recordedRate = rateCounts.keys.first,
           !refreshRatesHz.contains(where: { abs($0 - recordedRate) <= periodTolerance * recordedRate }) {
            var totals = recorded
            totals.rateHz = recordedRate
            rates[Analyzer.rateKey(recordedRate)] = totals
        }
    }

    init() {}

    /// Why these totals cannot be a trace's or a fleet's (a damaged file), or nil.
    var problem: String? {
        for (key, totals) in [("recorded", recorded)] + rates.sorted(by: { $0.key < $1.key }) {
            let counts = totals.frameTimeHistogram.counts
            guard counts.isEmpty || counts.count == FrameTimeHistogram.binCount else {
                return "the frame-time histogram at \(key) has \(counts.count) bins, not \(FrameTimeHistogram.binCount)"
            }
            guard counts.allSatisfy({ (0...Self.countLimit).contains($0) }) else {
                return "the frame-time histogram at \(key) has a count outside 0...2^53"
            }
        }
        return nil
    }

    /// The largest count a summary may hold (what a JSON number keeps exactly).
    static let countLimit = 1 << 53

    mutating func merge(_ other: RateTotals) {
        recorded.merge(other.recorded)
        for (rate, count) in other.recordedRates { recordedRates[rate, default: 0] +|= count }
        for (key, totals) in other.rates {
            if rates[key] == nil { rates[key] = totals } else { rates[key]!.merge(totals) }
        }
    }

    /// `a.recordedRates` (most frames first), `a.recorded` (on its one rate's period, or 0 when the
    /// frames mix rates) and `a.hitches`.
    func contribute(to a: inout Analysis) {
        a.recordedRates = recordedRates.compactMap { key, count in
            Double(key).map { rate in var r = RecordedRate(); r.rateHz = rate; r.frameCount = count; return r }
        }.sorted { ($0.frameCount, $1.rateHz) > ($1.frameCount, $0.rateHz) }
        let dominantPeriodMs = a.recordedRates.first.map { 1000 / $0.rateHz } ?? 0
        a.recorded = recorded.figures(periodMs: a.recordedRates.count == 1 ? dominantPeriodMs : 0)
        if a.recordedRates.count == 1 { a.recorded.rateHz = a.recordedRates[0].rateHz }
        for (key, totals) in rates where totals.rateHz > 0 {
            a.hitches[key] = totals.figures(periodMs: 1000 / totals.rateHz)
        }
    }
}
