// Placeholder until its owner lands the real command.
enum BenchDecode: Subcommand {
    static let name = "decode"
    static let summary = "LLM decode bandwidth against measured triad bandwidth."
    static let help = "USAGE: hitch decode (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch decode' is not built yet")
    }
}
