import Testing
@testable import HitchReport

@Suite struct TrendReportTests {
    @Test func downSamplingKeepsEveryChangePoint() {
        let count = 20_000
        let runs = (0..<count).map { TrendReportInput.Run(id: "r\($0)", commit: "c\($0)", branch: "main", time: "t", machine: "m", tags: [], traces: []) }
        let changes = [1234, 1235, 7777, 19_999].map { TrendReportInput.Change(runIndex: $0, verdict: "regression", summary: "s") }
        let metric = TrendReportInput.Metric(name: "m", values: (0..<count).map { Double($0 % 13) }, changes: changes)
        let page = TrendReport.render(TrendReportInput(title: "t", subtitle: [], runs: runs, metrics: [metric]))
        for change in changes { #expect(page.contains("id=\"run-\(change.runIndex + 1)\""), "change at \(change.runIndex) drawn and listed") }
        let points = page.components(separatedBy: "<circle").count - 1
        #expect(points <= 150 + changes.count && points >= 150, "\(points) points for \(count) runs")
        #expect(page.utf8.count < 200_000, "\(page.utf8.count) bytes")
    }
}
