import HitchReader
import HitchTrace

/// The platform's own hitches where a trace has no frames (`PlatformHitch` instants: the begin
/// named by its label, `janky: …` or `janky elsewhere: …` for a system hitch, then `end`), summed
/// into `Analysis.platformHitches` and, at the refresh rate the import states (metadata
/// `refreshRateHz`), `hitches.<rate>` with source `platform`: the count, the total and longest, and
/// the ratio over the export's span; system hitches count under the compositor, the app's as app
/// work. A trace with frames of its own leaves this to the frames (their verdicts carry the same hitches).
struct PlatformHitchPass: AnalysisPass {
    static var reads: PayloadKinds { [.instant] }

    private var category: Int32 = -1
    private var endName: Int32 = -1
    private var exportEndName: Int32 = -1
    /// Begun hitches not yet ended, oldest first (FIFO: an app's hitches end in the order they begin).
    private var open: [(startNs: Int64, label: Int32)] = []
    private var openHead = 0
    private var count = 0, systemCount = 0
    private var totalNs: Int64 = 0, systemNs: Int64 = 0, longestNs: Int64 = 0
    private var byLabel: [Int32: (count: Int, totalNs: Int64)] = [:]
    private var spanNs: Int64 = 0
    private var runFirstNs = Int64.max, runLastNs = Int64.min
    private var rateHz: Double?

    mutating func beginRun(_ context: inout PassContext) {
        open.removeAll(keepingCapacity: true)
        openHead = 0
        runFirstNs = .max
        runLastNs = .min
    }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        if category < 0 {
            category = context.names.index(of: PlatformHitch.category)
            endName = context.names.index(of: PlatformHitch.endName)
            exportEndName = context.names.index(of: PlatformHitch.exportEndName)
        }
        guard resolved.name == category else { return }
        let t = resolved.startNs
        runFirstNs = min(runFirstNs, t)
        runLastNs = max(runLastNs, t)
        if resolved.secondName == exportEndName { return }
        if resolved.secondName != endName {
            if open.count - openHead < 100_000 { open.append((t, resolved.secondName)) }
            return
        }
        guard openHead < open.count else { return }
        let (start, label) = open[openHead]
        openHead += 1
        if openHead > 1024, openHead * 2 > open.count { open.removeFirst(openHead); openHead = 0 }
        let duration = max(0, t - start)
        let system = PlatformVerdict(label: context.names[label]) == .jankyElsewhere
        count += 1
        totalNs +|= duration
        longestNs = max(longestNs, duration)
        if system { systemCount += 1; systemNs +|= duration }
        if byLabel[label] != nil || byLabel.count < 1000 {
            var entry = byLabel[label] ?? (0, 0)
            entry.count += 1
            entry.totalNs +|= duration
            byLabel[label] = entry
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        if runLastNs > runFirstNs {
            // The export's span: the run's events and the hitches, whichever reach further.
            let first = min(runFirstNs, context.runStartNs), last = max(runLastNs, context.order.latestNs)
            spanNs +|= last - first
        }
        if rateHz == nil, count > 0, let rate = context.runMetadata[MetadataKey.refreshRateHz.name].flatMap(Double.init), rate > 0, rate < 10_000 {
            rateHz = rate
        }
    }

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        guard count > 0, a.recorded.frameCount == 0 else { return }
        var p = PlatformHitchFigures()
        p.hitchCount = count
        p.totalHitchMs = milliseconds(totalNs)
        p.longestHitchMs = milliseconds(longestNs)
        p.spanSeconds = Double(spanNs) / 1e9
        p.hitchTimeRatioMsPerS = spanNs > 0 ? p.totalHitchMs / p.spanSeconds : 0
        p.systemHitchCount = systemCount
        p.systemHitchMs = milliseconds(systemNs)
        p.narratives = byLabel.map { label, entry in
            var n = PlatformNarrative()
            let text = context.names[label]
            n.isSystem = PlatformVerdict(label: text) == .jankyElsewhere
            n.text = text.firstIndex(of: ":").map { String(text[text.index(after: $0)...].drop { $0 == " " }) } ?? text
            n.hitchCount = entry.count
            n.totalHitchMs = milliseconds(entry.totalNs)
            return n
        }.sorted { ($0.totalHitchMs, $1.text) > ($1.totalHitchMs, $0.text) }.prefix(50).map { $0 }
        a.platformHitches = p
        guard let rate = rateHz else {
            a.warnings.append("the platform's hitches name no refresh rate: they are in platformHitches, not in hitches")
            return
        }
        var f = HitchFigures()
        f.source = .platform
        f.rateHz = rate
        f.periodMs = 1000 / rate
        f.hitchCount = count
        f.totalHitchMs = p.totalHitchMs
        f.longestHitchMs = p.longestHitchMs
        f.animatingSeconds = p.spanSeconds
        f.hitchTimeRatioMsPerS = p.hitchTimeRatioMsPerS
        f.renderHitchCount = count
        f.renderHitchMs = p.totalHitchMs
        let seconds = p.spanSeconds
        func share(_ ms: Double, _ hitches: Int) -> CauseFigures {
            var c = CauseFigures()
            c.hitchCount = hitches
            c.totalHitchMs = ms
            c.hitchTimeRatioMsPerS = seconds > 0 ? ms / seconds : 0
            return c
        }
        f.byCause.appWork = share(p.totalHitchMs - p.systemHitchMs, count - systemCount)
        f.byCause.compositor = share(p.systemHitchMs, systemCount)
        f.appHitchTimeRatioMsPerS = f.byCause.appWork.hitchTimeRatioMsPerS
        HitchGrading.apply(to: &f)
        // Apple's own ratio, graded on Apple's scales although no frame was judged here.
        f.verdict = HitchGrading.appleTestGrade(f.hitchTimeRatioMsPerS)
        f.appleTestScale.grade = f.verdict
        f.organizerScale.grade = HitchGrading.organizerGrade(f.hitchTimeRatioMsPerS)
        f.fewFrames = false
        let key = Analyzer.rateKey(rate)
        // The replayed rates of a trace without frames are empty: the platform's rate is the one said.
        a.hitches = a.hitches.filter { $0.value.frameCount > 0 }
        a.hitches[key] = f
    }
}
