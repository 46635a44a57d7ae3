import HitchAnalysis

/// JUnit XML for CI test tabs: one test case per budget (from `hitch check`). Without budgets, one
/// test case per refresh rate, failing when its hitch time ratio is critical on Apple's test scale.
public enum JUnitReport: AnalysisRenderer {
    public static let format = "junit"

    public static func render(_ input: ReportInput) throws -> String {
        var cases: [(name: String, failure: String?, detail: String)] = []
        if input.budgets.isEmpty {
            for key in ReportText.rateKeys(input.analysis) {
                guard let h = input.analysis.hitches[key] else { continue }
                let detail = "hitches.\(key).hitchTimeRatioMsPerS = \(Format.fixed(h.hitchTimeRatioMsPerS, 3)) (\(h.verdict), \(HitchGrading.appleTestScaleName))"
                cases.append(("hitch time ratio at \(key) Hz", h.verdict == "critical" ? detail : nil, detail))
            }
        } else {
            for b in input.budgets { cases.append((b.name, b.passed ? nil : b.message, b.message)) }
        }
        let failures = cases.filter { $0.failure != nil }.count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites tests=\"\(cases.count)\" failures=\"\(failures)\">\n"
        out += "  <testsuite name=\"\(escape(input.title))\" tests=\"\(cases.count)\" failures=\"\(failures)\">\n"
        for c in cases {
            out += "    <testcase classname=\"hitch\" name=\"\(escape(c.name))\">"
            if let failure = c.failure {
                out += "\n      <failure message=\"\(escape(failure))\"/>\n    </testcase>\n"
            } else {
                out += "<system-out>\(escape(c.detail))</system-out></testcase>\n"
            }
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 forbids most control characters even escaped.
                if scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r" { out += "?" }
                else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
