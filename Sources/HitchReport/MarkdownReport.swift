import HitchAnalysis

/// A CI job summary (GitHub's $GITHUB_STEP_SUMMARY and the like). Names from the trace are escaped.
public enum MarkdownReport: AnalysisRenderer {
    public static let format = "markdown"

    public static func render(_ input: ReportInput) throws -> String {
        let a = input.analysis
        var out: [String] = ["## " + escape(input.title), ""]
        if let untrusted = a.headline?.untrusted { out += ["> **Not trusted:** " + escape(untrusted) + ".", ""] }
        out.append("Runs: \(a.runs.map { "`" + escape($0.path) + "`" }.joined(separator: ", ")) · events \(a.eventCount) · dropped events \(a.droppedEvents)")
        out.append("")
        out.append("Evidence: " + escape(a.evidence.summary))
        out.append("")
        if let headline = a.headline {
            out.append(ReportText.headlineParts(headline).map { "**\(escape($0.label.prefix(1).uppercased() + $0.label.dropFirst())):** \(escape($0.text))" }.joined(separator: "  \n"))
            out.append("")
        }
        if a.recorded.frameCount > 0 {
            out += table("| rate | source | hitch time ratio | Apple test scale | Organizer scale | frames | hitches | longest | p95 frame |",
                         "|---|---|---:|---|---|---:|---:|---:|---:|", ReportText.rateKeys(a).compactMap { key in
                a.hitches[key].map { h in
                    ["\(key) Hz", "\(h.source)", "\(Format.fixed(h.hitchTimeRatioMsPerS, 2)) ms/s", "\(icon(h.verdict)) \(h.verdict)\(h.fewFrames ? " (small sample)" : "")",
                     "\(h.organizerScale.grade)", "\(h.frameCount)", "\(h.hitchCount)", ReportText.ms(h.longestHitchMs), ReportText.ms(h.frameTimeMs.p95)]
                }
            })
            if let reason = a.replayUnavailable { out.append("No replay: " + escape(reason)); out.append("") }
            if a.threadStates != nil {
                out.append("**Hitch causes** (ms/s): " + ReportText.rateKeys(a).compactMap { key in
                    a.hitches[key].map { "\(key) Hz: \(ReportText.causeRatios($0))" }
                }.joined(separator: "; "))
                out.append("")
            }
        }
        if let h = a.hangs {
            out.append("**Hangs:** " + escape(ReportText.hangSummary(h)))
            out.append("")
            let types = ReportText.hangTypes(h)
            if !types.isEmpty {
                out.append("As the platform named them (every one, before the tiers): " + types.map(escape).joined(separator: "; "))
                out.append("")
            }
            for d in h.list.prefix(5) {
                out.append("- " + escape(ReportText.hang(d)) + (ReportText.hangStack(d, depth: 5).map { "<br>" + escape($0) } ?? ""))
            }
            if !h.list.isEmpty { out.append("") }
        }
        if !a.offenders.isEmpty {
            out.append("**Top offenders in hitches:** " + a.offenders.prefix(5).map { "\(escape($0.name)) (\($0.kind), \(Format.fixed($0.weightedHitchMs, 1)) ms)" }.joined(separator: ", "))
            out.append("")
        }
        if !a.stages.isEmpty {
            out += table("| stage | count | total ms | self ms | p95 ms | main-thread share | in hitches ms |", "|---|---:|---:|---:|---:|---:|---:|",
                         a.stages.prefix(15).map { s in
                [escape(s.name), "\(s.count)", Format.fixed(s.totalMs, 1), Format.fixed(s.selfMs, 1), Format.significant(s.p95Ms),
                 ReportText.percent(s.mainThreadShare), Format.fixed(s.inHitchingFramesMs, 1)]
            })
        }
        if !a.views.isEmpty {
            out += table("| view | bodies | total ms | long (>\(Format.threshold(milliseconds: AnalysisThresholds.longUpdateMs))) | >\(Format.threshold(milliseconds: AnalysisThresholds.veryLongUpdateMs)) |",
                         "|---|---:|---:|---:|---:|", a.views.prefix(10).map { v in
                [escape(v.type), "\(v.bodyEvaluations)", Format.fixed(v.totalMs, 1), "\(v.longUpdates)", "\(v.longUpdatesOver1ms)"]
            })
        }
        if let d = a.decode {
            out.append("**LLM decode:** \(Format.significant(d.tokensPerSecond)) tok/s, \(Format.bytes(d.bytesPerToken))/token, \(Format.significant(d.bandwidthGBps)) GB/s"
                       + (d.peakBandwidthGBps > 0 ? " of \(Format.significant(d.peakBandwidthGBps)) GB/s (\(ReportText.percent(d.utilization)))" : "")
                       + (d.notBandwidthBound ? " — not bandwidth-bound" : "") + ", TTFT \(ReportText.ms(d.timeToFirstTokenMs))"
                       + (d.peakTooLowSentence.map { "; \($0)" } ?? "")
                       + (d.threads.sentence.map { "; \($0)" } ?? "")
                       + (d.threads.priorityChange.map { "; decode priority: \($0)" } ?? ""))
            out.append("")
        }
        if let t = a.tokens {
            out.append("**Tokens:** produced \(t.produced), shown \(t.shown), dropped \(t.dropped), token-to-screen p95 \(ReportText.ms(t.tokenToScreenMs.p95))")
            out.append("")
        }
        if !input.budgets.isEmpty {
            out += table("| budget | result |", "|---|---|", input.budgets.map { b in
                [escape(b.name), "\(b.status == .passed ? "✅" : b.status == .failed ? "❌" : "⏭️ skipped:") \(escape(b.message))" + (b.warning.map { " ⚠️ " + escape($0) } ?? "")]
            })
        }
        for w in a.warnings { out.append("> warning: " + escape(w)) }
        return out.joined(separator: "\n") + "\n"
    }

    /// A table: its header and alignment rows as written, a row of cells per element, then a blank line.
    static func table(_ header: String, _ alignment: String, _ rows: [[String]]) -> [String] {
        [header, alignment] + rows.map { "| " + $0.joined(separator: " | ") + " |" } + [""]
    }

    static func icon(_ grade: HitchGrade) -> String {
        switch ReportText.tone(grade) {
        case .good: "🟢"
        case .warning: "🟠"
        case .critical: "🔴"
        case .neutral: "⚪"
        }
    }

    /// Escapes Markdown and HTML metacharacters so trace names render as text.
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\n", "\r": out += " "
            case "|", "\\", "`", "*", "_", "[", "]", "#", "!": out += "\\" + String(c)
            default: out.append(c)
            }
        }
        return out
    }
}
