import Foundation

// Words for the schema's names: the one table every label a person reads comes from (comparison
// figures, the trend page's charts, the reports' causes), so no enum case or camel-cased key leaks
// into a report. A metric path the table does not know is shown as the path itself.

public enum DisplayNames {
    /// A hitch cause in words.
    public static func cause(_ cause: HitchCause) -> String {
        switch cause {
        case .appWork: "app work"
        case .waitingForAppThreads: "waiting for the app's threads"
        case .waitingForCPU: "waiting for a CPU (other processes)"
        case .blocked: "blocked"
        case .machineStall: "machine stall"
        case .compositor: "compositor or display"
        case .unknown: "unknown"
        }
    }

    /// What a blocked thread waited on, in words.
    public static func wait(_ wait: HangWait) -> String {
        switch wait {
        case .lock: "a lock"
        case .io: "file I/O"
        case .sleep: "a sleep"
        case .otherWait: "another wait (poll, socket, child)"
        }
    }

    /// A hang tier in words.
    public static func tier(_ tier: HangTier) -> String {
        switch tier {
        case .hang: "hang"
        case .brief: "brief unresponsiveness"
        }
    }

    /// Per refresh rate figures (`hitches.<rate>.<key>`), by key.
    static let hitchFigures: [String: String] = [
        "hitchTimeRatioMsPerS": "hitch time ratio",
        "appHitchTimeRatioMsPerS": "app-work hitch time ratio",
        "hitchCount": "hitches",
        "longestHitchMs": "longest hitch",
        "totalHitchMs": "total hitch time",
        "frameTimeMs.p95": "p95 frame time",
        "frameTimeMs.p99": "p99 frame time",
        "slowFrames": "slow frames",
        "frozenFrames": "frozen frames",
        "frameCount": "frames",
    ]
    /// Per stage figures (`stages[<name>].<key>`), by key.
    static let stageFigures: [String: String] = [
        "mainThreadMs": "on the main thread",
        "totalMs": "on all threads",
        "selfMs": "self time",
        "count": "runs",
        "p95Ms": "p95 duration",
    ]
    /// Per view type figures (`views[<type>].<key>`), by key.
    static let viewFigures: [String: String] = [
        "totalMs": "body time",
        "bodyEvaluations": "body evaluations",
        "longUpdates": "long updates (>500 µs)",
        "maxMs": "longest body",
    ]
    /// Figures of the whole run, by metric path.
    static let runFigures: [String: String] = [
        "layout.totalMs": "layout",
        "decode.tokensPerSecond": "decode rate",
        "decode.timeToFirstTokenMs": "time to first token",
        "decode.bytesPerToken": "bytes per token",
        "decode.bandwidthGBps": "decode bandwidth",
        "decode.utilization": "bandwidth utilization",
        "tokens.dropped": "tokens dropped",
        "tokens.tokenToScreenMs.p95": "p95 token-to-screen latency",
        "droppedEvents": "events dropped by the recorder",
        "hangs.rateSecondsPerHour": "hang rate",
        "hangs.count": "hangs",
        "hangs.longestMs": "longest hang",
        "hangs.totalMs": "hang time",
        "hangs.brief.rateSecondsPerHour": "brief unresponsiveness rate",
        "hangs.brief.count": "brief unresponsiveness",
        "hangs.brief.longestMs": "longest brief unresponsiveness",
    ]

    /// A metric path in words: "hitches.120.hitchTimeRatioMsPerS" → "hitch time ratio at 120 Hz",
    /// "hitches.120.byCause.waitingForCPU.hitchTimeRatioMsPerS" → "hitch time ratio at 120 Hz,
    /// waiting for a CPU (other processes)", "stages[filter].mainThreadMs" → "stage 'filter' on the
    /// main thread". Unknown paths come back unchanged.
    public static func metric(_ path: String) -> String {
        if path.hasPrefix("hitches."), let (rate, key) = splitRate(path.dropFirst("hitches.".count)) {
            let at = " at \(rate) Hz"
            if key.hasPrefix("byCause.") {
                let rest = key.dropFirst("byCause.".count)
                guard let dot = rest.firstIndex(of: "."), let cause = HitchCause(rawValue: String(rest[..<dot])),
                      let words = hitchFigures[String(rest[rest.index(after: dot)...])] else { return path }
                return words + at + ", " + self.cause(cause)
            }
            return hitchFigures[key].map { $0 + at } ?? path
        }
        if let (subject, key) = subscripted(path, "stages") {
            return stageFigures[key].map { "stage '\(subject)' " + $0 } ?? path
        }
        if let (subject, key) = subscripted(path, "views") {
            return viewFigures[key].map { "view \(subject) " + $0 } ?? path
        }
        return runFigures[path] ?? path
    }

    /// "120.hitchCount" → ("120", "hitchCount"); "59.94.hitchCount" → ("59.94", "hitchCount").
    private static func splitRate(_ rest: Substring) -> (String, String)? {
        var index = rest.startIndex
        while index < rest.endIndex {
            guard let dot = rest[index...].firstIndex(of: ".") else { return nil }
            let next = rest.index(after: dot)
            if next < rest.endIndex, !rest[next].isNumber {
                return (String(rest[..<dot]), String(rest[next...]))
            }
            index = next
        }
        return nil
    }

    /// "stages[filter].mainThreadMs" → ("filter", "mainThreadMs").
    private static func subscripted(_ path: String, _ collection: String) -> (String, String)? {
        guard path.hasPrefix(collection + "["), let close = path.range(of: "].", options: .backwards) else { return nil }
        let subject = path[path.index(path.startIndex, offsetBy: collection.count + 1)..<close.lowerBound]
        return (String(subject), String(path[close.upperBound...]))
    }
}
