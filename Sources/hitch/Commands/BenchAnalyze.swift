// Placeholder until its owner lands the real command.
enum BenchAnalyze: Subcommand {
    static let name = "analyze"
    static let summary = "Analyzer throughput and resident memory."
    static let help = "USAGE: hitch analyze (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch analyze' is not built yet")
    }
}
