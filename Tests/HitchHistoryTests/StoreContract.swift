import Foundation
import HitchTestSupport
import HitchAnalysis
import HitchReader
import Testing
@testable import HitchHistory

// The store tests, written once and run against each back end: SQLite always, PostgreSQL when
// HITCH_TEST_POSTGRES_URL names a server (scripts/check-history-postgres.sh starts one).

enum Backend: Sendable, CustomStringConvertible {
    case sqlite
    case postgres(String)
    var description: String { switch self { case .sqlite: "sqlite"; case .postgres: "postgres" } }

    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["HITCH_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A fresh, empty database for one test: an SQLite file, or a PostgreSQL schema of its own.
final class TestDatabase {
    let location: String
    private let cleanup: () -> Void

    init(_ backend: Backend) throws {
        let name = "hitch_test_\(getpid())_\(UInt32.random(in: 0 ... .max))"
        switch backend {
        case .sqlite:
            let path = NSTemporaryDirectory() + name + ".sqlite"
            location = path
            cleanup = { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        case .postgres(let url):
            let admin = try PostgresConnection(url: url)
            try admin.execute("CREATE SCHEMA \(name)")
            admin.close()
            location = url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(name)"
            cleanup = {
                if let admin = try? PostgresConnection(url: url) { try? admin.execute("DROP SCHEMA \(name) CASCADE"); admin.close() }
            }
        }
    }

    deinit { cleanup() }

    /// A raw connection, for what the store never does itself (tamper, inspect).
    func raw() throws -> any SQLConnection {
        location.hasPrefix("postgres") ? try PostgresConnection(url: location) : try SQLiteConnection(path: location)
    }
}

enum StoreContract {
    static let machine = MachineInfo(name: "runner-1", cpuModel: "Test CPU", cores: 8, refreshHz: 120)

    static func run(_ index: Int, branch: String = "main", value: Double? = nil, tags: [String: String] = [:]) -> RunRecord {
        RunRecord(id: RunIdentity.runID(traceHashes: ["trace\(index)"], commit: "commit\(index)", machine: machine),
                  commit: "commit\(index)", branch: branch, timeMs: 1_700_000_000_000 + Int64(index) * 1000, machine: machine,
                  tags: tags, traces: ["run\(index).fxt"],
                  metrics: [MetricValue(metric: "hitches.120.hitchTimeRatioMsPerS", value: value ?? Double(index), unit: "ms/s", absoluteFloor: 0.5),
                            MetricValue(metric: "stages[filter].selfMs", value: 2 * Double(index), unit: "ms per frame", absoluteFloor: 0.5),
                            MetricValue(metric: "decode.tokensPerSecond", value: 100, unit: "tok/s", higherIsBetter: true, absoluteFloor: 0.1)])
    }

    static func count(_ db: TestDatabase, _ table: String) throws -> Int {
        let connection = try db.raw()
        defer { connection.close() }
        return Int(try connection.rows("SELECT COUNT(*) FROM \(table)").first?.first?.integer ?? -1)
    }

    static func roundTrip(_ backend: Backend) throws {
        let db = try TestDatabase(backend)
        let store = try HistoryStore(location: db.location)
        defer { store.close() }
        #expect(try store.add(run(1, tags: ["runner": "ci-1", "os": "debian"])))
        #expect(try store.add(run(2)))
        #expect(try store.add(run(3, branch: "feature")))
        // The same run again: stored once.
        #expect(try store.add(run(1, tags: ["runner": "ci-1", "os": "debian"])) == false)
        #expect(try store.add([run(2), run(4)]) == 1)
        #expect(try count(db, "runs") == 4)
        #expect(try count(db, "metric_values") == 12)

        let main = try store.runs(branch: "main")
        #expect(main.map(\.commit) == ["commit1", "commit2", "commit4"])
        #expect(main[0].tags == ["runner": "ci-1", "os": "debian"])
        #expect(main[0].machine == machine)
        #expect(main[0].traces == ["run1.fxt"])
        #expect(try store.runs(branch: "main", last: 2).map(\.commit) == ["commit2", "commit4"])
        #expect(try store.runs().count == 4)
        #expect(try store.metricNames() == ["decode.tokensPerSecond", "hitches.120.hitchTimeRatioMsPerS", "stages[filter].selfMs"])

        let series = try store.series(branch: "main", metrics: ["hitches.120.hitchTimeRatioMsPerS", "decode.tokensPerSecond"])
        #expect(series.runs.map(\.commit) == ["commit1", "commit2", "commit4"])
        #expect(series.metrics.map(\.metric) == ["decode.tokensPerSecond", "hitches.120.hitchTimeRatioMsPerS"])
        #expect(series.metrics[1].values == [1, 2, 4])
        #expect(series.metrics[0].higherIsBetter && !series.metrics[1].higherIsBetter)
        #expect(series.metrics[1].absoluteFloor == 0.5)
        #expect(series.metrics.map(\.unit) == ["tok/s", "ms/s"])
        #expect(throws: HistoryError.self) { try store.series(branch: "main", metrics: ["no.such.metric"]) }

        // Retention: runs before run 3's time go, with their values and tags.
        #expect(try store.prune(olderThanMs: 1_700_000_000_000 + 3000) == 2)
        #expect(try store.runs().map(\.commit) == ["commit3", "commit4"])
        #expect(try count(db, "metric_values") == 6)
        #expect(try count(db, "run_tags") == 0)
    }

    static func schemaIsVersionedAndCreatedOnce(_ backend: Backend) throws {
        let db = try TestDatabase(backend)
        try HistoryStore(location: db.location).close()
        try HistoryStore(location: db.location).close()
        let connection = try db.raw()
        defer { connection.close() }
        #expect(try connection.rows("SELECT version FROM hitch_schema").map { $0.first?.integer } == [Int64(HistoryStore.schemaVersion)])
    }

    static func newerSchemaIsRefusedUntouched(_ backend: Backend) throws {
        let db = try TestDatabase(backend)
        let store = try HistoryStore(location: db.location)
        try store.add(run(1))
        store.close()
        let connection = try db.raw()
        try connection.execute("UPDATE hitch_schema SET version = 99", [])
        connection.close()
        #expect(throws: HistoryError.newerSchema(found: 99, supported: HistoryStore.schemaVersion)) { try HistoryStore(location: db.location) }
        #expect(try count(db, "runs") == 1)
        #expect(try count(db, "hitch_schema") == 1)
    }

    /// A failure half-way through writing a run leaves nothing of it.
    static func failedWriteLeavesNothing(_ backend: Backend) throws {
        let db = try TestDatabase(backend)
        let store = try HistoryStore(location: db.location)
        defer { store.close() }
        try store.add(run(1))
        let connection = try db.raw()
        try connection.execute("ALTER TABLE metric_values RENAME TO metric_values_gone", [])
        #expect(throws: HistoryError.self) { try store.add([run(2), run(3)]) }
        try connection.execute("ALTER TABLE metric_values_gone RENAME TO metric_values", [])
        connection.close()
        #expect(try count(db, "runs") == 1)
        #expect(try count(db, "run_tags") == 0)
        // The store still works after the failure.
        #expect(try store.add(run(2)))
        #expect(try count(db, "metric_values") == 6)
    }

    /// 8 processes add runs at once (each its own runs, and all the same shared run): every run is
    /// stored exactly once, with all its figures.
    static func concurrentProcesses(_ backend: Backend) throws {
        let hitch = try #require(HistoryTestSupport.hitchExecutable, "the hitch executable is not built (swift build)")
        let db = try TestDatabase(backend)
        try HistoryStore(location: db.location).close()
        let folder = NSTemporaryDirectory() + "hitch-history-concurrent-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/small.fxt"
        try HistoryTestSupport.writeSmallTrace(trace)
        let metricCount = RunIdentity.metrics(of: try Analyzer.analyze(paths: [trace])).count
        let processes = 8, runsEach = 4
        var launched: [Process] = []
        for p in 0..<processes {
            // Each process: its own commits, then the shared one every process adds.
            let commits = (0..<runsEach).map { "p\(p)-r\($0)" } + ["shared"]
            let script = commits.map { "\"$0\" history add \"$1\" --commit \($0) --machine ci --tag process=\(p) --db \"$2\" || exit 1" }.joined(separator: "; ")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script, hitch, trace, db.location]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            launched.append(process)
        }
        for process in launched { process.waitUntilExit() }
        #expect(launched.allSatisfy { $0.terminationStatus == 0 }, "every writer exits 0")
        let expectedRuns = processes * runsEach + 1
        #expect(try count(db, "runs") == expectedRuns)
        #expect(try count(db, "metric_values") == expectedRuns * metricCount)
        let store = try HistoryStore(location: db.location)
        defer { store.close() }
        let commits = try store.runs().map(\.commit)
        #expect(Set(commits).count == commits.count, "no run stored twice")
        #expect(commits.filter { $0 == "shared" }.count == 1)
        #expect(try store.metricNames().count == metricCount)
    }
}

enum HistoryTestSupport {
    /// The built `hitch` (`HitchBinary`).
    static var hitchExecutable: String? { HitchBinary.path }

    static func writeSmallTrace(_ path: String, seed: UInt64 = 3) throws {
        let writer = try TraceFileWriter(path: path)
        var generator = SyntheticTrace(seed: seed)
        _ = generator.write(to: writer, targetBytes: .max, maxFrames: 300)
        _ = try writer.close()
    }

    /// Runs hitch; returns (exit status, stdout, stderr).
    static func hitch(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String, String) {
        let executable = try #require(hitchExecutable, "the hitch executable is not built (swift build)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["HITCH_DB"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile(), errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }
}

@Suite struct SQLiteStoreTests {
    @Test func roundTrip() throws { try StoreContract.roundTrip(.sqlite) }
    @Test func schemaIsVersionedAndCreatedOnce() throws { try StoreContract.schemaIsVersionedAndCreatedOnce(.sqlite) }
    @Test func newerSchemaIsRefusedUntouched() throws { try StoreContract.newerSchemaIsRefusedUntouched(.sqlite) }
    @Test func failedWriteLeavesNothing() throws { try StoreContract.failedWriteLeavesNothing(.sqlite) }
    @Test func concurrentProcesses() throws { try StoreContract.concurrentProcesses(.sqlite) }
}

@Suite(.enabled(if: Backend.postgresURL != nil,
                "HITCH_TEST_POSTGRES_URL is not set: the PostgreSQL store tests run in scripts/check-history-postgres.sh"))
struct PostgresStoreTests {
    var backend: Backend { .postgres(Backend.postgresURL ?? "") }
    @Test func roundTrip() throws { try StoreContract.roundTrip(backend) }
    @Test func schemaIsVersionedAndCreatedOnce() throws { try StoreContract.schemaIsVersionedAndCreatedOnce(backend) }
    @Test func newerSchemaIsRefusedUntouched() throws { try StoreContract.newerSchemaIsRefusedUntouched(backend) }
    @Test func failedWriteLeavesNothing() throws { try StoreContract.failedWriteLeavesNothing(backend) }
    @Test func concurrentProcesses() throws { try StoreContract.concurrentProcesses(backend) }
}
