import Foundation
import Testing
@testable import HitchReport
import HitchAnalysis

/// The fleet page keeps the reports' rules: every name escaped, no script of a trace's, links only
/// inside the page or to a report file beside it.
@Suite struct FleetReportTests {
    static let hostile = "<script>alert(1)</script>\"'&\u{202E}"

    static func figures() -> FleetFigures {
        var f = FleetFigures()
        f.traces = 2
        var hitches = HitchFigures()
        hitches.rateHz = 120
        hitches.frameCount = 240
        hitches.hitchTimeRatioMsPerS = 12
        f.fleet.hitches["120"] = hitches
        f.fleet.recorded = hitches
        f.fleet.refreshRatesHz = [120]
        var row = BreakdownRow()
        row.values = [hostile]
        row.traces = 2
        row.recorded = hitches
        var breakdown = Breakdown()
        breakdown.dimensions = ["appVersion"]
        breakdown.rows = [row]
        f.breakdowns = [breakdown]
        var worst = FleetTrace()
        worst.path = "/traces/" + hostile + ".fxt"
        worst.dimensions = ["device": hostile]
        worst.hitchTimeRatioMsPerS = 12
        f.worstTraces = [worst]
        var offender = Offender()
        offender.name = hostile
        offender.weightedHitchMs = 3
        f.fleet.offenders = [offender]
        return f
    }

    @Test func namesFromTracesAreEscapedAndThePageLoadsNothing() {
        let html = FleetReport.render(Self.figures(), title: Self.hostile, worstReports: ("worst", 1))
        #expect(!html.contains("<script>alert"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("Content-Security-Policy") && html.contains("default-src &#39;none&#39;"))
        #expect(html.contains("href=\"./worst/worst-001.html\""))
        let hrefs = html.components(separatedBy: "href=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(hrefs.allSatisfy { $0.hasPrefix("#") || $0.hasPrefix("./worst/") }, "\(hrefs)")
    }

    @Test func fileLinksAreOnlyPlainRelativePaths() {
        for refused in ["javascript:alert(1)", "../secret.html", "/etc/passwd", "worst/../../x.html", "a b.html", "http://example.com/x",
                        "", "worst//x.html", "./x.html"] {
            #expect(Attribute.link(toFileBesideThePage: refused) == nil, "\(refused)")
        }
        #expect(Attribute.link(toFileBesideThePage: "worst/worst-001.html")?.value == "./worst/worst-001.html")
        #expect(FleetReport.reportName(rank: 7) == "worst-007.html" && FleetReport.reportName(rank: 1234) == "worst-1234.html")
    }
}
