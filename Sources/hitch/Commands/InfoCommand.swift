// Placeholder until its owner lands the real command.
enum InfoCommand: Subcommand {
    static let name = "info"
    static let summary = "Summarize a trace: duration, threads, events by kind, drops, metadata."
    static let help = "USAGE: hitch info (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch info' is not built yet")
    }
}
