// Placeholder until its owner lands the real command.
enum ImportCommand: Subcommand {
    static let name = "import"
    static let summary = "Convert another tool's trace (Chrome trace-event JSON) into an FXT trace."
    static let help = "USAGE: hitch import (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch import' is not built yet")
    }
}
