import Foundation
import HitchAnalysis
import HitchHistory
import HitchReader

/// What the history tests store and read: runs with known figures, a small trace, scratch paths.
public enum HistoryFixtures {
    public static let machine = MachineInfo(name: "runner-1", cpuModel: "Test CPU", cores: 8, refreshHz: 120)

    /// Run `index` of a branch: commit `commit<index>`, a hitch ratio of `value` (default the index),
    /// a steadily rising stage and a flat decode rate.
    public static func run(_ index: Int, branch: String = "main", value: Double? = nil, tags: [String: String] = [:]) -> RunRecord {
        RunRecord(id: RunIdentity.runID(traceHashes: ["trace\(index)"], commit: "commit\(index)", machine: machine),
                  commit: "commit\(index)", branch: branch, timeMs: 1_700_000_000_000 + Int64(index) * 1000, machine: machine,
                  tags: tags, traces: ["run\(index).fxt"],
                  metrics: [MetricValue(metric: "hitches.120.hitchTimeRatioMsPerS", value: value ?? Double(index), unit: "ms/s", absoluteFloor: 0.5),
                            MetricValue(metric: "stages[filter].selfMs", value: 2 * Double(index), unit: "ms per frame", absoluteFloor: 0.5),
                            MetricValue(metric: "decode.tokensPerSecond", value: 100, unit: "tok/s", higherIsBetter: true, absoluteFloor: 0.1)])
    }

    /// A synthetic trace of 300 frames (`SyntheticTrace`).
    public static func writeSmallTrace(_ path: String, seed: UInt64 = 3) throws {
        let writer = try TraceFileWriter(path: path)
        var generator = SyntheticTrace(seed: seed)
        _ = generator.write(to: writer, targetBytes: .max, maxFrames: 300)
        _ = try writer.close()
    }

    /// A fresh path in the temporary directory.
    public static func temporary(_ name: String) -> String {
        NSTemporaryDirectory() + "hitch-history-\(getpid())-\(UInt32.random(in: 0 ... .max))-\(name)"
    }

    /// An SQLite history of one run per ratio on main, in order.
    public static func database(ratios: [Double]) throws -> String {
        let db = temporary("history.sqlite")
        let store = try HistoryStore(location: db)
        _ = try store.add(ratios.enumerated().map { run($0, value: $1) })
        store.close()
        return db
    }

    /// Removes an SQLite database and the files beside it.
    public static func remove(_ db: String) { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(db + suffix) } }
}
