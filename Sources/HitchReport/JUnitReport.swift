import HitchAnalysis

/// JUnit XML for CI test tabs: one test case per budget (from `hitch check`). Without budgets, one
/// test case per refresh rate, failing when its hitch time ratio is critical on Apple's test scale.
public enum JUnitReport: AnalysisRenderer {
    public static let format = "junit"

    public static func render(_ input: ReportInput) throws -> String {
        var cases: [(name: String, failure: String?, detail: String, skipped: Bool)] = []
        if input.budgets.isEmpty {
            for key in ReportText.rateKeys(input.analysis) {
                guard let h = input.analysis.hitches[key] else { continue }
                let detail = "hitches.\(key).hitchTimeRatioMsPerS = \(Format.fixed(h.hitchTimeRatioMsPerS, 3)) (\(h.verdict), \(HitchGrading.appleTestScaleName))"
                cases.append(("hitch time ratio at \(key) Hz", h.verdict == .critical ? detail : nil, detail, false))
            }
        } else {
            for b in input.budgets { cases.append((b.name, b.status == .failed ? b.message : nil, b.message, b.status == .skipped)) }
        }
        let failures = cases.filter { $0.failure != nil }.count
        let skipped = cases.filter(\.skipped).count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites tests=\"\(cases.count)\" failures=\"\(failures)\" skipped=\"\(skipped)\">\n"
        out += "  <testsuite name=\"\(escape(input.title))\" tests=\"\(cases.count)\" failures=\"\(failures)\" skipped=\"\(skipped)\">\n"
        for c in cases {
            out += "    <testcase classname=\"hitch\" name=\"\(escape(c.name))\">"
            if c.skipped {
                out += "\n      <skipped message=\"\(escape(c.detail))\"/>\n    </testcase>\n"
            } else if let failure = c.failure {
                out += "\n      <failure message=\"\(escape(failure))\"/>\n    </testcase>\n"
            } else {
                out += "<system-out>\(escape(c.detail))</system-out></testcase>\n"
            }
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    /// XML text and attribute escaping: the HTML report's, which is XML-safe too (character
    /// references, and U+FFFD for the control characters XML 1.0 forbids).
    static func escape(_ text: String) -> String {
        var out = ""
        HTMLWriter.appendEscaped(text, to: &out)
        return out
    }
}
