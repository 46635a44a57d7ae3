import Foundation
import HitchImport
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
            do {
                _ = try importText(text)
                Issue.record("no error for \(text)")
            } catch let error as ImportError {
                #expect(error.description.contains(fragment) && !error.description.contains("\n"), "\(error)")
            } catch {
                Issue.record("\(error)")
            }
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
}
