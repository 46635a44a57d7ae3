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
        self.segments = segments
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
        a.hitches = [anyKey: HitchFigures()]
        a.frames = [FrameSample()]
        a.stages = [StageFigures()]
        a.views = [ViewFigures()]
        var edge = InvalidationEdge(); edge.writer = ""
        a.invalidations = [edge]
        a.invalidationSources = [InvalidationSource()]
        var attribution = HitchAttribution()
        attribution.stages = [NamedDuration()]; attribution.bodies = [NamedDuration()]; attribution.stacks = [SampledStack()]
        a.hitchAttributions = [attribution]
        a.offenders = [Offender()]
        a.samples.folded = [FoldedStack()]; a.samples.foldedInHitches = [FoldedStack()]
        var decode = DecodeFigures(); decode.ops = [OpFigures()]
        a.decode = decode
        a.tokens = TokenFigures()
        var churn = IdentityChurnFigures()
        churn.builtByReason = [anyKey: 0]; churn.tornDownByReason = [anyKey: 0]
        churn.types = [IdentityChurnType()]; churn.unstableIdentity = [UnstableIdentitySlot()]; churn.worstUpdates = [ChurnUpdate()]
        a.identityChurn = churn
        return a
    }

    /// Built on demand (cheap: a few dozen keys); a budget file is validated once per run.
    public static var schemaObject: Any { (try? schemaExample.jsonObject()) ?? [String: Any]() }

    /// The stable JSON rendering: sorted keys, two-space indentation.
    public func jsonData(pretty: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try encoder.encode(self)
    }

    /// The JSON as Foundation objects, for metric paths.
    public func jsonObject() throws -> Any {
        try JSONSerialization.jsonObject(with: jsonData(pretty: false))
    }
}
