// Placeholder until its owner lands the real command.
enum DiffCommand: Subcommand {
    static let name = "diff"
    static let summary = "Compare two runs figure by figure, with a significance test for repeated runs."
    static let help = "USAGE: hitch diff (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch diff' is not built yet")
    }
}
