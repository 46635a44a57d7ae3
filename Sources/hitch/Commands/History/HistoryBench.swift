#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAlgorithms
import HitchAnalysis
import HitchHistory
import HitchReport

enum HistoryBench: Subcommand {
    static let name = "bench"
    static let summary = "Time check and report on a generated history (JSON)."
    static let help = """
    USAGE: hitch history bench [--runs 100000] [--metrics 50] [--db PATH] [--keep]

    Fills an SQLite history (a temporary file unless --db) with generated runs on one branch, each
    metric a noisy series with a few steps, then times what `hitch history check` and `report` do
    (open, read the branch, detect change points, judge / render), wall and CPU time (all threads).
    Prints JSON.

    OPTIONS:
      --runs N               Runs to generate (default 100000).
      --metrics N            Metrics per run (default 50).
      --db PATH              The SQLite file to fill (default a temporary file, removed after).
      --keep                 Keep the database (with --db).
      -h, --help             Show this help.

    EXAMPLE:
      hitch history bench --runs 20000 --metrics 20
    """
    struct Figures: Encodable {
        var runs, metrics: Int
        var fillSeconds, checkSeconds, reportSeconds: Double
        /// CPU time of every thread of the process (the machine is shared: wall time counts other processes' slices).
        var checkCPUSeconds, reportCPUSeconds: Double
        var changePoints, regressions, reportBytes: Int
        var databaseBytes: Int
        var loadAverage: String
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let runCount = try arguments.number("--runs", in: 10...10_000_000, default: 100_000)
        let metricCount = try arguments.number("--metrics", in: 1...1000, default: 50)
        let keep = arguments.flag("--keep")
        let given = try arguments.option("--db")
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch history bench' takes no arguments (see --help)") }
        let path = given ?? NSTemporaryDirectory() + "hitch-history-bench-\(getpid()).sqlite"
        if given == nil { unlink(path) }
        defer { if given == nil && !keep { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } } }
        var cpu = 0.0
        func processCPUSeconds() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        func seconds(_ body: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds, startCPU = processCPUSeconds()
            try body()
            cpu = processCPUSeconds() - startCPU
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        let fill = try seconds {
            let store = try HistoryCommand.store { () throws(HistoryError) in try HistoryStore(location: path) }
            defer { store.close() }
            var generator = SeededGenerator(seed: 0x9E37_79B9_7F4A_7C15)
            func uniform() -> Double { Double(generator.next() >> 11) / Double(1 << 52) - 1 }   // in [-1, 1)
            let machine = MachineInfo(name: "bench", cpuModel: "generated", cores: 2, refreshHz: 120)
            var batch: [RunRecord] = []
            for index in 0..<runCount {
                let metrics = (0..<metricCount).map { m -> MetricValue in
                    // Every metric steps up 50% at 3/4 of the history and metric 0 also at 1/4.
                    var level = 10.0 + Double(m)
                    if index >= runCount * 3 / 4 { level *= 1.5 }
                    if m == 0 && index >= runCount / 4 { level *= 1.2 }
                    return MetricValue(metric: "bench.metric\(m < 10 ? "0" : "")\(m).valueMs", value: level + uniform(), absoluteFloor: 0.1)
                }
                let id = RunIdentity.runID(traceHashes: [String(index)], commit: "c\(index)", machine: machine)
                batch.append(RunRecord(id: id, commit: "c\(index)", branch: "main", timeMs: 1_700_000_000_000 + Int64(index) * 60_000,
                                       machine: machine, metrics: metrics))
                if batch.count == 5_000 || index == runCount - 1 {
                    _ = try HistoryCommand.store { () throws(HistoryError) in try store.add(batch) }
                    batch.removeAll(keepingCapacity: true)
                }
            }
        }
        var result: HistoryCheckResult?
        let check = try seconds {
            let store = try HistoryCommand.store { () throws(HistoryError) in try HistoryStore(location: path) }
            defer { store.close() }
            let history = try HistoryCommand.store { () throws(HistoryError) in try store.series(branch: "main") }
            result = HistoryCheck.check(history, branch: "main", thresholdPercent: RunComparison.defaultThresholdPercent)
        }
        let checkCPU = cpu
        var bytes = 0
        let report = try seconds {
            let store = try HistoryCommand.store { () throws(HistoryError) in try HistoryStore(location: path) }
            defer { store.close() }
            let history = try HistoryCommand.store { () throws(HistoryError) in try store.series(branch: "main") }
            let page = HistoryReport.render(history, branch: "main", threshold: RunComparison.defaultThresholdPercent, options: ChangePointOptions())
            let output = path + ".html"
            try writeOutput(page, to: output)
            bytes = page.utf8.count
            unlink(output)
        }
        let reportCPU = cpu
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        let load = BenchClock.loadAverages().joined(separator: " ")
        let figures = Figures(runs: runCount, metrics: metricCount, fillSeconds: fill, checkSeconds: check, reportSeconds: report,
                              checkCPUSeconds: checkCPU, reportCPUSeconds: reportCPU, changePoints: result?.metrics.reduce(0) { $0 + $1.changePoints.count } ?? 0,
                              regressions: result?.regressions.count ?? 0, reportBytes: bytes, databaseBytes: size, loadAverage: load)
        try writeStandardOutput(JSONOutput.text(figures))
        return .ok
    }
}
