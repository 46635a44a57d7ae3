// `hitch bench <what>`: benchmarks that print JSON for CI scripts (ratios measured in one run).
enum BenchCommand: Subcommand {
    static let hasNestedSubcommands = true
    static let name = "bench"
    static let summary = "Benchmarks (record, sample, analyze, decode, ui, import, watchdog) and test traces; --format json for scripts."
    static let help = """
    USAGE: hitch bench <benchmark> [--format text|json]

    BENCHMARKS:
      record    Recording cost per event against one bare timestamp read; reader throughput.
      sample    Sampling profiler overhead on a busy loop (default 250 Hz), beside the floor.
      analyze   Analyzer throughput and resident memory on a generated trace.
      decode    LLM decode bandwidth per weight format against measured triad bandwidth.
      ui        Headless UI runtime cost per frame (update, diff, layout, display list, allocations).
      import    Importer throughput per format (framestats, Perfetto, xctrace) beside the FXT reader's.
      watchdog  The hang watchdog's cost on the feed at 120 Hz, side by side with it off.
      traces    Not a measurement: writes a fleet of seeded synthetic traces for hitch merge and the fleet job.

    OPTIONS:
      -h, --help   Show this help ('hitch bench <benchmark> --help' for the benchmark's options).

    EXAMPLES:
      hitch bench analyze --format json
      hitch bench record --format json
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let benchmarks: [SubcommandEntry] = [BenchRecord.entry, BenchSample.entry, BenchAnalyze.entry, BenchDecode.entry, BenchUI.entry, BenchImport.entry,
                                               BenchTraces.entry, BenchWatchdog.entry]
        return try dispatch(&arguments, among: benchmarks, parent: "bench")
    }
}
