import Foundation

// Metric paths name one figure of an Analysis the way its JSON reads:
//   hitches.120.hitchTimeRatioMsPerS      (a key of an object or of a keyed map)
//   stages[filter].selfMs                 (the element of an array whose name/type/source is "filter")
//   decode.ops[qkv].bandwidthGBps
//   stages[0].totalMs                     (an array position, when no element has that name)
// Budgets (`hitch check`) and comparisons (`hitch diff`) both use them.

public struct MetricPath: Sendable, Equatable, CustomStringConvertible {
    public enum Segment: Sendable, Equatable {
        case key(String)
        case element(String)
    }
    public let text: String
    public let segments: [Segment]
    public var description: String { text }

    public init(_ text: String) throws(MetricPathError) {
        self.text = text
        var segments: [Segment] = []
        var current = ""
        var index = text.startIndex
        func flush() throws(MetricPathError) {
            if !current.isEmpty { segments.append(.key(current)); current = "" }
        }
        while index < text.endIndex {
            let c = text[index]
            if c == "." {
                try flush()
                index = text.index(after: index)
            } else if c == "[" {
                try flush()
                guard let close = text[index...].firstIndex(of: "]") else { throw MetricPathError.malformed(text, "an unclosed '['") }
                let selector = String(text[text.index(after: index)..<close])
                guard !selector.isEmpty else { throw MetricPathError.malformed(text, "an empty '[]'") }
                segments.append(.element(selector))
                index = text.index(after: close)
            } else if c == "]" {
                throw MetricPathError.malformed(text, "a ']' without '['")
            } else {
                current.append(c)
                index = text.index(after: index)
            }
        }
        try flush()
        guard !segments.isEmpty else { throw MetricPathError.malformed(text, "no figure named") }
        // A fractional refresh rate is one key: `hitches.59.94.…` names `hitches["59.94"]`.
        if segments.count >= 3, segments[0] == .key("hitches"), case .key(let whole) = segments[1], case .key(let fraction) = segments[2],
           !whole.isEmpty, whole.allSatisfy({ $0.isASCII && $0.isNumber }), !fraction.isEmpty, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) {
            segments.replaceSubrange(1...2, with: [.key(whole + "." + fraction)])
        }
        self.segments = segments
    }

    /// The path of the figure beside this one: `stages[filter].p95Ms` -> `stages[filter].count`.
    public func sibling(_ key: String) -> MetricPath? {
        try? MetricPath(segments: Array(segments.dropLast()) + [.key(key)])
    }

    private init(segments: [Segment]) throws(MetricPathError) {
        guard !segments.isEmpty else { throw MetricPathError.malformed("", "no figure named") }
        self.segments = segments
        text = segments.enumerated().map { index, segment in
            switch segment {
            case .key(let key): (index == 0 ? "" : ".") + key
            case .element(let selector): "[\(selector)]"
            }
        }.joined()
    }

    /// Keys that name an array element, tried in order.
    static let identifyingKeys = ["name", "type", "source", "stack", "target"]

    public enum Resolution: Equatable, Sendable {
        case number(Double)
        case notNumeric(String)
        /// The path is valid but this analysis has no such element or section (e.g. no decode figures).
        case absent
    }

    /// Resolves against an analysis' JSON object (from `Analysis.jsonObject()`).
    public func resolve(in root: Any) -> Resolution {
        var node: Any = root
        for segment in segments {
            switch segment {
            case .key(let key):
                if let object = node as? [String: Any] {
                    guard let next = object[key] else { return .absent }
                    node = next
                } else if let array = node as? [Any], let position = Int(key), array.indices.contains(position) {
                    node = array[position]
                } else {
                    return .absent
                }
            case .element(let selector):
                guard let array = node as? [Any] else { return .absent }
                if let match = array.first(where: { element in
                    guard let object = element as? [String: Any] else { return false }
                    return Self.identifyingKeys.contains { (object[$0] as? String) == selector }
                }) {
                    node = match
                } else if let position = Int(selector), array.indices.contains(position) {
                    node = array[position]
                } else {
                    return .absent
                }
            }
        }
        if node is NSNull { return .absent }
        if let number = node as? NSNumber { return .number(number.doubleValue) }
        if let string = node as? String { return .notNumeric("\"\(string)\"") }
        return .notNumeric(node is [Any] ? "a list" : "an object")
    }

    /// Whether the path names a figure the schema has (independent of any one trace's contents).
    public func isKnown(schema: Any = Analysis.schemaObject) -> Bool {
        var node: Any = schema
        for segment in segments {
            switch segment {
            case .key(let key):
                guard let object = node as? [String: Any] else { return false }
                if let next = object[key] { node = next }
                else if let any = object[Analysis.anyKey] { node = any }
                else { return false }
            case .element:
                guard let array = node as? [Any], let first = array.first else { return false }
                node = first
            }
        }
        return node is NSNumber
    }
}

extension MetricPath {
    /// Up to three valid paths closest to this one in `root` (an analysis' JSON object, or the
    /// schema): the first segment that does not resolve is replaced by the nearest name there, and
    /// the rest of the path is kept when it resolves from that name.
    public func suggestions(in root: Any) -> [String] {
        var node: Any = root
        var prefix = ""
        for (index, segment) in segments.enumerated() {
            let rest = Array(segments[(index + 1)...])
            switch segment {
            case .key(let key):
                guard let object = node as? [String: Any] else { return [] }
                if let next = object[key] ?? object[Analysis.anyKey] {
                    prefix += (prefix.isEmpty ? "" : ".") + key
                    node = next
                    continue
                }
                let candidates = object.keys.filter { $0 != Analysis.anyKey }.sorted()
                return Spelling.closest(to: key, among: candidates).compactMap { name in
                    Self.complete(prefix + (prefix.isEmpty ? "" : ".") + name, from: object[name] as Any, rest)
                }
            case .element(let selector):
                guard let array = node as? [Any] else { return [] }
                let names = array.compactMap { element -> String? in
                    guard let object = element as? [String: Any] else { return nil }
                    return Self.identifyingKeys.lazy.compactMap { object[$0] as? String }.first
                }.filter { !$0.isEmpty }   // the schema's one default element stands for any element
                if let match = array.first(where: { element in
                    guard let object = element as? [String: Any] else { return false }
                    return Self.identifyingKeys.contains { (object[$0] as? String) == selector }
                }) ?? (names.isEmpty ? array.first : nil) {
                    prefix += "[\(selector)]"
                    node = match
                    continue
                }
                return Spelling.closest(to: selector, among: names).compactMap { name in
                    let match = array.first { (($0 as? [String: Any]).map { o in Self.identifyingKeys.contains { (o[$0] as? String) == name } }) ?? false }
                    return Self.complete(prefix + "[\(name)]", from: match as Any, rest)
                }
            }
        }
        // Every segment resolved but the figure is not a number: suggest the numbers inside it.
        guard let object = node as? [String: Any] else { return [] }
        return object.keys.sorted().filter { object[$0] is NSNumber }.prefix(3).map { prefix + "." + $0 }
    }

    /// `prefix` followed by `rest`, if `rest` resolves from `node`; nil otherwise.
    private static func complete(_ prefix: String, from node: Any, _ rest: [Segment]) -> String? {
        var text = prefix
        var node = node
        for segment in rest {
            switch segment {
            case .key(let key):
                guard let object = node as? [String: Any], let next = object[key] ?? object[Analysis.anyKey] else { return nil }
                text += "." + key
                node = next
            case .element(let selector):
                guard let array = node as? [Any], let first = array.first else { return nil }
                text += "[\(selector)]"
                node = first
            }
        }
        return text
    }
}

/// Did-you-mean: the names closest to a misspelled one, by edit distance (the CLI's options and
/// subcommands, metric paths).
public enum Spelling {
    /// Up to `limit` of `candidates` within a few edits of `word` (or sharing its start), closest first.
    public static func closest(to word: String, among candidates: [String], limit: Int = 3) -> [String] {
        // Typos are short: long names (a hostile budget file's, a folded stack) get no suggestion,
        // which keeps the quadratic distance cheap whatever the input.
        let longest = 200
        guard word.count <= longest else { return [] }
        let lowered = word.lowercased()
        let allowed = max(2, word.count / 3)
        let scored = candidates.filter { $0.count <= longest && abs($0.count - word.count) <= allowed + longest / 4 }.map { candidate -> (String, Int) in
            let c = candidate.lowercased()
            var d = distance(lowered, c)
            if !lowered.isEmpty, c.hasPrefix(lowered) || lowered.hasPrefix(c) { d = min(d, 1) }
            return (candidate, d)
        }
        return scored.filter { $0.1 <= allowed }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(limit).map(\.0)
    }

    /// Levenshtein distance.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count), current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

public enum MetricPathError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String, String)
    public var description: String {
        switch self {
        case let .malformed(text, problem): "metric '\(text)' has \(problem)"
        }
    }
}

extension Analysis {
    /// Stands for "any key" in keyed maps of the schema example (`hitches.<rate>`, `metadata.<key>`).
    static let anyKey = "*"

    /// Every section, optional and list filled with one default element: the shape budgets validate against.
    static var schemaExample: Analysis {
        var a = Analysis()
        a.runs = [RunSummary()]
        a.recordedRates = [RecordedRate()]
        a.refreshRateChanges = [RefreshRateChange()]
        var figures = HitchFigures()
        figures.appHitchTimeRatioMsPerS = 0
        a.hitches = [anyKey: figures]
        a.recorded = figures
        var frame = FrameSample()
        frame.cause = .unknown; frame.mainThreadStates = ThreadStateSplit(); frame.mainLateStartStates = ThreadStateSplit(); frame.heldByEarlierFrames = ThreadStateSplit(); frame.latePresentMs = 0; frame.queuedBehind = 0
        a.frames = [frame]
        a.stages = [StageFigures()]
        a.views = [ViewFigures()]
        var edge = InvalidationEdge(); edge.writer = ""
        a.invalidations = [edge]
        a.invalidationSources = [InvalidationSource()]
        var attribution = HitchAttribution()
        attribution.stages = [NamedDuration()]; attribution.bodies = [NamedDuration()]; attribution.stacks = [SampledStack()]
        attribution.mainThreadStates = ThreadStateSplit(); attribution.renderThreadStates = ThreadStateSplit(); attribution.mainLateStartStates = ThreadStateSplit()
        attribution.heldByEarlierFrames = ThreadStateSplit(); attribution.latePresentMs = 0
        attribution.mainThreadSwitches = ThreadStateSplit(); attribution.machine = MachineWindow()
        attribution.queuedBehind = 0; attribution.cpuTakenBy = [NamedDuration()]
        a.hitchAttributions = [attribution]
        a.offenders = [Offender()]
        a.samples.folded = [FoldedStack()]; a.samples.foldedInHitches = [FoldedStack()]; a.samples.waitingInHitches = [Offender()]
        var threadStates = ThreadStateFigures()
        threadStates.cpuTakenByAppThreadsInHitches = [NamedDuration()]
        a.threadStates = threadStates
        var decode = DecodeFigures(); decode.ops = [OpFigures()]
        a.decode = decode
        a.tokens = TokenFigures()
        var churn = IdentityChurnFigures()
        churn.builtByReason = [anyKey: 0]; churn.tornDownByReason = [anyKey: 0]
        churn.types = [IdentityChurnType()]; churn.unstableIdentity = [UnstableIdentitySlot()]; churn.worstUpdates = [ChurnUpdate()]
        a.identityChurn = churn
        var hangs = HangFigures()
        var hang = HangDetail()
        hang.type = ""; hang.frameID = 0; hang.states = ThreadStateSplit(); hang.blockedOn = .lock; hang.blockedIn = ""; hang.wokenBy = ""
        hangs.list = [hang]; hangs.watchdogThresholdMs = 0
        a.hangs = hangs
        return a
    }

    /// Built on demand (cheap: a few dozen keys); a budget file is validated once per run.
    public static var schemaObject: Any { (try? schemaExample.jsonObject()) ?? [String: Any]() }

    /// The stable JSON rendering: sorted keys, two-space indentation.
    public func jsonData(pretty: Bool = true) throws -> Data {
        try JSONOutput.encoder(pretty: pretty).encode(self)
    }

    /// The JSON as Foundation objects, for metric paths.
    public func jsonObject() throws -> Any {
        try JSONSerialization.jsonObject(with: jsonData(pretty: false))
    }
}
