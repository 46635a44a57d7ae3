import Foundation
import HitchHistoryTestSupport
import HitchTestSupport
import Testing
@testable import HitchHistory

// `hitch history` end to end (the built executable): bad input is one line and exit 2 with nothing
// written; a regression is exit 1 naming the commit range; the trend page is self-contained,
// escaped and deterministic.
@Suite struct HistoryCommandTests {
    static func expectOneLineExit2(_ arguments: [String], mentioning word: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (status, _, error) = try HitchCLI.history(arguments)
        #expect(status == 2, "exit \(status) for \(arguments): \(error)", sourceLocation: sourceLocation)
        #expect(error.hasPrefix("hitch: error: ") && error.hasSuffix("\n") && error.dropLast().split(separator: "\n").count == 1,
                "one line: \(error)", sourceLocation: sourceLocation)
        #expect(error.contains(word), "'\(word)' in: \(error)", sourceLocation: sourceLocation)
    }

    @Test func badDatabasesAreOneLineExit2AndNothingIsWritten() throws {
        let trace = HistoryFixtures.temporary("small.fxt")
        try HistoryFixtures.writeSmallTrace(trace)
        defer { unlink(trace) }
        let add = ["history", "add", trace, "--commit", "abc", "--db"]
        try Self.expectOneLineExit2(add + ["mysql://localhost/x"], mentioning: "unsupported scheme")
        try Self.expectOneLineExit2(add + ["postgres://x/y?badoption=1"], mentioning: "bad history database")
        try Self.expectOneLineExit2(add + ["postgresql://%zz@/x"], mentioning: "bad history database")
        // A server that refuses (nothing listens on port 1).
        try Self.expectOneLineExit2(add + ["postgres://hitch@127.0.0.1:1/hitch"], mentioning: "cannot open")

        // Not a database: refused, and the file is left as it was (no journal beside it either).
        let garbage = HistoryFixtures.temporary("garbage.sqlite")
        let bytes = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try bytes.write(to: URL(fileURLWithPath: garbage))
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(garbage + suffix) } }
        try Self.expectOneLineExit2(add + [garbage], mentioning: "damaged or not a database")
        try Self.expectOneLineExit2(["history", "check", "--db", garbage], mentioning: "damaged or not a database")
        #expect(try Data(contentsOf: URL(fileURLWithPath: garbage)) == bytes)
        #expect(!FileManager.default.fileExists(atPath: garbage + "-wal"))

        // A real database whose pages were overwritten past the header.
        let damaged = HistoryFixtures.temporary("damaged.sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { unlink(damaged + suffix) } }
        let store = try HistoryStore(location: damaged)
        _ = try store.add((1...200).map { HistoryFixtures.run($0) })
        store.close()
        let handle = try #require(FileHandle(forUpdatingAtPath: damaged))
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 16384))
        try handle.close()
        let (status, _, error) = try HitchCLI.history(["history", "check", "--db", damaged])
        #expect(status == 2 && error.split(separator: "\n").count == 1, "exit \(status): \(error)")

        // A schema from a newer hitch: refused before anything is written.
        let newer = HistoryFixtures.temporary("newer.sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { unlink(newer + suffix) } }
        try HistoryStore(location: newer).close()
        let raw = try SQLiteConnection(path: newer)
        try raw.execute("UPDATE hitch_schema SET version = 7", [])
        raw.close()
        try Self.expectOneLineExit2(add + [newer], mentioning: "schema version 7")
        let check = try SQLiteConnection(path: newer)
        #expect(try check.rows("SELECT COUNT(*) FROM runs").first?.first?.integer == 0)
        check.close()
    }

    /// libsqlite3 and libpq are loaded by the first store that needs one, not linked: `hitch` does not
    /// depend on them (nor on libpq's TLS, Kerberos and LDAP libraries), a library that cannot be
    /// loaded is one line naming it and dlerror() with nothing written, and the other store still works.
    @Test func storeLibrariesAreLoadedOnFirstUseAndTheirAbsenceIsOneLineExit2() throws {
        let executable = try #require(HitchBinary.path, "the hitch executable is not built (swift build)")
        let ldd = Process()
        ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        ldd.arguments = [executable]
        let listing = Pipe()
        ldd.standardOutput = listing
        try ldd.run()
        let linked = String(decoding: listing.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ldd.waitUntilExit()
        #expect(ldd.terminationStatus == 0 && linked.contains("libc.so"), "ldd: \(linked)")
        for library in ["libsqlite3", "libpq", "libssl", "libcrypto", "libgnutls", "libkrb5", "libldap"] {
            #expect(!linked.contains(library), "hitch links \(library):\n\(linked)")
        }

        let folder = HistoryFixtures.temporary("libraries")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = HistoryFixtures.temporary("small.fxt")
        try HistoryFixtures.writeSmallTrace(trace)
        defer { unlink(trace) }
        let add = ["history", "add", trace, "--commit", "abc", "--db"]
        let absentSQLite = ["HITCH_TEST_SQLITE_LIBRARY": "/nonexistent/libsqlite3.so.0"]
        for (arguments, words) in [(add + [folder + "/h.sqlite"], ["SQLite", "/nonexistent/libsqlite3.so.0", "cannot open shared object file"]),
                                   (["history", "check", "--db", folder + "/h.sqlite"], ["SQLite", "libsqlite3.so.0"])] {
            let (status, _, error) = try HitchCLI.history(arguments, environment: absentSQLite)
            #expect(status == 2 && error.hasPrefix("hitch: error: ") && error.dropLast().split(separator: "\n").count == 1, "exit \(status): \(error)")
            for word in words { #expect(error.contains(word), "'\(word)' in: \(error)") }
        }
        #expect(!FileManager.default.fileExists(atPath: folder), "nothing is created without the library")
        // A library without the functions (libc): the first missing one is named.
        let wrong = try HitchCLI.history(add + [folder + "/h.sqlite"], environment: ["HITCH_TEST_SQLITE_LIBRARY": "libc.so.6"])
        #expect(wrong.0 == 2 && wrong.2.contains("undefined symbol: sqlite3_open_v2"), "\(wrong)")
        let absentLibpq = ["HITCH_TEST_LIBPQ_LIBRARY": "/nonexistent/libpq.so.5"]
        let postgres = try HitchCLI.history(add + ["postgres://hitch@127.0.0.1:1/hitch"], environment: absentLibpq)
        #expect(postgres.0 == 2 && postgres.2.contains("PostgreSQL") && postgres.2.contains("/nonexistent/libpq.so.5")
                && postgres.2.split(separator: "\n").count == 1, "\(postgres)")
        // SQLite needs nothing of libpq.
        let sqlite = try HitchCLI.history(add + [folder + "/h.sqlite"], environment: absentLibpq)
        #expect(sqlite.0 == 0 && sqlite.1.hasPrefix("added run"), "\(sqlite)")
    }

    @Test func addTwiceStoresOnceAndCheckNamesTheRegressionsCommits() throws {
        let db = HistoryFixtures.temporary("cli.sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { unlink(db + suffix) } }
        let trace = HistoryFixtures.temporary("small.fxt")
        try HistoryFixtures.writeSmallTrace(trace)
        defer { unlink(trace) }
        let first = try HitchCLI.history(["history", "add", trace, "--commit", "c0", "--branch", "side", "--tag", "runner=ci-1", "--db", db])
        #expect(first.0 == 0 && first.1.hasPrefix("added run"), "\(first)")
        let again = try HitchCLI.history(["history", "add", trace, "--commit", "c0", "--branch", "side", "--db", db])
        #expect(again.0 == 0 && again.1.contains("already stored"), "\(again)")
        let listed = try HitchCLI.history(["history", "list", "--format", "json"], environment: ["HITCH_DB": db])
        #expect(listed.0 == 0 && listed.1.contains("\"runner\" : \"ci-1\""), "\(listed)")

        // 60 runs on main: the hitch ratio steps from ~3 to ~6 ms/s at commit c40.
        let store = try HistoryStore(location: db)
        _ = try store.add((0..<60).map { HistoryFixtures.run($0, value: ($0 >= 40 ? 6 : 3) + Double(($0 * 7) % 10) / 10 - 0.45) })
        store.close()
        let (status, output, error) = try HitchCLI.history(["history", "check", "--metric", "hitches.120.hitchTimeRatioMsPerS", "--db", db])
        #expect(status == 1, "exit \(status): \(output) \(error)")
        #expect(error.contains("hitches.120.hitchTimeRatioMsPerS") && error.contains("commit39..commit40"), "\(error)")
        // stages[filter].selfMs rises steadily (2 ms per run), decode.tokensPerSecond is flat: neither steps.
        let json = try HitchCLI.history(["history", "check", "--format", "json", "--metric", "decode.tokensPerSecond", "--db", db])
        #expect(json.0 == 0 && json.1.contains("\"verdict\" : \"unchanged\""), "\(json)")
        let shown = try HitchCLI.history(["history", "show", "hitches.120.hitchTimeRatioMsPerS", "--format", "markdown", "--db", db])
        #expect(shown.0 == 0 && shown.1.contains("regression") && shown.1.split(separator: "\n").count == 62, "\(shown.1.prefix(300))")
        let unknown = try HitchCLI.history(["history", "show", "no.such", "--db", db])
        #expect(unknown.0 == 2 && unknown.2.contains("no stored metric"), "\(unknown)")
    }

    @Test func reportIsSelfContainedEscapedAndDeterministic() throws {
        let db = HistoryFixtures.temporary("report.sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { unlink(db + suffix) } }
        let hostile = "<script>alert(1)</script>"
        let store = try HistoryStore(location: db)
        _ = try store.add((0..<30).map { index in
            var run = HistoryFixtures.run(index, tags: ["note": "\"><img src=x onerror=alert(1)>"])
            run.commit = index == 20 ? hostile : "commit\(index)"
            run.metrics.append(MetricValue(metric: "stages[\(hostile)].selfMs", value: index >= 20 ? 9 : 1))
            return run
        })
        store.close()
        let a = HistoryFixtures.temporary("a.html"), b = HistoryFixtures.temporary("b.html")
        defer { unlink(a); unlink(b) }
        for output in [a, b] {
            let (status, _, error) = try HitchCLI.history(["history", "report", "-o", output, "--db", db])
            #expect(status == 0, "\(error)")
        }
        let page = try String(contentsOfFile: a, encoding: .utf8)
        #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b)), "same history, same bytes")
        #expect(!page.contains(hostile) && !page.contains("<img"), "names are escaped")
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.contains("http://") && !page.contains("https://") && !page.contains(" src=\""), "nothing loads from anywhere")
        #expect(page.contains("Content-Security-Policy"))
        // The step in the hostile stage is a change point, linked to its run's row.
        #expect(page.contains("href=\"#run-21\"") && page.contains("id=\"run-21\""))
        #expect(page.contains("commit19..&lt;script&gt;"))
    }
}
