// Placeholder until its owner lands the real command.
enum BenchSample: Subcommand {
    static let name = "sample"
    static let summary = "Sampling profiler overhead at 1 kHz."
    static let help = "USAGE: hitch sample (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch sample' is not built yet")
    }
}
