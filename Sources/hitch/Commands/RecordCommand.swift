// `hitch record <workload>`: runs a bundled workload and writes its trace.
enum RecordCommand: Subcommand {
    static let hasNestedSubcommands = true
    static let name = "record"
    static let summary = "Run a bundled workload (feed, llm) and write its trace."
    static let help = """
    USAGE: hitch record <workload> [options] -o FILE

    WORKLOADS:
      feed   The 10,000-row search-and-scroll feed (see 'hitch record feed --help').
      llm    A transformer decode loop streamed to a view (see 'hitch record llm --help').

    OPTIONS:
      -h, --help   Show this help ('hitch record <workload> --help' for the workload's options).

    EXAMPLES:
      hitch record feed --variant naive --refresh 120 -o Traces/feed-naive-120hz.fxt
      hitch record llm --weights q4_0 --tokens 48 -o Traces/llm-q4_0-120hz.fxt
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let workloads: [SubcommandEntry] = [RecordFeed.entry, RecordLLM.entry]
        return try dispatch(&arguments, among: workloads, parent: "record")
    }
}
