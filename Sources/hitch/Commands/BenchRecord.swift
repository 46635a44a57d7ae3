// Placeholder until its owner lands the real command.
enum BenchRecord: Subcommand {
    static let name = "record"
    static let summary = "Recording cost per event against one bare timestamp read."
    static let help = "USAGE: hitch record (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch record' is not built yet")
    }
}
