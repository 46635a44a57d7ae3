// Placeholder until its owner lands the real command.
enum RecordFeed: Subcommand {
    static let name = "feed"
    static let summary = "The 10,000-row search-and-scroll feed workload."
    static let help = "USAGE: hitch feed (not built yet)"
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        throw CLIError("'hitch feed' is not built yet")
    }
}
