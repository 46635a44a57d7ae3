import Foundation
import HitchAnalysis
import HitchImport
import HitchTestSupport
import Testing

@Suite struct XctraceImporterTests {
    func importText(_ text: String) throws -> ImportSummary {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("xctrace-\(UUID().uuidString).fxt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let sink = try ImportSink(path: output)
        var importer = XctraceImporter()
        try importer.importBytes(Array(text.utf8), name: "export.xml", into: sink)
        importer.finish(into: sink)
        return try sink.finish()
    }

    static let swaps = """
    <?xml version="1.0"?>
    <trace-query-result><node><schema name="display-surface-swap"><col><mnemonic>start</mnemonic></col><col><mnemonic>process</mnemonic></col></schema>
    <row><start-time id="1">1000000000</start-time><process id="2" fmt="App (7)"><pid id="3">7</pid></process></row>
    <row><start-time>1016666667</start-time><process ref="2"/></row>
    <row><start-time>1033333334</start-time><sentinel/></row>
    </node></trace-query-result>
    """

    @Test func refsResolveAndEveryPresentIsAFrame() throws {
        let summary = try importText(Self.swaps)
        // The third row's process is empty (a sentinel): it is another process's present.
        #expect(summary.frames == 2)
    }

    @Test func malformedExportsNameTheByteAndWhatWasExpected() {
        let cases: [(String, String)] = [
            ("<trace-query-result><node><schema name=\"hitches\"></schema><row><start-time>1</duration></row></node></trace-query-result>",
             "</start-time> closing <start-time>, found </duration>"),
            ("<trace-query-result><row a=1/></trace-query-result>", "a quoted value for the attribute a"),
            ("<trace-query-result>&bogus;</trace-query-result>", "found &bogus;"),
            ("<trace-query-result><node>", "every element closed"),
            ("<html></html>", "an xctrace export"),
            ("<trace-query-result><!-- never closed", "a comment closed by '-->'"),
        ]
        for (text, fragment) in cases {
            expectOneLineError(ImportError.self, for: text, contains: fragment) { _ = try importText(text) }
        }
    }

    @Test func entitiesAndCDATAAreText() throws {
        let text = """
        <trace-query-result><node><schema name="os-signpost"><col><mnemonic>start</mnemonic></col><col><mnemonic>duration</mnemonic></col><col><mnemonic>name</mnemonic></col></schema>
        <row><start-time>5</start-time><duration>10</duration><string>a &amp; b &#x263A; <![CDATA[<c>]]></string></row></node></trace-query-result>
        """
        let summary = try importText(text)
        #expect(summary.events == 1)
    }

    /// Imports exports (file name, text) as one trace through `TraceImport.run` and analyzes it.
    func importAndAnalyze(_ files: [(String, String)]) throws -> (ImportSummary, Analysis) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xctrace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try files.map { name, text in
            let path = directory.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        return try AnalyzedImport.run(.xctrace, inputs: paths)
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/import")

    /// The hitches table exported alone: no frames to judge, so Apple's hitches are the figures
    /// (source platform): count, total, longest, the ratio over the export's span, the narratives;
    /// a system hitch (`is-system`) is the compositor's, not the app's.
    @Test func hitchesTableAloneGivesApplesHitchesAsFigures() throws {
        let fixture = try String(contentsOf: Self.fixtures.appendingPathComponent("xctrace-hitches.xml"), encoding: .utf8)
        // The fifth hitch marked as the system's.
        let text = fixture.replacingOccurrences(of: "<start-time id=\"20\" fmt=\"t\">23058333241</start-time><duration id=\"21\" fmt=\"d\">16666667</duration><process ref=\"5\"/><boolean ref=\"6\"/>",
                                                with: "<start-time id=\"20\" fmt=\"t\">23058333241</start-time><duration id=\"21\" fmt=\"d\">16666667</duration><process ref=\"5\"/><boolean id=\"99\" fmt=\"Yes\">1</boolean>")
        #expect(text != fixture)
        let (summary, analysis) = try importAndAnalyze([("hitches.xml", text)])
        #expect(summary.frames == 0 && summary.platformHitches == 12)   // six begins, six ends
        let platform = try #require(analysis.platformHitches)
        let durations: [Double] = [8.333333, 16.666666, 24.999999, 8.333333, 16.666667, 33.333334]
        #expect(platform.hitchCount == 6 && abs(platform.totalHitchMs - durations.reduce(0, +)) < 0.001)
        #expect(abs(platform.longestHitchMs - 33.333334) < 0.001)
        // The export's span: the first hitch's start to the last one's end.
        let span = (24_241_666_598.0 + 33_333_334 - 20_333_333_320) / 1e9
        #expect(abs(platform.spanSeconds - span) < 1e-9)
        #expect(abs(platform.hitchTimeRatioMsPerS - platform.totalHitchMs / span) < 1e-6)
        #expect(platform.systemHitchCount == 1 && abs(platform.systemHitchMs - 16.666667) < 0.001)
        #expect(platform.narratives.map(\.text).contains("Potential Issue: expensive commit"))
        #expect(platform.narratives.contains { $0.isSystem && $0.hitchCount == 1 })
        // Whole periods of 8.33 ms, some odd: 120 Hz.
        let figures = try #require(analysis.hitches["120"])
        #expect(figures.source == .platform && figures.hitchCount == 6 && abs(figures.hitchTimeRatioMsPerS - platform.hitchTimeRatioMsPerS) < 1e-9)
        #expect(abs(figures.byCause.compositor.totalHitchMs - 16.666667) < 0.001)
        #expect(abs((figures.appHitchTimeRatioMsPerS ?? 0) - (platform.totalHitchMs - 16.666667) / span) < 0.001)
        #expect(figures.appleTestScale.grade == .critical)
        #expect(analysis.hitches["60"] == nil)
    }

    /// With a display table the same hitches are the frames' platform verdicts; a system hitch's is
    /// `janky elsewhere`, and its hitch is the compositor's.
    @Test func withFramesTheHitchesAreVerdicts() throws {
        let hitches = try String(contentsOf: Self.fixtures.appendingPathComponent("xctrace-hitches.xml"), encoding: .utf8)
        let display = try String(contentsOf: Self.fixtures.appendingPathComponent("xctrace-display.xml"), encoding: .utf8)
        let (_, analysis) = try importAndAnalyze([("hitches.xml", hitches), ("display.xml", display)])
        #expect(analysis.platformHitches == nil)
        #expect(analysis.platformAgreement?.bothJanky == 6)
    }

    /// Time Profiler exports before Xcode 27: `<backtrace>` of `<frame name addr>` with a `<binary>`
    /// (or a ref to one), frames and whole backtraces repeated by ref, a frame Instruments could not
    /// symbolicate (its name is its address) and one without an address. Every frame keeps its name,
    /// outer frames too (the analysis looks a return address up one byte before it).
    @Test func timeProfileFramesKeepTheirNames() throws {
        let text = """
        <?xml version="1.0"?>
        <trace-query-result><node><schema name="time-profile"><col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>process</mnemonic></col><col><mnemonic>weight</mnemonic></col><col><mnemonic>stack</mnemonic></col></schema>
        <row><sample-time id="1" fmt="00:00.300">300613208</sample-time><thread id="2" fmt="Main Thread 0x12aa (FeedApp, pid: 581)"><tid id="3" fmt="0x12aa">4778</tid><process id="4" fmt="FeedApp (581)"><pid id="5" fmt="581">581</pid></process></thread><process ref="4"/><weight id="9" fmt="1.00 ms">1000000</weight><backtrace id="10"><frame id="11" name="FeedRow.body.getter" addr="0x1000a1c35"><binary id="12" name="FeedApp" load-addr="0x100000000"/><source line="39"><path id="13">/src/FeedRow.swift</path></source></frame><frame id="14" name="0x1000a0f00" addr="0x1000a0f00"><binary ref="12"/></frame><frame id="15" name="start_wqthread"/><frame id="16" name="main" addr="0x1000a0010"><binary ref="12"/></frame></backtrace></row>
        <row><sample-time id="17" fmt="00:00.301">301613208</sample-time><thread ref="2"/><process ref="4"/><weight ref="9"/><backtrace ref="10"/></row>
        <row><sample-time id="18" fmt="00:00.302">302613208</sample-time><thread ref="2"/><process ref="4"/><weight ref="9"/><backtrace id="19"><frame ref="11"/><frame ref="16"/></backtrace></row>
        </node></trace-query-result>
        """
        let (summary, analysis) = try importAndAnalyze([("profile.xml", text)])
        #expect(summary.samples == 3 && summary.warnings.isEmpty, "\(summary.warnings)")
        let stacks = Set(analysis.samples.folded.map(\.stack))
        #expect(stacks == ["main;start_wqthread;FeedApp+0xa0f00;FeedRow.body.getter", "main;FeedRow.body.getter"], "\(stacks)")
    }

    /// Apple repeats values by ref, timestamps among them (a `hid-time` of 0 defined once); ids are
    /// each file's own. Every ref of a real export resolves; a warning of one file names that file.
    @Test func refsResolveWithinTheirFileAndWarningsNameIt() throws {
        let names = ["xctrace-real-display-surface-swap.xml", "xctrace-real-display-vsyncs-interval.xml", "xctrace-real-hitches-renders.xml"]
        let files = try names.map { ($0, try String(contentsOf: Self.fixtures.appendingPathComponent($0), encoding: .utf8)) }
        let (summary, _) = try importAndAnalyze(files)
        #expect(!summary.warnings.contains { $0.contains("refs") }, "\(summary.warnings)")
        #expect(summary.namesFiles)
        let vsync = summary.warnings.filter { $0.contains("display-vsyncs-interval rows") }
        #expect(vsync.count == 1 && vsync[0].contains("xctrace-real-display-vsyncs-interval.xml: skipped 1 "), "\(vsync)")
    }

    /// An export without frames, hitches or samples is nothing to analyze: an error naming why.
    @Test func nothingToAnalyzeIsAnError() throws {
        let vsyncs = try String(contentsOf: Self.fixtures.appendingPathComponent("xctrace-real-display-vsyncs-interval.xml"), encoding: .utf8)
        #expect {
            _ = try importAndAnalyze([("vsyncs.xml", vsyncs)])
        } throws: { error in
            "\(error)".contains("vsyncs.xml: whole file: frames, the platform's own hitches, samples or hangs to analyze; found none")
        }
    }
}
