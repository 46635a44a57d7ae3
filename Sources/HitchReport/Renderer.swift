import HitchAnalysis

// One renderer protocol, one format per file (TextReport.swift, JSONReport.swift, ...). A renderer
// reads `Analysis` and computes nothing: every figure comes from the analyzer.

/// What a report shows: the analysis, and the budget outcomes when `hitch check` ran them.
public struct ReportInput: Sendable {
    public var analysis: Analysis
    public var title: String
    public var budgets: [BudgetOutcome]
    public init(analysis: Analysis, title: String = "hitch analysis", budgets: [BudgetOutcome] = []) {
        self.analysis = analysis
        self.title = title
        self.budgets = budgets
    }
}

public protocol AnalysisRenderer: SendableMetatype {
    /// The `--format` value that selects this renderer.
    static var format: String { get }
    static func render(_ input: ReportInput) throws -> String
}

public enum Renderers {
    /// The formats `hitch analyze --format` offers.
    public static let all: [any AnalysisRenderer.Type] = [TextReport.self, JSONReport.self, MarkdownReport.self, JUnitReport.self, HTMLReport.self]
    public static var formats: [String] { all.map { $0.format } }
    public static func named(_ format: String) -> (any AnalysisRenderer.Type)? { all.first { $0.format == format } }
}

/// Small shared wording for the text-like renderers.
enum ReportText {
    /// Beside a grade from fewer frames than `HitchGrading.fewFramesBelow`.
    static let fewFramesNote = "graded on fewer than \(HitchGrading.fewFramesBelow) frames: a small sample, the grade is provisional (docs/METRICS.md \"Evidence\")"
    /// Beside a percentile from fewer values than it needs.
    static let thinPercentileNote = "a percentile of fewer values than it needs (P50: \(PercentileEvidence.minimumValues(forPercentile: 50)), "
        + "P95: \(PercentileEvidence.minimumValues(forPercentile: 95)), P99: \(PercentileEvidence.minimumValues(forPercentile: 99))): one slow value moves it"
    /// "†" when `count` values are too few for the percentile `level`.
    static func thinMark(_ level: Double, _ count: Int) -> String { PercentileEvidence.isThin(percentile: level, count: count) ? "†" : "" }
    static func ms(_ value: Double) -> String { Format.significant(value) + " ms" }
    static func percent(_ fraction: Double) -> String { Format.fixed(fraction * 100, 1) + "%" }
    /// How alarming a grade reads, on the one scale every report colours grades by: both grading
    /// scales fold onto it (Organizer's `fair` with the test scale's `warning`).
    enum Tone: String { case good, warning, critical, neutral }
    static func tone(_ grade: HitchGrade) -> Tone {
        switch grade {
        case .good: .good
        case .warning, .fair: .warning
        case .poor, .critical: .critical
        case .ungraded: .neutral
        }
    }
    /// A hitch cause in words (the one table of display names).
    static func cause(_ cause: HitchCause) -> String { DisplayNames.cause(cause) }
    /// "app work 3.1 · waiting for a CPU 0.4 · …" (ms/s), causes without hitches left out.
    static func causeRatios(_ h: HitchFigures) -> String {
        let parts = HitchCause.allCases.filter { h.byCause[$0].hitchCount > 0 }.map {
            "\(cause($0)) \(Format.fixed(h.byCause[$0].hitchTimeRatioMsPerS, 2))"
        }
        return parts.isEmpty ? "no hitches" : parts.joined(separator: " · ") + " ms/s"
    }
    /// "running 5.1 · runnable 0.3 (app threads 0.2) · blocked 2 · machine 0 · unknown 0 ms" (parts with time only).
    static func split(_ s: ThreadStateSplit) -> String {
        let runnable = s.runnableBehindAppThreadsMs > 0 ? "runnable \(Format.significant(s.runnableMs)) (app threads \(Format.significant(s.runnableBehindAppThreadsMs)))" : nil
        let parts = [("running", s.runningMs), ("runnable", s.runnableMs), ("blocked", s.blockedMs), ("machine", s.machineMs), ("unknown", s.unknownMs)]
            .filter { $0.1 > 0 }.map { $0.0 == "runnable" ? runnable ?? "runnable \(Format.significant($0.1))" : "\($0.0) \(Format.significant($0.1))" }
        return parts.isEmpty ? "no time" : parts.joined(separator: " · ") + " ms"
    }
    /// "frame 300's app work (queued behind it)" for a frame late only because of an earlier one;
    /// the cause alone otherwise.
    static func cause(of a: HitchAttribution) -> String {
        guard let root = a.queuedBehind else { return cause(a.cause) }
        return "queued behind frame \(root): \(cause(a.cause))"
    }
    /// "feed.thumbnails 6.1 ms, feed.search 0.4 ms" (the app's threads that took a frame thread's CPU).
    static func takers(_ takers: [NamedDuration]) -> String {
        takers.map { "\($0.name) \(Format.milliseconds($0.ms))" }.joined(separator: ", ")
    }
    /// "frame 300 (app work, 25.0 ms): frames 301–302 queued behind it", one line per root frame
    /// with hitches queued behind it, the most queued first (`frames[]`, recorded frames).
    static func queues(_ analysis: Analysis) -> [String] {
        var byRoot: [String: [FrameSample]] = [:]
        for frame in analysis.frames { if let root = frame.queuedBehind { byRoot["\(frame.run)-\(root)", default: []].append(frame) } }
        let frames = Dictionary(analysis.frames.map { ("\($0.run)-\($0.frameID)", $0) }, uniquingKeysWith: { a, _ in a })
        return byRoot.sorted { ($0.value.count, $1.key) > ($1.value.count, $0.key) }.map { key, queued in
            let ids = queued.map(\.frameID).sorted()
            let list = ids.count > 1 && ids.last! - ids.first! == UInt64(ids.count - 1) ? "frames \(ids.first!)–\(ids.last!)"
                : (ids.count == 1 ? "frame \(ids[0])" : "frames " + ids.map(String.init).joined(separator: ", "))
            let rootID = key.split(separator: "-").last.map(String.init) ?? key
            let root = frames[key].map { f in " (\(f.cause.map(cause) ?? "on time"), hitch \(Format.milliseconds(f.hitchMs)))" } ?? ""
            return "frame \(rootID)\(root): \(list) queued behind it (\(cause(queued[0].cause ?? .unknown)))"
        }
    }
    /// "1 hang (412 ms, longest 412 ms, 123.6 s/h); brief unresponsiveness: 2 (…)" over the recording.
    static func hangSummary(_ h: HangFigures) -> String {
        func tier(_ count: Int, _ totalMs: Double, _ longestMs: Double, _ rate: Double) -> String {
            count == 0 ? "none" : "\(count) (\(Format.milliseconds(totalMs)) in all, longest \(Format.milliseconds(longestMs)), \(Format.significant(rate)) s per hour)"
        }
        return "hangs (≥ \(Format.milliseconds(h.hangThresholdMs))): \(tier(h.count, h.totalMs, h.longestMs, h.rateSecondsPerHour)); "
            + "brief unresponsiveness (≥ \(Format.milliseconds(h.briefThresholdMs))): \(tier(h.brief.count, h.brief.totalMs, h.brief.longestMs, h.brief.rateSecondsPerHour))"
            + " over \(Format.significant(h.recordedSeconds)) s of recording"
    }
    /// "instruments "Brief Unresponsiveness": 7 (1.19 s in all, longest 236.65 ms)", one per source and
    /// type the hang events named, as the platform counts them (`HangFigures.byType`).
    static func hangTypes(_ h: HangFigures) -> [String] {
        (h.byType ?? []).map { t in
            "\(t.source) \"\(t.type)\": \(t.count) (\(Format.milliseconds(t.totalMs)) in all, longest \(Format.milliseconds(t.longestMs)))"
        }
    }
    /// "hang 412 ms at 1.23 s (frame 97; frameLoop, watchdog): app work; running 400 · blocked 12 ms; blocked on a lock in f, woken by helper".
    static func hang(_ d: HangDetail, withTier: Bool = true) -> String {
        var text = (withTier ? DisplayNames.tier(d.tier) + " " : "") + "\(Format.milliseconds(d.durationMs))\(d.unfinished ? " or more (the recording ended in it)" : "") at \(Format.milliseconds(d.startMs))"
        let whence = (d.frameID.map { ["frame \($0)"] } ?? []) + [d.sources.joined(separator: ", ")] + (d.type.map { ["\"\($0)\""] } ?? [])
        text += " (" + whence.filter { !$0.isEmpty }.joined(separator: "; ") + "): " + cause(d.cause)
        if let states = d.states { text += "; " + split(states) }
        if let wait = d.blockedOn {
            text += "; blocked on \(DisplayNames.wait(wait))" + (d.blockedIn.map { " in \($0)" } ?? "")
        }
        if let waker = d.wokenBy { text += ", woken by \(waker)" }
        return text
    }
    /// "f ← g ← h" (innermost first, at most `depth` frames) with how often it was seen.
    static func hangStack(_ d: HangDetail, depth: Int = 8) -> String? {
        guard !d.stack.isEmpty else { return nil }
        let frames = d.stack.prefix(depth).joined(separator: " ← ") + (d.stack.count > depth ? " ← …" : "")
        return "stack seen most (\(d.stackCount) of \(d.stacks)): " + frames
    }
    /// "app work 182.26 of 214.47 ms/s at 120 Hz (85.0% of hitch time)": the headline's cause in
    /// words; "no hitches at 120 Hz" without hitches.
    static func leadingCause(_ h: Headline) -> String {
        let rate = h.rateKey == "recorded" ? "the recorded rates" : h.rateKey + " Hz"
        guard let cause = h.leadingCause else { return "no hitches at \(rate)" }
        let ratio = "\(Format.fixed(h.leadingCauseMsPerS, 2)) of \(Format.fixed(h.hitchTimeRatioMsPerS, 2)) ms/s at \(rate)"
        if cause == .unknown, h.leadingCauseShare >= 1 {
            return "not recorded: the trace has no thread states to tell the app's hitches from the machine's (\(ratio))"
        }
        return "\(self.cause(cause)) \(ratio) (\(percent(h.leadingCauseShare)) of hitch time)"
    }
    /// "stage image decode (on the main thread)", "view FeedRow", "thread feed.thumbnails".
    static func offender(_ o: HeadlineOffender) -> String {
        let thread = o.onMainThreadFraction.map { $0 >= 0.5 ? " (on the main thread)" : " (mostly off the main thread)" } ?? ""
        return "\(o.kind.rawValue) \(o.name)\(thread)"
    }
    /// "NaiveFeedModel.state -> FeedRow x 3815".
    static func invalidation(_ e: InvalidationEdge, arrow: String = "->", times: String = "x") -> String {
        "\(e.source) \(arrow) \(e.target) \(times) \(e.count)"
    }
    /// The headline as labelled parts: the cause, the heaviest offenders with their share of hitch
    /// time, and the widest invalidation (the text and Markdown reports' first lines).
    static func headlineParts(_ h: Headline) -> [(label: String, text: String)] {
        var parts = [(label: "why", text: leadingCause(h))]
        if !h.offenders.isEmpty {
            parts.append((label: "heaviest in the app's hitches",
                          text: h.offenders.map { "\(offender($0)) \(percent($0.shareOfHitchTime))" }.joined(separator: ", ") + " of hitch time"))
        }
        if let edge = h.widestInvalidation { parts.append((label: "widest invalidation", text: invalidation(edge))) }
        return parts
    }
    static func rateKeys(_ analysis: Analysis) -> [String] {
        let asked = analysis.refreshRatesHz.map { Analyzer.rateKey($0) }
        return asked.filter { analysis.hitches[$0] != nil } + analysis.hitches.keys.sorted().filter { !asked.contains($0) }
    }
}
