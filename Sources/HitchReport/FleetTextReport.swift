import HitchAnalysis

/// What `hitch merge` prints by default: the fleet's hitch figures (the same table as `hitch
/// analyze`), how the traces' own ratios are spread, each breakdown, the worst traces and the
/// heaviest offenders.
public enum FleetTextReport {
    public static func render(_ f: FleetFigures) -> String {
        let a = f.fleet
        let ratios = f.traceRatios
        var out: [String] = ["hitch merge: \(Format.count(f.traces)) traces (\(Format.count(ratios.tracesWithFrames)) with frames), path digest \(f.pathDigest)"]
        if let headline = a.headline { out.append(contentsOf: ReportText.headlineParts(headline).map { "  \($0.label): \($0.text)" }) }
        out.append("  evidence: \(a.evidence.summary)")
        out.append("  events \(a.eventCount), dropped by the recorder \(a.droppedEvents)"
                   + (a.recordedRates.isEmpty ? "" : ", recorded at " + a.recordedRates.map { "\(Format.significant($0.rateHz)) Hz (\($0.frameCount) frames)" }.joined(separator: ", ")))
        if a.recorded.frameCount > 0 {
            out.append("")
            out.append("Hitches over every trace (hitch ms per second of all animating time)")
            out.append(TextReport.pad(["rate", "source", "ratio ms/s", "Apple test", "Organizer", "frames", "hitches", "longest", "p95 frame", "slow", "frozen", "commit/render"],
                                      widths: TextReport.columnWidths))
            for key in ReportText.rateKeys(a) {
                guard let h = a.hitches[key] else { continue }
                out.append(TextReport.row(key + " Hz", h))
            }
            if a.recordedRates.count > 1 { out.append(TextReport.row("recorded", a.recorded)) }
            for key in ReportText.rateKeys(a) {
                guard let h = a.hitches[key], h.hitchCount > 0, h.framesWithThreadStates > 0 else { continue }
                out.append("  \(key) Hz by cause: \(ReportText.causeRatios(h))")
            }
            if let trace = f.worstWindowTraces["recorded"] {
                out.append("  worst second: \(ReportText.ms(a.recorded.worstWindow.hitchMs)) of hitches in \(a.recorded.worstWindow.hitchCount) frames, in \(trace)")
            }
        }
        if ratios.tracesWithFrames > 0 {
            let p = ratios.ratioMsPerS
            out.append("")
            out.append("The traces' own hitch time ratios (recorded rates)")
            out.append("  p50 \(Format.fixed(p.p50, 2)), p90 \(Format.fixed(p.p90, 2)), p99 \(Format.fixed(p.p99, 2)), max \(Format.fixed(p.max, 2)) ms/s over \(Format.count(p.count)) traces"
                       + (ratios.tracesWithoutFrames > 0 ? "; \(Format.count(ratios.tracesWithoutFrames)) traces judged no frame" : ""))
            out.append("  " + ratios.bins.filter { $0.traces > 0 }.map { "\(binLabel($0)): \(Format.count($0.traces))" }.joined(separator: ", "))
            out.append("  Apple test scale: \(Format.count(ratios.goodTraces)) good, \(Format.count(ratios.warningTraces)) warning, \(Format.count(ratios.criticalTraces)) critical")
        }
        for breakdown in f.breakdowns where !breakdown.rows.isEmpty {
            out.append("")
            out.append("By " + breakdown.dimensions.joined(separator: " × "))
            let keys = ReportText.rateKeys(a)
            let widths = [max(12, breakdown.rows.map { valueLabel($0.values).count + 2 }.max() ?? 0), 8, 12] + keys.map { _ in 12 } + [12, 0]
            out.append(TextReport.pad([breakdown.dimensions.joined(separator: " × "), "traces", "recorded"] + keys.map { $0 + " Hz" } + ["traces p90", "good/warning/critical"], widths: widths))
            for row in breakdown.rows {
                out.append(TextReport.pad([valueLabel(row.values), Format.count(row.traces), Format.fixed(row.recorded.hitchTimeRatioMsPerS, 2)]
                                          + keys.map { row.hitches[$0].map { Format.fixed($0.hitchTimeRatioMsPerS, 2) } ?? "–" }
                                          + [row.traceRatios.tracesWithFrames > 0 ? Format.fixed(row.traceRatios.ratioMsPerS.p90, 2) : "–",
                                             "\(row.traceRatios.goodTraces)/\(row.traceRatios.warningTraces)/\(row.traceRatios.criticalTraces)"], widths: widths))
            }
        }
        if !f.worstTraces.isEmpty {
            out.append("")
            out.append("Worst traces (recorded hitch time ratio)")
            for t in f.worstTraces.prefix(10) {
                out.append("  \(Format.fixed(t.hitchTimeRatioMsPerS, 2).leftPadded(8)) ms/s  \(t.path)  (\(t.hitchCount) hitches in \(t.frameCount) frames)")
            }
            if f.worstTraces.count > 10 { out.append("  … \(f.worstTraces.count - 10) more (--format json or html lists them)") }
        }
        if !a.offenders.isEmpty {
            out.append("")
            out.append("Top offenders over every trace (on-CPU time in the hitches the app caused, weighted by hitch time)")
            for o in a.offenders.prefix(10) {
                out.append("  \(Format.fixed(o.weightedHitchMs, 1).leftPadded(8)) ms  \(o.kind.rawValue.padded(8)) \(o.name)  (\(Format.fixed(o.onCPUMs, 2)) ms on a CPU, \(o.hitchingFrames) frames)")
            }
        }
        if let d = a.decode {
            out.append("")
            out.append("Decode over every trace: \(Format.count(d.tokens)) tokens, \(Format.fixed(d.tokensPerSecond, 1)) tokens/s (median step), \(Format.bytes(d.bytesPerToken)) per token")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// "5–7.5 ms/s", "200+ ms/s".
    static func binLabel(_ bin: RatioBin) -> String {
        bin.toMsPerS.map { "\(Format.significant(bin.fromMsPerS))–\(Format.significant($0)) ms/s" } ?? "\(Format.significant(bin.fromMsPerS))+ ms/s"
    }

    /// A group's values, "(none)" for a dimension its traces lack.
    static func valueLabel(_ values: [String]) -> String {
        values.map { $0.isEmpty ? "(none)" : $0 }.joined(separator: " × ")
    }
}
