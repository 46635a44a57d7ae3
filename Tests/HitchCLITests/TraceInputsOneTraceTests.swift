import Foundation
import HitchAnalysis
import Testing

/// An Instruments export is several files (a table or more each): given to any command, they are
/// one trace, as `hitch import xctrace` reads them; files of two exports (a table held twice) are
/// refused with the commands to run. `info` and `export` take other tools' traces as the analysis
/// commands do.
@Suite struct TraceInputsOneTraceTests {
    static let fixtures = HitchCLI.root + "/Tests/Fixtures/import/"
    static let hitches = fixtures + "xctrace-hitches.xml", display = fixtures + "xctrace-display.xml"

    private func analysis(_ result: HitchCLI.Result) throws -> Analysis {
        try JSONDecoder().decode(Analysis.self, from: Data(result.stdout.utf8))
    }

    @Test func anExportsTablesAreOneTraceInEveryCommand() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try HitchCLI.run(["import", "xctrace", Self.hitches, Self.display, "-o", dir + "/imported.fxt"]).status == 0)
        let imported = try analysis(try HitchCLI.run(["analyze", dir + "/imported.fxt", "--format", "json"]))
        let direct = try analysis(try HitchCLI.run(["analyze", Self.hitches, Self.display, "--format", "json"]))
        #expect(direct.runs.count == 1 && direct.runs[0].path == Self.hitches + " + " + Self.display)
        #expect(direct.recorded.hitchCount == imported.recorded.hitchCount && direct.recorded.hitchCount == 6)
        #expect(direct.recorded.hitchTimeRatioMsPerS == imported.recorded.hitchTimeRatioMsPerS && direct.recorded.hitchTimeRatioMsPerS > 19)
        // check judges the one trace (its recorded figures), not two half-traces.
        let budgets = dir + "/budgets.json"
        try #"{"budgets": [{"metric": "recorded.hitchCount", "max": 6}]}"#.write(toFile: budgets, atomically: true, encoding: .utf8)
        let check = try HitchCLI.run(["check", Self.hitches, Self.display, "--budget", budgets])
        #expect(check.status == 0, "\(check.stderr)")
        // report of one export's two tables is one report, not a comparison.
        let report = try HitchCLI.run(["report", Self.hitches, Self.display, "-o", dir + "/r.html"])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(try !String(contentsOfFile: dir + "/r.html", encoding: .utf8).contains("What changed"))
        // info reads them as the one trace too.
        let info = try HitchCLI.run(["info", Self.hitches, Self.display])
        #expect(info.status == 0 && info.stdout.contains("frameBegan"), "\(info.stderr)")
    }

    @Test func tablesOfTwoExportsAreRefusedWithTheCommandsToRun() throws {
        let other = Self.fixtures + "xctrace-display-info.xml"   // holds display-surface-swap too
        let refused = try HitchCLI.run(["analyze", other, Self.display])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("display-surface-swap") && refused.stderr.contains("hitch import xctrace")
                && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
    }

    @Test func infoAndExportTakeOtherToolsTraces() throws {
        let dir = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let framestats = Self.fixtures + "framestats-android12.txt"
        let info = try HitchCLI.run(["info", framestats])
        #expect(info.status == 0 && info.stdout.contains("frameBegan") && info.stdout.contains("framestats"), "\(info.stderr)")
        let export = try HitchCLI.run(["export", framestats, "--format", "chrome", "-o", dir + "/fs.json"])
        #expect(export.status == 0, "\(export.stderr)")
        let two = try HitchCLI.run(["info", framestats, Self.hitches])
        #expect(two.status == 2 && two.stderr.contains("reads one trace"), "\(two.stderr)")
        // A file nothing reads names every format that is read.
        try Data([0x37, 0x26, 0x8E, 0x72, 0x75, 0xFB, 0x25, 0xAB, 1, 2, 3]).write(to: URL(fileURLWithPath: dir + "/junk.bin"))
        let junk = try HitchCLI.run(["info", dir + "/junk.bin"])
        #expect(junk.status == 2 && junk.stderr.contains("framestats") && junk.stderr.contains("Perfetto"), "\(junk.stderr)")
    }
}
