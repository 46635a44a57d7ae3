import HitchReader

/// Token delivery: produced vs delivered vs shown vs dropped, and token-to-screen latency.
/// Joined by token index, not by file order: the producing (inference) thread's buffer and the
/// showing (main) thread's buffer reach the file in either order, so a token's `shown` may come
/// before its `produced`.
struct TokenDeliveryPass: Sendable {
    private struct Pending: Sendable {
        var producedNs: Int64 = .min
        var shownNs: Int64 = .min
        var dropped = false
    }
    /// Tokens seen at one end only (bounded; beyond the limit, a token's later events are not joined).
    private var pending: [Int64: Pending] = [:]
    /// The counts by stage, and the tokens lost, as the figures carry them (their latencies are filled at the end).
    private var counts = TokenFigures()
    private var latency = QuantileSketch()
    private(set) var sawTokens = false

    mutating func token(_ token: TokenEvent, atNs: Int64) {
        sawTokens = true
        switch token.stage {
        case .produced:
            counts.produced += 1
            update(token.index) { $0.producedNs = $0.producedNs == .min ? atNs : min($0.producedNs, atNs) }
        case .delivered:
            counts.delivered += 1
        case .shown:
            counts.shown += 1
            update(token.index) { $0.shownNs = $0.shownNs == .min ? atNs : min($0.shownNs, atNs) }
        case .dropped:
            counts.dropped += 1
            update(token.index) { $0.dropped = true }
        }
    }

    /// Applies `change` to a token's entry; once it was produced and then shown or dropped, it is settled.
    private mutating func update(_ index: Int64, _ change: (inout Pending) -> Void) {
        guard pending[index] != nil || pending.count < DecodeBandwidthPass.tokenLimit else { return }
        var entry = pending[index] ?? Pending()
        change(&entry)
        guard entry.producedNs != .min, entry.shownNs != .min || entry.dropped else { pending[index] = entry; return }
        if entry.shownNs != .min { latency.add(max(0, entry.shownNs.subtractingSaturated(entry.producedNs))) }
        pending.removeValue(forKey: index)
    }

    /// Tokens produced in this run and never shown nor dropped are lost.
    mutating func endRun() {
        for entry in pending.values where entry.producedNs != .min { counts.lost += 1 }
        pending.removeAll()
    }
    func figures(periodNs: Int64) -> TokenFigures? {
        guard sawTokens else { return nil }
        var t = counts
        t.tokenToScreenMs = latency.percentilesMs()
        t.tokenToScreenP95Frames = periodNs > 0 ? t.tokenToScreenMs.p95 * 1e6 / Double(periodNs) : 0
        return t
    }
}

extension TokenDeliveryPass: AnalysisPass {
    static var reads: PayloadKinds { .token }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        if case .token(let token) = event.payload { self.token(token, atNs: resolved.startNs) }
    }

    mutating func endRun(_ context: inout PassContext) { endRun() }

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        let dominantPeriodMs = a.recordedRates.first.map { 1000 / $0.rateHz } ?? 0
        a.tokens = figures(periodNs: Int64(clampingDouble: dominantPeriodMs * 1e6))
    }
}
