import HitchAnalysis
import HitchReport

// `hitch analyze TRACE...`: the main CI job. Several traces are several runs of one workload,
// merged (figures aggregate; frames never join across files); runs of different workloads or
// refresh rates are refused unless --merge says so.
enum AnalyzeCommand: Subcommand {
    static let name = "analyze"
    static let summary = "Hitch time ratio at 60/120 Hz, stage cost, view updates, decode bandwidth."
    static let help = """
    USAGE: hitch analyze TRACE... [options]

    Reads each trace in one streaming pass and reports: hitches judged at the recorded refresh rate
    and replayed at each --refresh rate (hitch time ratio graded on Apple's test scale and Xcode
    Organizer's field scale), per-stage pipeline cost, view body evaluations, the invalidation graph,
    hitch attribution, and for LLM traces decode bandwidth against the recorded peak.
    Several traces are merged as repeated runs of one workload: their metadata must name the same
    workload and refresh rate (else use --merge, or compare them with hitch diff). Definitions: docs/METRICS.md.

    ARGUMENTS:
      TRACE                  Trace files: FXT (.fxt), or another tool's (Chrome JSON, framestats, Perfetto, xctrace),
                             imported on the way in (see 'hitch import --help').

    OPTIONS:
      --format FORMAT        text (default), json (stable schema), markdown (CI summary), junit, html.
      --merge                Merge traces even when their workloads or refresh rates differ.
    \(CommandContext.optionsHelp)
      -o, --output FILE      Write the report to FILE (- for standard output, the default).
      -h, --help             Show this help.

    EXAMPLES:
      hitch analyze Traces/feed-naive-120hz.fxt
      hitch analyze Traces/feed-naive-120hz.fxt --format json --refresh 60,90,120 -o naive.json
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", Renderers.formats, default: "text")
        let merge = arguments.flag("--merge")
        let context = try CommandContext.parse(&arguments, command: name)
        let paths = try arguments.positionals(name, count: 1...Int.max, what: "at least one TRACE")
        let analysis = try context.analyze(paths, merge: merge)
        CommandContext.warnIfCutShort(analysis)
        guard let renderer = Renderers.named(format) else { throw CLIError("unknown format '\(format)'") }
        let title = analysis.runs.count <= 1 ? "hitch analyze" : "hitch analyze (\(analysis.runs.count) runs)"
        let text = try renderer.render(ReportInput(analysis: analysis, title: title))
        try context.write(text, inputs: paths)
        return .ok
    }
}
