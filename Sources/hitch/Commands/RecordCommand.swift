// `hitch record <workload>`: runs a bundled workload and writes its trace.
enum RecordCommand: Subcommand {
    static let name = "record"
    static let summary = "Run a bundled workload (feed, llm) and write its trace."
    static let help = """
    USAGE: hitch record <workload> [options] -o FILE

    \(subcommandSection("WORKLOADS", subcommands))

    OPTIONS:
      -h, --help   Show this help ('hitch record <workload> --help' for the workload's options).

    EXAMPLES:
      hitch record feed --variant naive --refresh 120 -o Traces/feed-naive-120hz.fxt
      hitch record llm --weights q4_0 --tokens 48 -o Traces/llm-q4_0-120hz.fxt
    """
    static let subcommands = [RecordFeed.entry, RecordLLM.entry]
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        try dispatch(&arguments, among: subcommands, parent: name)
    }
}
