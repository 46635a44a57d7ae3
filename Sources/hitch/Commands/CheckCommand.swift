// Placeholder until its owner lands the real command.
enum CheckCommand: Subcommand {
    static let name = "check"
    static let summary = "Gate CI: compare a trace's figures with JSON budgets (exit 1 on a broken budget)."
    static let help = "USAGE: hitch check (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch check' is not built yet")
    }
}
