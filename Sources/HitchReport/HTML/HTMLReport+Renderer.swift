// `hitch analyze --format html`: the same page `hitch report` writes, behind the renderer protocol.
extension HTMLReport: AnalysisRenderer {
    public static let format = "html"
    public static func render(_ input: ReportInput) throws -> String {
        render(input.analysis, title: input.title)
    }
}
