// Placeholder until its owner lands the real command.
enum RecordLLM: Subcommand {
    static let name = "llm"
    static let summary = "A transformer decode loop streamed to a view."
    static let help = "USAGE: hitch llm (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch llm' is not built yet")
    }
}
