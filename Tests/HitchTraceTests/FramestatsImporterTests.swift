import Foundation
import HitchImport
import Testing

@Suite struct FramestatsImporterTests {
    func importText(_ text: String) throws -> ImportSummary {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("framestats-\(UUID().uuidString).fxt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let sink = try ImportSink(path: output)
        try FramestatsImporter().importBytes(Array(text.utf8), name: "dump.txt", into: sink)
        return try sink.finish()
    }

    static let header14 = "Flags,IntendedVsync,Vsync,OldestInputEvent,NewestInputEvent,HandleInputStart,AnimationStart,PerformTraversalsStart,DrawStart,SyncQueued,SyncStart,IssueDrawCommandsStart,SwapBuffers,FrameCompleted,"

    @Test func malformedDumpsNameTheLineAndWhatWasExpected() {
        let cases: [(String, String)] = [
            ("no block here\n", "dump.txt: line 1: a ---PROFILEDATA--- block"),
            ("---PROFILEDATA---\nIntendedVsync,\n---PROFILEDATA---\n", "dump.txt: line 2: a header line starting 'Flags,'"),
            ("---PROFILEDATA---\nFlags,Vsync,\n---PROFILEDATA---\n", "dump.txt: line 2: a 'IntendedVsync' column"),
            ("---PROFILEDATA---\n\(Self.header14)\n0,1,2,\n---PROFILEDATA---\n", "dump.txt: line 3: 14 comma-separated values"),
            ("---PROFILEDATA---\n\(Self.header14)\n0,1,2,3,4,5,6,7,8,9,10,x11,12,13,\n---PROFILEDATA---\n", "dump.txt: line 3, column 12 (IssueDrawCommandsStart): an integer"),
            ("---PROFILEDATA---\n\(Self.header14)\n", "dump.txt: end of file after line 2: a closing ---PROFILEDATA---"),
        ]
        for (text, message) in cases {
            #expect {
                _ = try importText(text)
            } throws: { error in
                (error as? ImportError).map { $0.description.hasPrefix(message) && !$0.description.contains("\n") } ?? false
            }
        }
    }

    @Test func skippedAndImpossibleFramesAreCountedNotJudged() throws {
        let rows = [
            "0,1000000000,1000000000,0,0,1000100000,1000200000,1000300000,1000400000,1000500000,1000600000,1000700000,1000800000,1010000000,",
            "8,1016666667,1016666667,0,0,1016766667,1016866667,1016966667,1017066667,1017166667,1017266667,1017366667,1017466667,1026666667,",
            "0,1033333334,1033333334,0,0,0,0,0,0,0,1033333334,0,0,1000,",
        ]
        let summary = try importText("---PROFILEDATA---\n\(Self.header14)\n" + rows.joined(separator: "\n") + "\n---PROFILEDATA---\n")
        #expect(summary.frames == 1)
        #expect(summary.warnings.contains { $0.contains("SkippedFrame") })
        #expect(summary.warnings.contains { $0.contains("impossible times") })
    }

    @Test func sniffsADumpFromItsFirstBytes() {
        #expect(ImportFormat.sniff(Array("Applications Graphics Acceleration Info:\nUptime".utf8)[...]) == .framestats)
        #expect(ImportFormat.sniff(Array("\n\n---PROFILEDATA---\nFlags,".utf8)[...]) == .framestats)
        #expect(ImportFormat.sniff(Array("[{\"ph\":\"X\"}]".utf8)[...]) == nil)
    }
}
