// `hitch bench <what>`: benchmarks that print JSON for CI scripts (ratios measured in one run).
enum BenchCommand: Subcommand {
    static let name = "bench"
    static let summary = "Benchmarks (record, sample, analyze, decode, ui, import, watchdog) and test traces; --format json for scripts."
    static let help = """
    USAGE: hitch bench <benchmark> [--format text|json]

    \(subcommandSection("BENCHMARKS", subcommands))

    OPTIONS:
      -h, --help   Show this help ('hitch bench <benchmark> --help' for the benchmark's options).

    EXAMPLES:
      hitch bench analyze --format json
      hitch bench record --format json
    """
    static let subcommands = [BenchRecord.entry, BenchSample.entry, BenchAnalyze.entry, BenchDecode.entry, BenchUI.entry, BenchImport.entry,
                              BenchWatchdog.entry, BenchTraces.entry]
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        try dispatch(&arguments, among: subcommands, parent: name)
    }
}
