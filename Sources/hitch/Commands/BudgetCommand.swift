// Placeholder until its owner lands the real command.
enum BudgetCommand: Subcommand {
    static let name = "budget"
    static let summary = "Print an on-device LLM's memory budget against a device limit."
    static let help = "USAGE: hitch budget (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch budget' is not built yet")
    }
}
