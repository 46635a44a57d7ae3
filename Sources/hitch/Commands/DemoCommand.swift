// Placeholder until its owner lands the real command.
enum DemoCommand: Subcommand {
    static let name = "demo"
    static let summary = "Record the bundled workloads, analyze them and write HTML reports."
    static let help = "USAGE: hitch demo (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch demo' is not built yet")
    }
}
