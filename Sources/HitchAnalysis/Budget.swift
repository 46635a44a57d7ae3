import Foundation

// CI budgets: `hitch check TRACE --budget FILE`. The format (docs/METRICS.md "Budgets"):
//   {"budgets": [{"metric": "hitches.120.hitchTimeRatioMsPerS", "max": 5},
//                {"metric": "decode.tokensPerSecond", "min": 20, "name": "decode speed", "optional": true}]}
// A check never passes a budget it could not evaluate: a figure the trace lacks is an error,
// unless the budget is marked optional (then it is skipped, and said to be).

public struct Budget: Sendable, Equatable {
    public var name: String
    public var metric: MetricPath
    public var max: Double?
    public var min: Double?
    /// May be skipped when the trace has no such figure (a decode budget shared by feed and LLM traces).
    public var optional: Bool = false
}

public enum BudgetError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case invalid(path: String, reason: String)
    /// A well-formed budget on a figure the trace does not have: the trace's lack, not the file's fault.
    case missingFigure(reason: String)
    /// One line, whatever the file put in a metric name or key: control characters are escaped.
    public var description: String {
        let text = switch self {
        case let .unreadable(path, reason): "cannot read budget file '\(path)': \(reason)"
        case let .invalid(path, reason): "bad budget file '\(path)': \(reason)"
        case let .missingFigure(reason): reason
        }
        return text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? $0.escaped(asASCII: true) : String($0) }.joined()
    }
}

public enum BudgetStatus: String, Codable, Sendable {
    case passed
    case failed
    /// An optional budget whose figure the trace does not have.
    case skipped
}

/// The result of one budget against one analysis.
public struct BudgetOutcome: Sendable, Equatable, Codable {
    public var name: String
    public var metric: String
    public var max: Double?
    public var min: Double?
    /// The figure's value; nil when the budget was skipped.
    public var actual: Double?
    public var status: BudgetStatus
    public var passed: Bool { status != .failed }
    /// One line: "hitches.120.hitchTimeRatioMsPerS = 12.3 > max 5".
    public var message: String
    /// Set when the figure stands on too few values to gate on (a percentile of a handful).
    public var warning: String? = nil
}

public enum BudgetFile {
    /// Limits that keep a hostile budget file's cost small (each budget costs ~3 KB and ~20 us).
    public static let maxBudgets = 10_000
    public static let maxFileBytes = 4 << 20

    /// Parses and validates a budget file's contents; every problem names the budget's index.
    public static func parse(_ data: Data, path: String) throws(BudgetError) -> [Budget] {
        let root: Any
        do { root = try JSONSerialization.jsonObject(with: data) } catch {
            throw .invalid(path: path, reason: "not valid JSON")
        }
        guard let object = root as? [String: Any], let list = object["budgets"] as? [Any] else {
            throw .invalid(path: path, reason: "expected an object with a \"budgets\" list")
        }
        guard list.count <= maxBudgets else {
            throw .invalid(path: path, reason: "\(list.count) budgets; at most \(maxBudgets) are allowed")
        }
        guard !list.isEmpty else {
            throw .invalid(path: path, reason: "the \"budgets\" list is empty: a check of nothing would always pass")
        }
        let allowed: Set<String> = ["metric", "max", "min", "name", "optional"]
        var budgets: [Budget] = []
        let schema = Analysis.schemaObject
        for (index, item) in list.enumerated() {
            let at = "budget \(index + 1)"
            guard let entry = item as? [String: Any] else { throw .invalid(path: path, reason: "\(at) is not an object") }
            if let unknown = entry.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw .invalid(path: path, reason: "\(at) has unknown key \"\(unknown)\" (allowed: metric, max, min, name, optional)")
            }
            guard let metricText = entry["metric"] as? String else { throw .invalid(path: path, reason: "\(at) needs a \"metric\" string") }
            let metric: MetricPath
            do { metric = try MetricPath(metricText) } catch { throw .invalid(path: path, reason: "\(at): \(error)") }
            guard metric.isKnown(schema: schema) else {
                let closest = metric.suggestions(in: schema)
                throw .invalid(path: path, reason: "\(at): unknown metric '\(metricText)'"
                               + (closest.isEmpty ? "" : "; closest: " + closest.joined(separator: ", ")) + " (docs/METRICS.md lists every figure)")
            }
            func limit(_ key: String) throws(BudgetError) -> Double? {
                guard let value = entry[key] else { return nil }
                // JSON true/false arrive as Bool (or as an NSNumber of ObjC type "c"): not numbers.
                guard !(type(of: value) == Bool.self), let number = value as? NSNumber,
                      String(cString: number.objCType) != "c", number.doubleValue.isFinite else {
                    throw .invalid(path: path, reason: "\(at): \"\(key)\" must be a number")
                }
                return number.doubleValue
            }
            let max = try limit("max"), min = try limit("min")
            guard max != nil || min != nil else { throw .invalid(path: path, reason: "\(at) needs \"max\" or \"min\"") }
            if let max, let min, min > max { throw .invalid(path: path, reason: "\(at): \"min\" (\(format(min))) is above \"max\" (\(format(max)))") }
            var optional = false
            if let flag = entry["optional"] {
                let isBoolean = type(of: flag) == Bool.self || (flag as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
                guard isBoolean, let value = flag as? Bool else {
                    throw .invalid(path: path, reason: "\(at): \"optional\" must be true or false")
                }
                optional = value
            }
            if let name = entry["name"], !(name is String) { throw .invalid(path: path, reason: "\(at): \"name\" must be a string") }
            let name = entry["name"] as? String ?? metricText
            budgets.append(Budget(name: name, metric: metric, max: max, min: min, optional: optional))
        }
        return budgets
    }

    /// Reads and parses a budget file.
    public static func load(path: String) throws(BudgetError) -> [Budget] {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .unreadable(path: path, reason: "it is a directory; --budget takes a JSON file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(path: path, reason: FileManager.default.fileExists(atPath: path) ? "permission denied or not a regular file" : "no such file")
        }
        guard data.count <= maxFileBytes else { throw .invalid(path: path, reason: "larger than \(maxFileBytes >> 20) MB") }
        return try parse(data, path: path)
    }

    /// The refresh rates (Hz) the budgets name (`hitches.90.…`): the analysis must judge at them.
    public static func refreshRates(in budgets: [Budget]) -> [Double] {
        var rates: [Double] = []
        for budget in budgets {
            guard budget.metric.segments.count >= 2, budget.metric.segments[0] == .key("hitches"),
                  case .key(let key) = budget.metric.segments[1], let rate = Double(key), rate.isFinite, rate > 0,
                  !rates.contains(rate) else { continue }
            rates.append(rate)
        }
        return rates
    }

    /// Checks every budget against an analysis. A figure that is not numeric, or that the trace does
    /// not have (unless the budget is optional), is a budget-file error: nothing passes unchecked.
    public static func evaluate(_ budgets: [Budget], against analysis: Analysis, path: String = "budget") throws(BudgetError) -> [BudgetOutcome] {
        let root: Any
        do { root = try analysis.jsonObject() } catch { throw .invalid(path: path, reason: "cannot encode the analysis: \(error)") }
        var outcomes: [BudgetOutcome] = []
        for (index, budget) in budgets.enumerated() {
            var outcome = BudgetOutcome(name: budget.name, metric: budget.metric.text, max: budget.max, min: budget.min,
                                        actual: nil, status: .passed, message: "")
            switch budget.metric.resolve(in: root) {
            case .absent:
                guard budget.optional else {
                    let closest = budget.metric.suggestions(in: root)
                    let why = if let reason = analysis.replayUnavailable, budget.metric.segments.count >= 2,
                                 budget.metric.segments[0] == .key("hitches"), case .key(let rate) = budget.metric.segments[1], analysis.hitches[rate] == nil {
                        ": " + reason
                    } else if needsThreadStates(budget.metric) && analysis.threadStates == nil {
                        ": it needs thread-state records, which this trace has none of (imported traces and older recordings; docs/METRICS.md \"Thread states\"), so it cannot tell the app's hitches from the machine's"
                    } else {
                        closest.isEmpty ? "" : "; closest: " + closest.joined(separator: ", ")
                    }
                    throw .missingFigure(reason: "budget \(index + 1) of '\(path)' (\(budget.name)): the trace has no figure '\(budget.metric)'" + why
                                         + " (mark the budget \"optional\": true to skip it where the figure is absent)")
                }
                outcome.status = .skipped
                outcome.message = "\(budget.metric) is not in this trace (optional budget skipped)"
            case .notNumeric(let what):
                throw .invalid(path: path, reason: "metric '\(budget.metric)' is \(what), not a number")
            case .number(let value):
                outcome.actual = value
                outcome.warning = thinPercentileWarning(budget.metric, root)
                if let max = budget.max, value > max {
                    outcome.status = .failed
                    outcome.message = "\(budget.metric) = \(format(value)) > max \(format(max))"
                } else if let min = budget.min, value < min {
                    outcome.status = .failed
                    outcome.message = "\(budget.metric) = \(format(value)) < min \(format(min))"
                } else {
                    let limits = [budget.min.map { "min \(format($0))" }, budget.max.map { "max \(format($0))" }].compactMap { $0 }
                    outcome.message = "\(budget.metric) = \(format(value)) within \(limits.joined(separator: ", "))"
                }
            }
            outcomes.append(outcome)
        }
        return outcomes
    }

    /// Figures that exist only where the trace recorded thread states: the app's share of the hitch
    /// time, the split by cause, and the thread-state figures themselves.
    static func needsThreadStates(_ metric: MetricPath) -> Bool {
        let text = metric.text
        return text.hasPrefix("threadStates") || text.contains("byCause") || text.contains("appHitchTimeRatioMsPerS")
    }

    /// A warning when the budget's figure is a percentile of fewer values than it needs
    /// (`PercentileEvidence`); its sample count is the `count` beside it.
    static func thinPercentileWarning(_ metric: MetricPath, _ root: Any) -> String? {
        guard case .key(let key)? = metric.segments.last, let level = PercentileEvidence.level(ofKey: key),
              let count = metric.sibling("count").flatMap({ path -> Double? in
                  if case .number(let n) = path.resolve(in: root) { return n } else { return nil }
              }) else { return nil }
        let values = Int(count)
        guard PercentileEvidence.isThin(percentile: level, count: values) else { return nil }
        return "\(metric) is the P\(format(level)) of \(values) value\(values == 1 ? "" : "s"), fewer than the \(PercentileEvidence.minimumValues(forPercentile: level)) it needs "
            + "(one slow value moves it): gate it on repeated runs (hitch check run1.fxt run2.fxt … merges them) or on a figure with more samples"
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value.rounded(decimals: 3))
    }
}

extension BudgetOutcome {
    /// Budget outcomes as stable JSON (sorted keys).
    public static func jsonData(_ outcomes: [BudgetOutcome]) throws -> Data {
        try JSONOutput.encoder().encode(outcomes)
    }
}
