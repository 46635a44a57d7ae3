import HitchAnalysis
import HitchTrace

/// The human report `hitch analyze` prints by default.
public enum TextReport: AnalysisRenderer {
    public static let format = "text"

    /// Hitch's frames beside the platform's verdicts (imported traces), and the first frames where they differ.
    static func platformLines(_ a: Analysis) -> [String] {
        guard let p = a.platformAgreement else { return [] }
        var out = ["", "Platform verdicts (the recording tool's own judgement, frame by frame)"]
        out.append("  \(p.frames) frames: both janky \(p.bothJanky), both on time \(p.bothOnTime), platform only \(p.platformOnly), Hitch only \(p.hitchOnly)"
                   + " (agreement \(ReportText.percent(p.agreementRatio)))" + (p.unjudged > 0 ? "; \(p.unjudged) frames Hitch could not judge" : ""))
        let differing = a.frames.filter { frame in
            guard let verdict = frame.platformVerdict else { return false }
            return (PlatformVerdict(label: verdict)?.isJanky ?? false) != (frame.hitchMs > 0)
        }
        for frame in differing.prefix(10) {
            out.append("  frame \(frame.frameID) at \(ReportText.ms(frame.startMs)): Hitch \(frame.hitchMs > 0 ? "hitch " + ReportText.ms(frame.hitchMs) : "no hitch"), platform \(frame.platformVerdict ?? "")")
        }
        if differing.count > 10 { out.append("  … \(differing.count - 10) more frames differ (--format json lists every frame)") }
        return out
    }

    /// The platform's own hitches, for an import without frames (Instruments' hitches table alone).
    static func platformHitchLines(_ a: Analysis) -> [String] {
        guard let p = a.platformHitches else { return [] }
        let figures = a.hitches.values.first { $0.source == .platform }
        var out = ["", "Platform hitches (the recording tool's own: no frames to judge, so these are its figures, not Hitch's)"]
        out.append("  \(p.hitchCount) hitches, \(ReportText.ms(p.totalHitchMs)) in all, longest \(ReportText.ms(p.longestHitchMs)); "
                   + "\(Format.fixed(p.hitchTimeRatioMsPerS, 2)) ms/s over the export's \(Format.fixed(p.spanSeconds, 2)) s"
                   + (figures.map { " at \(Format.significant($0.rateHz)) Hz: \($0.appleTestScale.grade) on Apple's test scale" } ?? ""))
        if p.systemHitchCount > 0 {
            out.append("  \(p.systemHitchCount) of them system hitches (\(ReportText.ms(p.systemHitchMs))), not the app's")
        }
        for n in p.narratives.prefix(10) {
            out.append("  \(String(n.hitchCount).leftPadded(5)) × \(ReportText.ms(n.totalHitchMs).leftPadded(10))  \(n.text)\(n.isSystem ? " (system)" : "")")
        }
        return out
    }

    public static func render(_ input: ReportInput) throws -> String {
        let a = input.analysis
        var out: [String] = []
        let runs = a.runs.count == 1 ? a.runs[0].path : "\(a.runs.count) runs merged: " + a.runs.map(\.path).joined(separator: ", ")
        out.append("\(input.title): \(runs)")
        // Before any figure: an import whose frames Hitch and the platform judge differently.
        if let untrusted = a.headline?.untrusted { out.append("  NOT TRUSTED: \(untrusted).") }
        out.append("  evidence: \(a.evidence.summary)")
        out.append("  events \(a.eventCount), dropped by the recorder \(a.droppedEvents)"
                   + (a.recordedRates.isEmpty ? "" : ", recorded at " + a.recordedRates.map { "\(Format.significant($0.rateHz)) Hz (\($0.frameCount) frames)" }.joined(separator: ", ")))
        if let headline = a.headline { out.append(contentsOf: ReportText.headlineParts(headline).map { "  \($0.label): \($0.text)" }) }
        for change in a.refreshRateChanges.prefix(5) {
            out.append("  refresh rate changed \(Format.significant(change.fromHz)) -> \(Format.significant(change.toHz)) Hz at \(ReportText.ms(change.atMs)) (run \(change.run + 1))")
        }
        if a.recorded.frameCount > 0 {
            out.append("")
            out.append("Hitches (hitch time ratio = hitch ms per second of animation)")
            out.append(pad(["rate", "source", "ratio ms/s", "Apple test", "Organizer", "frames", "hitches", "longest", "p95 frame", "slow", "frozen", "commit/render"],
                           widths: columnWidths))
            for key in ReportText.rateKeys(a) {
                guard let h = a.hitches[key] else { continue }
                out.append(row(key + " Hz", h))
            }
            if a.recordedRates.count > 1 { out.append(row("recorded", a.recorded)) }
            if let reason = a.replayUnavailable { out.append("  no replay: \(reason)") }
            out.append(contentsOf: Self.causeLines(a))
            let h = a.recorded
            if h.tripleBufferedFrames > 0 {
                out.append("  \(h.tripleBufferedFrames) frames triple-buffered: \(ReportText.ms(h.addedLatencyMs)) of added latency (not hitches)")
            }
            if h.worstWindow.hitchMs > 0 {
                out.append("  worst second (recorded): \(ReportText.ms(h.worstWindow.hitchMs)) of hitches in \(h.worstWindow.hitchCount) frames from \(ReportText.ms(h.worstWindow.startMs))")
            }
            out.append("  grades: \(HitchGrading.appleTestScaleName); \(HitchGrading.organizerScaleName)")
            if ReportText.rateKeys(a).contains(where: { a.hitches[$0].map { $0.fewFrames && $0.frameCount > 0 } ?? false }) {
                out.append("  * \(ReportText.fewFramesNote)")
            }
            out.append(contentsOf: Self.platformLines(a))
        }
        out.append(contentsOf: Self.platformHitchLines(a))
        if let h = a.hangs {
            out.append("")
            out.append("Hangs (the main thread away from its frame loop or run loop)")
            out.append("  " + ReportText.hangSummary(h))
            let types = ReportText.hangTypes(h)
            if !types.isEmpty {
                out.append("  as the platform named them (every one, before the tiers):")
                for line in types { out.append("    " + line) }
            }
            for d in h.list.prefix(10) {
                out.append("  " + ReportText.hang(d))
                if let stack = ReportText.hangStack(d) { out.append("      " + stack) }
            }
            if h.list.count > 10 || h.listTruncated { out.append("  … more in --format json (hangs.list)") }
        }
        if !a.offenders.isEmpty {
            out.append("")
            out.append("Top offenders in the hitches the app caused (on-CPU time, weighted by hitch time)")
            for o in a.offenders.prefix(10) {
                out.append("  \(Format.fixed(o.weightedHitchMs, 1).leftPadded(8)) ms  \(o.kind.rawValue.padded(8)) \(o.name)  (\(Format.fixed(o.onCPUMs, 2)) ms on a CPU, \(o.hitchingFrames) frames)")
            }
        }
        if !a.stages.isEmpty {
            out.append("")
            out.append("Pipeline stages")
            out.append(pad(["stage", "count", "total ms", "self ms", "mean", "p50", "p95", "p99", "max", "main share", "in hitches ms", "threads"],
                           widths: [22, 7, 10, 10, 8, 8, 8, 8, 8, 10, 13, 0]))
            for s in a.stages.prefix(25) {
                out.append(pad([s.name, "\(s.count)", Format.fixed(s.totalMs, 1), Format.fixed(s.selfMs, 1), Format.significant(s.meanMs),
                                Format.significant(s.p50Ms) + ReportText.thinMark(50, s.count), Format.significant(s.p95Ms) + ReportText.thinMark(95, s.count),
                                Format.significant(s.p99Ms) + ReportText.thinMark(99, s.count), Format.significant(s.maxMs),
                                ReportText.percent(s.mainThreadShare), Format.fixed(s.inHitchingFramesMs, 1), s.threads.joined(separator: ",")],
                               widths: [22, 7, 10, 10, 8, 8, 8, 8, 8, 10, 13, 0]))
            }
        }
        if a.stages.prefix(25).contains(where: { PercentileEvidence.isThin(percentile: 95, count: $0.count) }) {
            out.append("  † \(ReportText.thinPercentileNote)")
        }
        if !a.views.isEmpty {
            out.append("")
            out.append("View body evaluations")
            out.append(pad(["view", "bodies", "total ms", "max ms", ">" + Format.threshold(milliseconds: AnalysisThresholds.longUpdateMs, space: false),
                            ">" + Format.threshold(milliseconds: AnalysisThresholds.veryLongUpdateMs, space: false), "per frame"], widths: [26, 8, 10, 8, 8, 6, 0]))
            for v in a.views.prefix(20) {
                out.append(pad([v.type, "\(v.bodyEvaluations)", Format.fixed(v.totalMs, 1), Format.significant(v.maxMs), "\(v.longUpdates)",
                                "\(v.longUpdatesOver1ms)", Format.significant(v.evaluationsPerFrame)], widths: [26, 8, 10, 8, 8, 6, 0]))
            }
        }
        if let churn = a.identityChurn {
            out.append(contentsOf: Self.identityChurnLines(churn))
        }
        if !a.invalidations.isEmpty {
            out.append("")
            out.append("Invalidations (cause -> effect)")
            for e in a.invalidations.prefix(15) {
                out.append("  \(String(e.count).leftPadded(7))  \(e.source) -> \(e.target)" + (e.writer.map { "  (written by \($0))" } ?? ""))
            }
            if let widest = a.invalidationSources.first {
                out.append("  widest fan-out: \(widest.source) (\(widest.invalidations) invalidations of \(widest.targetTypes) view types)")
            }
        }
        if let d = a.decode {
            out.append("")
            out.append("LLM decode")
            out.append("  tokens \(d.tokens) (prompt \(d.promptTokens)), time to first token \(ReportText.ms(d.timeToFirstTokenMs)), prefill \(Format.significant(d.prefillTokensPerSecond)) tok/s")
            out.append("  decode \(Format.significant(d.tokensPerSecond)) tok/s median (best \(Format.significant(d.bestTokensPerSecond))), \(ReportText.ms(d.msPerToken)) per token")
            out.append("  bytes per token \(Format.bytes(d.bytesPerToken)) (weights \(Format.bytes(d.weightBytesPerToken)), KV cache \(Format.bytes(d.kvCacheBytesPerToken)), other \(Format.bytes(d.otherBytesPerToken)))")
            let cacheNote = d.peakBandwidthMayBeCacheBound ? " (probe arrays below 4x the last-level cache: the peak may be a cache figure)" : ""
            let peak = d.peakBandwidthGBps > 0 ? " of \(Format.significant(d.peakBandwidthGBps)) GB/s peak\(cacheNote) = \(ReportText.percent(d.utilization)) utilization" : " (no peak recorded)"
            out.append("  bandwidth \(Format.significant(d.bandwidthGBps)) GB/s\(peak)" + (d.notBandwidthBound ? "  NOT BANDWIDTH-BOUND (< \(Format.fixed(AnalysisThresholds.notBandwidthBoundUtilization * 100, 0))%)" : ""))
            if let low = d.peakTooLowSentence { out.append("  \(low)") }
            if let bound = d.threads.sentence { out.append("  \(bound)") }
            if let priority = d.threads.priorityChange { out.append("  decode priority: \(priority)") }
            out.append(pad(["  op", "count", "total ms", "time", "GB/s", "GFLOP/s", "FLOP/B", "bound"], widths: [16, 8, 10, 8, 8, 9, 8, 0]))
            for o in d.ops.prefix(15) {
                out.append(pad(["  " + o.name, "\(o.count)", Format.fixed(o.totalMs, 1), ReportText.percent(o.timeShare), Format.significant(o.bandwidthGBps),
                                Format.significant(o.gflops), Format.significant(o.flopsPerByte), o.bound.rawValue], widths: [16, 8, 10, 8, 8, 9, 8, 0]))
            }
            let m = d.memory
            let estimated = " (estimated from op bytes)"
            out.append("  memory: weights \(Format.bytes(Double(m.weightsBytes)))\(m.weightsBytesEstimated ? estimated : "") + KV cache \(Format.bytes(Double(m.kvCacheBytes)))\(m.kvCacheBytesEstimated ? estimated : ""), peak resident \(Format.bytes(Double(m.peakResidentBytes))); total \(Format.bytes(Double(m.totalBytes))) vs budget \(Format.bytes(Double(m.deviceBudgetBytes))): \(m.withinBudget ? "within" : "OVER")")
        }
        if let t = a.tokens {
            out.append("")
            out.append("Tokens: produced \(t.produced), delivered \(t.delivered), shown \(t.shown), dropped \(t.dropped), lost \(t.lost); token-to-screen p50 \(ReportText.ms(t.tokenToScreenMs.p50)), p95 \(ReportText.ms(t.tokenToScreenMs.p95)) (\(Format.significant(t.tokenToScreenP95Frames)) frames)")
        }
        if !input.budgets.isEmpty {
            out.append("")
            out.append("Budgets")
            for b in input.budgets { out.append("  \(b.status == .passed ? "pass" : b.status == .failed ? "FAIL" : "skip")  \(b.name): \(b.message)") }
        }
        for w in a.warnings { out.append("warning: \(w)") }
        return out.joined(separator: "\n") + "\n"
    }

    static let columnWidths = [9, 9, 11, 11, 10, 8, 8, 9, 10, 6, 7, 0]

    /// Hitch time by cause per rate, and where the main thread's time went (docs/METRICS.md "Hitch causes").
    static func causeLines(_ a: Analysis) -> [String] {
        guard let t = a.threadStates else { return [] }
        var out = ["", "Hitch causes (thread states from \(t.source)\(t.sourceReason.isEmpty ? "" : ": " + t.sourceReason))"]
        for key in ReportText.rateKeys(a) {
            guard let h = a.hitches[key], h.hitchCount > 0 else { continue }
            out.append("  \((key + " Hz").padded(9))\(ReportText.causeRatios(h))"
                       + (h.appHitchTimeRatioMsPerS.map { "   (app \(Format.fixed($0, 2)) of \(Format.fixed(h.hitchTimeRatioMsPerS, 2)) ms/s)" } ?? ""))
        }
        out.append("  main thread in hitching frames: \(ReportText.split(t.mainThreadInHitches))")
        if !t.cpuTakenByAppThreadsInHitches.isEmpty {
            out.append("  the app's threads on the frame threads' CPUs in hitching frames: \(ReportText.takers(t.cpuTakenByAppThreadsInHitches))")
        }
        for line in ReportText.queues(a).prefix(5) { out.append("  " + line) }
        if t.renderThreadInHitches != ThreadStateSplit() { out.append("  render thread in hitching frames: \(ReportText.split(t.renderThreadInHitches))") }
        if t.machineInHitches != MachineWindow() {
            out.append("  machine over hitching frames: steal \(ReportText.ms(t.machineInHitches.stealMs)) per CPU, CPU pressure \(ReportText.ms(t.machineInHitches.cpuPressureSomeMs)), throttled \(ReportText.ms(t.machineInHitches.cgroupThrottledMs))")
        }
        if a.samples.samplesAsleepInHitches > 0 {
            out.append("  \(a.samples.samplesAsleepInHitches) samples caught the main thread asleep in hitching frames (blocked time, not offenders); waiting in: "
                       + a.samples.waitingInHitches.prefix(3).map { "\($0.name) (\(Format.fixed($0.weightedHitchMs, 1)) ms)" }.joined(separator: ", "))
        }
        return out
    }

    /// The identity-churn section: totals, types, flagged places, worst updates.
    static func identityChurnLines(_ c: IdentityChurnFigures) -> [String] {
        var out = ["", "Identity churn (views torn down and rebuilt per update)"]
        out.append("  \(c.updates) updates built \(c.viewsBuilt) views and tore down \(c.viewsTornDown); \(c.replacements) replacements "
                   + "(same type, same place, new id) rebuilt \(c.rebuiltViews) views in \(c.updatesWithReplacements) updates "
                   + "(max \(c.maxRebuiltViewsPerUpdate), mean \(Format.significant(c.meanRebuiltViewsPerReplacingUpdate)) per such update)")
        let reasons = { (counts: [String: Int]) in counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") }
        out.append("  built by reason: \(reasons(c.builtByReason)); torn down by reason: \(reasons(c.tornDownByReason))")
        if !c.types.isEmpty {
            out.append(pad(["  view", "built", "torn down", "replaced"], widths: [28, 8, 11, 0]))
            for t in c.types.prefix(10) {
                out.append(pad(["  " + t.type, "\(t.built)", "\(t.tornDown)", "\(t.replacements)"], widths: [28, 8, 11, 0]))
            }
        }
        if c.unstableIdentity.isEmpty {
            out.append("  no likely unstable identity (no place replaced in \(unstableIdentityMinimumUpdates) or more updates)")
        } else {
            out.append("  LIKELY UNSTABLE IDENTITY at \(c.unstableIdentitySlots) places (same type rebuilt at the same position with a new id in \(unstableIdentityMinimumUpdates)+ updates):")
            for u in c.unstableIdentity.prefix(10) {
                let parent = u.parentType.isEmpty ? "" : " in \(u.parentType)"
                out.append("    \(u.type) at position \(u.position)\(parent): replaced in \(u.replacements) updates")
            }
        }
        for u in c.worstUpdates.prefix(5) where u.rebuiltViews > 0 {
            out.append("  update at \(ReportText.ms(u.atMs)): \(u.replacements) replacements rebuilt \(u.rebuiltViews) views (built \(u.built), torn down \(u.tornDown))")
        }
        return out
    }

    static func row(_ label: String, _ h: HitchFigures) -> String {
        let small = h.fewFrames && h.frameCount > 0 ? "*" : ""
        return pad([label, h.source.rawValue, Format.fixed(h.hitchTimeRatioMsPerS, 2), h.appleTestScale.grade.rawValue + small, h.organizerScale.grade.rawValue + small, "\(h.frameCount)", "\(h.hitchCount)",
             ReportText.ms(h.longestHitchMs), ReportText.ms(h.frameTimeMs.p95), "\(h.slowFrames)", "\(h.frozenFrames)", "\(h.commitHitchCount)/\(h.renderHitchCount)"],
            widths: columnWidths)
    }

    static func pad(_ cells: [String], widths: [Int]) -> String {
        var line = ""
        for (cell, width) in zip(cells, widths) { line += width > 0 ? cell.padded(width) : cell }
        return line.trimmingTrailingSpaces()
    }
}

extension String {
    func padded(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
