import Foundation

// CI budgets: `hitch check TRACE --budget FILE`. The format (docs/METRICS.md "Budgets"):
//   {"budgets": [{"metric": "hitches.120.hitchTimeRatioMsPerS", "max": 5},
//                {"metric": "decode.tokensPerSecond", "min": 20, "name": "decode speed"}]}

public struct Budget: Sendable, Equatable {
    public var name: String
    public var metric: MetricPath
    public var max: Double?
    public var min: Double?
}

public enum BudgetError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case invalid(path: String, reason: String)
    /// One line, whatever the file put in a metric name or key: control characters are escaped.
    public var description: String {
        let text = switch self {
        case let .unreadable(path, reason): "cannot read budget file '\(path)': \(reason)"
        case let .invalid(path, reason): "bad budget file '\(path)': \(reason)"
        }
        return text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? $0.escaped(asASCII: true) : String($0) }.joined()
    }
}

/// The result of one budget against one analysis.
public struct BudgetOutcome: Sendable, Equatable, Codable {
    public var name: String
    public var metric: String
    public var max: Double?
    public var min: Double?
    /// The figure's value; nil when the trace has no such figure (the budget then passes, noted).
    public var actual: Double?
    public var passed: Bool
    /// One line: "hitches.120.hitchTimeRatioMsPerS = 12.3 > max 5".
    public var message: String
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
        let allowed: Set<String> = ["metric", "max", "min", "name"]
        var budgets: [Budget] = []
        let schema = Analysis.schemaObject
        for (index, item) in list.enumerated() {
            let at = "budget \(index + 1)"
            guard let entry = item as? [String: Any] else { throw .invalid(path: path, reason: "\(at) is not an object") }
            if let unknown = entry.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw .invalid(path: path, reason: "\(at) has unknown key \"\(unknown)\" (allowed: metric, max, min, name)")
            }
            guard let metricText = entry["metric"] as? String else { throw .invalid(path: path, reason: "\(at) needs a \"metric\" string") }
            let metric: MetricPath
            do { metric = try MetricPath(metricText) } catch { throw .invalid(path: path, reason: "\(at): \(error)") }
            guard metric.isKnown(schema: schema) else {
                throw .invalid(path: path, reason: "\(at): unknown metric '\(metricText)' (see docs/METRICS.md for the JSON schema)")
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
            let name = entry["name"] as? String ?? metricText
            budgets.append(Budget(name: name, metric: metric, max: max, min: min))
        }
        return budgets
    }

    /// Reads and parses a budget file.
    public static func load(path: String) throws(BudgetError) -> [Budget] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(path: path, reason: FileManager.default.fileExists(atPath: path) ? "not readable" : "no such file")
        }
        guard data.count <= maxFileBytes else { throw .invalid(path: path, reason: "larger than \(maxFileBytes >> 20) MB") }
        return try parse(data, path: path)
    }

    /// Checks every budget against an analysis. A figure that is not numeric is a budget-file error.
    public static func evaluate(_ budgets: [Budget], against analysis: Analysis, path: String = "budget") throws(BudgetError) -> [BudgetOutcome] {
        let root: Any
        do { root = try analysis.jsonObject() } catch { throw .invalid(path: path, reason: "cannot encode the analysis: \(error)") }
        var outcomes: [BudgetOutcome] = []
        for budget in budgets {
            var outcome = BudgetOutcome(name: budget.name, metric: budget.metric.text, max: budget.max, min: budget.min,
                                        actual: nil, passed: true, message: "")
            switch budget.metric.resolve(in: root) {
            case .absent:
                outcome.message = "\(budget.metric) is not in this trace (budget skipped)"
            case .notNumeric(let what):
                throw .invalid(path: path, reason: "metric '\(budget.metric)' is \(what), not a number")
            case .number(let value):
                outcome.actual = value
                if let max = budget.max, value > max {
                    outcome.passed = false
                    outcome.message = "\(budget.metric) = \(format(value)) > max \(format(max))"
                } else if let min = budget.min, value < min {
                    outcome.passed = false
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

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value.rounded(decimals: 3))
    }
}

extension BudgetOutcome {
    /// Budget outcomes as stable JSON (sorted keys).
    public static func jsonData(_ outcomes: [BudgetOutcome]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(outcomes)
    }
}
