// Placeholder until its owner lands the real command.
enum ExportCommand: Subcommand {
    static let name = "export"
    static let summary = "Convert a trace for other viewers: chrome (trace-event JSON) or folded stacks."
    static let help = "USAGE: hitch export (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch export' is not built yet")
    }
}
