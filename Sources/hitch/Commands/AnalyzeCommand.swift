// Placeholder until its owner lands the real command.
enum AnalyzeCommand: Subcommand {
    static let name = "analyze"
    static let summary = "Hitch time ratio at 60/120 Hz, stage cost, view updates, decode bandwidth."
    static let help = "USAGE: hitch analyze (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch analyze' is not built yet")
    }
}
