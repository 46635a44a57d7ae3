import Foundation
import HitchImport
import HitchTestSupport
import Testing

@Suite struct FramestatsImporterTests {
    func importText(_ text: String) throws -> ImportSummary { try importBytes(Array(text.utf8)) }

    func importBytes(_ bytes: [UInt8], importer: FramestatsImporter = FramestatsImporter()) throws -> ImportSummary {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("framestats-\(UUID().uuidString).fxt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let sink = try ImportSink(path: output)
        try importer.importBytes(bytes, name: "dump.txt", into: sink)
        return try sink.finish()
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/import")

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
            if let error = expectOneLineError(ImportError.self, for: text, contains: message, { _ = try importText(text) }) {
                #expect(error.description.hasPrefix(message), "\(error)")
            }
        }
    }

    /// SkippedFrame rows and rows with impossible times are counted and left out; a frame whose
    /// FrameCompleted precedes its IntendedVsync is kept, and flagged.
    @Test func skippedAndImpossibleFramesAreCountedOddOnesKept() throws {
        let rows = [
            "0,1000000000,1000000000,0,0,1000100000,1000200000,1000300000,1000400000,1000500000,1000600000,1000700000,1000800000,1010000000,",
            "8,1016666667,1016666667,0,0,1016766667,1016866667,1016966667,1017066667,1017166667,1017266667,1017366667,1017466667,1026666667,",
            "0,1033333334,1033333334,0,0,0,0,0,0,0,1033333334,0,0,1030000000,",
            "0,30000000000,30000000000,0,0,0,0,0,0,0,0,0,0,1000,",
        ]
        let summary = try importText("---PROFILEDATA---\n\(Self.header14)\n" + rows.joined(separator: "\n") + "\n---PROFILEDATA---\n")
        #expect(summary.frames == 2)
        #expect(summary.warnings.contains { $0.contains("SkippedFrame") })
        #expect(summary.warnings.contains { $0.hasPrefix("skipped 1 frames with impossible times") })
        #expect(summary.warnings.contains { $0 == "1 frames whose FrameCompleted precedes their IntendedVsync (kept, and flagged in their verdict)" })
    }

    /// Windows PowerShell saves `adb shell`'s output as UTF-16 LE with a byte-order mark and CRLF
    /// line ends; other tools write UTF-16 BE or UTF-8 with a mark. Each reads as the UTF-8 dump does.
    @Test func utf16AndByteOrderMarksAndCRLFRead() throws {
        let text = try String(contentsOf: Self.fixtures.appendingPathComponent("framestats-android12.txt"), encoding: .utf8)
        let plain = try importText(text)
        let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
        var little: [UInt8] = [0xFF, 0xFE], big: [UInt8] = [0xFE, 0xFF]
        for unit in crlf.utf16 { little += [UInt8(unit & 0xFF), UInt8(unit >> 8)]; big += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        for bytes in [little, big, [0xEF, 0xBB, 0xBF] + Array(crlf.utf8)] {
            let summary = try importBytes(bytes)
            #expect(summary.frames == plain.frames && summary.frames == 40 && summary.events == plain.events)
            #expect(ImportFormat.sniff(bytes.prefix(4096)) == .framestats)
        }
    }

    /// A whole-device dump: every window block of every process is read, and one is imported, the
    /// one with the most frames (or of the process --process names), said in the warnings.
    @Test func oneWindowIsPickedAndSaid() throws {
        let row = { (vsync: Int64) in "0,\(vsync),\(vsync),0,0,0,0,0,0,0,0,0,0,\(vsync + 5_000_000)," }
        func block(_ window: String, frames: Int, start: Int64) -> String {
            "Window: \(window)\n---PROFILEDATA---\n\(Self.header14)\n"
                + (0..<frames).map { row(start + Int64($0) * 16_666_667) }.joined(separator: "\n") + "\n---PROFILEDATA---\n"
        }
        let dump = "** Graphics info for pid 100 [com.example.launcher] **\n" + block("Launcher", frames: 3, start: 1_000_000_000)
            + "** Graphics info for pid 200 [com.example.feed] **\n" + block("Feed", frames: 5, start: 2_000_000_000) + block("Dialog", frames: 2, start: 3_000_000_000)
        let most = try importText(dump)
        #expect(most.frames == 5)
        #expect(most.warnings.contains { $0.hasPrefix("read window 'Feed' of com.example.feed (pid 200): 5 frames (the most frames; --process NAME|PID picks a process); left out 'Launcher' of com.example.launcher (pid 100): 3 frames, 'Dialog'") })
        let launcher = try importBytes(Array(dump.utf8), importer: FramestatsImporter(selection: PerfettoProcessSelection("com.example.launcher")))
        #expect(launcher.frames == 3)
        let byPid = try importBytes(Array(dump.utf8), importer: FramestatsImporter(selection: PerfettoProcessSelection("100")))
        #expect(byPid.frames == 3)
        #expect {
            _ = try importBytes(Array(dump.utf8), importer: FramestatsImporter(selection: PerfettoProcessSelection("com.other")))
        } throws: { error in
            "\(error)".contains("a process the dump has windows of, one of: com.example.feed (pid 200), com.example.launcher (pid 100)")
        }
    }

    /// --refresh against a dump's own rate: refused where the dump records it (FrameInterval), said
    /// where only the vsync spacing disagrees with it.
    @Test func refreshThatContradictsTheDumpIsRefusedOrSaid() throws {
        let android12 = try [UInt8](Data(contentsOf: Self.fixtures.appendingPathComponent("framestats-android12.txt")))
        #expect {
            _ = try importBytes(android12, importer: FramestatsImporter(periodNs: 11_111_111))
        } throws: { error in
            "\(error)".contains("its frames record 60 Hz (FrameInterval), --refresh says 90 Hz")
        }
        let android6 = try [UInt8](Data(contentsOf: Self.fixtures.appendingPathComponent("framestats-android6.txt")))
        let said = try importBytes(android6, importer: FramestatsImporter(periodNs: 11_111_111))
        #expect(said.warnings.contains { $0.hasPrefix("--refresh 90 Hz, though the frames' IntendedVsync steps (60 Hz) are not whole periods of it") })
        let agreeing = try importBytes(android6, importer: FramestatsImporter(periodNs: 8_333_333))
        #expect(!agreeing.warnings.contains { $0.hasPrefix("--refresh") })
    }

    @Test func sniffsADumpFromItsFirstBytes() {
        #expect(ImportFormat.sniff(Array("Applications Graphics Acceleration Info:\nUptime".utf8)[...]) == .framestats)
        #expect(ImportFormat.sniff(Array("\n\n---PROFILEDATA---\nFlags,".utf8)[...]) == .framestats)
        #expect(ImportFormat.sniff(Array("[{\"ph\":\"X\"}]".utf8)[...]) == .chrome)
    }
}
