// Placeholder until its owner lands the real command.
enum ReportCommand: Subcommand {
    static let name = "report"
    static let summary = "Write a self-contained HTML report (one trace, or BASE NEW side by side)."
    static let help = "USAGE: hitch report (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch report' is not built yet")
    }
}
