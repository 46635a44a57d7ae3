import Foundation
import HitchAnalysis
import HitchImport
import Testing

/// The `potential-hangs` and `hang-risks` tables. The fixtures are written in the schemas as an
/// Xcode 27 export gives them (columns, engineering types, `id`/`ref` reuse, the thread holding its
/// process); the truth below is the fixtures' own numbers, never the import read back.
extension XctraceImporterTests {
    func fixture(_ name: String) throws -> (String, String) {
        (name, try String(contentsOf: Self.fixtures.appendingPathComponent(name), encoding: .utf8))
    }

    /// The app's rows (Feed, pid 4242), per Apple's type: count, total ms, longest ms.
    static let potentialHangsTruth: [String: (count: Int, totalMs: Double, longestMs: Double)] = [
        "Hang": (1, 412.5, 412.5), "Severe Hang": (1, 1250, 1250),
        "Brief Unresponsiveness": (2, 180.25 + 120, 180.25), "Potential Interaction Delay": (2, 64 + 51.5, 64),
    ]

    @Test func potentialHangsAloneAreHangsWithApplesTypes() throws {
        let (summary, analysis) = try importAndAnalyze([try fixture("xctrace-potential-hangs.xml")])
        #expect(summary.hangs == 6 && summary.frames == 0)
        // mediaserverd's row is another process's: counted, not lost.
        #expect(summary.warnings.contains("skipped 1 potential-hangs and hang-risks rows of processes other than the app"))
        let hangs = try #require(analysis.hangs)
        let byType = try #require(hangs.byType)
        #expect(byType.count == Self.potentialHangsTruth.count)
        for figures in byType {
            let truth = try #require(Self.potentialHangsTruth[figures.type], "\(figures.type)")
            #expect(figures.source == "instruments" && figures.count == truth.count, "\(figures)")
            #expect(abs(figures.totalMs - truth.totalMs) < 1e-6 && abs(figures.longestMs - truth.longestMs) < 1e-6, "\(figures)")
        }
        // The analysis' own tiers (250 and 100 ms): the two hangs, the two brief stretches; the
        // potential interaction delays are under both.
        #expect(hangs.count == 2 && abs(hangs.totalMs - (412.5 + 1250)) < 1e-6)
        #expect(hangs.brief.count == 2 && abs(hangs.brief.totalMs - 300.25) < 1e-6)
        #expect(hangs.list.allSatisfy { $0.sources == ["instruments"] && $0.thread == "Main Thread" })
        #expect(hangs.list.map(\.type) == ["Hang", "Brief Unresponsiveness", "Brief Unresponsiveness", "Severe Hang"])
    }

    /// A real export (Xcode 27 beta, kept as published: Tests/Fixtures/import/README.md): 23 rows of
    /// one app's main thread. The truth was counted from the file's rows outside this code (a regular
    /// expression over each row's duration and its hang-type, defined or by ref): 6 `Brief
    /// Unresponsiveness` (103.54 to 236.65 ms) and 17 `Potential Interaction Delay` (41.05 to 89.11 ms).
    @Test func aRealPotentialHangsExportGivesInstrumentsCountsPerType() throws {
        let (summary, analysis) = try importAndAnalyze([try fixture("xctrace-real-potential-hangs.xml")])
        #expect(summary.hangs == 23 && summary.warnings.isEmpty)
        let hangs = try #require(analysis.hangs)
        let byType = Dictionary(uniqueKeysWithValues: try #require(hangs.byType).map { ($0.type, $0) })
        let brief = try #require(byType["Brief Unresponsiveness"]), delay = try #require(byType["Potential Interaction Delay"])
        #expect(byType.count == 2)
        #expect(brief.count == 6 && abs(brief.totalMs - 1086.591333) < 1e-6 && abs(brief.longestMs - 236.646833) < 1e-6)
        #expect(delay.count == 17 && abs(delay.totalMs - 1115.131543) < 1e-6 && abs(delay.longestMs - 89.113708) < 1e-6)
        // Every brief unresponsiveness is at least 100 ms and under 250: the analysis's brief tier
        // holds the same six; nothing is a hang.
        #expect(hangs.count == 0 && hangs.brief.count == 6 && abs(hangs.brief.totalMs - 1086.591333) < 1e-6)
        #expect(hangs.list.allSatisfy { $0.thread == "Main Thread" && $0.type == "Brief Unresponsiveness" })
    }

    /// The real hang-risks export holds the schema and no row: nothing to analyze, said in one line.
    @Test func aRealHangRisksExportWithoutRowsIsRefused() throws {
        #expect {
            _ = try importAndAnalyze([try fixture("xctrace-real-hang-risks.xml")])
        } throws: { error in
            "\(error)".contains("xctrace-real-hang-risks.xml: whole file: frames, the platform's own hitches, samples or hangs to analyze; found none")
        }
    }

    @Test func hangRisksAreMarksWithTheirSeverity() throws {
        let (summary, analysis) = try importAndAnalyze([try fixture("xctrace-hang-risks.xml"), try fixture("xctrace-potential-hangs.xml")])
        #expect(summary.hangs == 8)
        let byType = try #require(analysis.hangs?.byType)
        let risks = try #require(byType.first { $0.type == "Hang Risk: High" })
        #expect(risks.count == 2 && risks.totalMs == 0 && risks.source == "instruments")
        // A risk lasts no time: the tiers are the potential hangs' alone.
        #expect(analysis.hangs?.count == 2 && analysis.hangs?.brief.count == 2)
    }

    @Test func potentialHangsRowsThatCannotBePlacedAreCountedAndAloneAnError() throws {
        let text = """
        <?xml version="1.0"?>
        <trace-query-result><node><schema name="potential-hangs"><col><mnemonic>start</mnemonic><name>Start</name><engineering-type>start-time</engineering-type></col><col><mnemonic>duration</mnemonic><name>Duration</name><engineering-type>duration</engineering-type></col><col><mnemonic>hang-type</mnemonic><name>Hang Type</name><engineering-type>hang-type</engineering-type></col></schema>
        <row><start-time id="1" fmt="00:00.005.000">5000000</start-time><sentinel/><hang-type id="2" fmt="Hang">Hang</hang-type></row>
        <row><start-time>-5000000000</start-time><duration>300000000</duration><hang-type ref="2"/></row>
        <row><start-time>9223372036854775000</start-time><duration>300000000</duration><hang-type ref="2"/></row>
        </node></trace-query-result>
        """
        #expect {
            _ = try importAndAnalyze([("hangs.xml", text)])
        } throws: { error in
            let line = "\(error)"
            return line.contains("hangs.xml: whole file: frames, the platform's own hitches, samples or hangs to analyze; found none")
                && line.contains("skipped 3 potential-hangs rows without a start (0 to 2^50 ns) and a duration under an hour") && !line.contains("\n")
        }
    }

    /// With frames, the hangs are the app's (the process the frames are of) on the thread the row names.
    @Test func withFramesTheHangsAreTheAppsMainThreads() throws {
        let hangs = """
        <?xml version="1.0"?>
        <trace-query-result><node><schema name="potential-hangs"><col><mnemonic>start</mnemonic></col><col><mnemonic>duration</mnemonic></col><col><mnemonic>hang-type</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>process</mnemonic></col></schema>
        <row><start-time id="1">1010000000</start-time><duration id="2">300000000</duration><hang-type id="3" fmt="Hang">Hang</hang-type><thread id="4" fmt="Main Thread (0x7) (App, pid: 7)"><tid id="5">7</tid><process id="6" fmt="App (7)"><pid id="7">7</pid></process></thread><process ref="6"/></row>
        <row><start-time id="8">1020000000</start-time><duration ref="2"/><hang-type ref="3"/><thread id="9" fmt="Main Thread (0x9) (Other, pid: 9)"><tid id="10">9</tid><process id="11" fmt="Other (9)"><pid id="12">9</pid></process></thread><process ref="11"/></row>
        </node></trace-query-result>
        """
        let (summary, analysis) = try importAndAnalyze([("swaps.xml", Self.swaps), ("hangs.xml", hangs)])
        #expect(summary.frames == 2 && summary.hangs == 1)
        #expect(analysis.hangs?.count == 1 && analysis.hangs?.byType?.first?.count == 1)
    }
}
