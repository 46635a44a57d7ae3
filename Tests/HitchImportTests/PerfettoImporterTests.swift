import Foundation
import HitchImport
import HitchTestSupport
import Testing

@Suite struct PerfettoImporterTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/import")

    func importBytes(_ bytes: [UInt8]) throws -> ImportSummary {
        let directory = FileManager.default.temporaryDirectory
        let input = directory.appendingPathComponent("perfetto-\(UUID().uuidString).pftrace").path
        let output = input + ".fxt"
        defer { try? FileManager.default.removeItem(atPath: input); try? FileManager.default.removeItem(atPath: output) }
        _ = FileManager.default.createFile(atPath: input, contents: Data(bytes))
        return try TraceImport.run(.perfetto, inputs: [input], output: output)
    }

    func expectError(_ bytes: [UInt8], _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        if let error = expectOneLineError(ImportError.self, for: "\(bytes.prefix(16))", contains: fragment, sourceLocation: sourceLocation,
                                          { _ = try importBytes(bytes) }) {
            #expect(error.location.hasPrefix("byte "), "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func malformedTracesNameTheByteAndWhatWasExpected() throws {
        let fixture = try [UInt8](Data(contentsOf: Self.fixtures.appendingPathComponent("perfetto-60hz.pftrace")))
        expectError(Array(fixture.prefix(fixture.count - 3)), "the file ends after")
        expectError([0x0A, 0x05, 0x40, 0xFF, 0xFF, 0xFF, 0xFF], "a varint of at most 10 bytes")
        expectError([0x0A, 0x03, 0x12, 0x09, 0x00], "bytes within its message")
        expectError([0x0F], "a Perfetto trace")
        // compressed_packets (field 50) that are not deflate.
        expectError([0x0A, 0x05, 0x92, 0x03, 0x02, 0x01, 0x02], "compressed_packets holding a complete deflate stream")
    }

    /// A process or layer name the error quotes (the candidates of a trace with two apps) may hold
    /// a newline; the error is still one line (a fuzzer's finding).
    @Test func errorsQuotingTheTracesNamesStayOneLine() {
        let error = ImportError(file: "t.pftrace", location: "FrameTimeline", expected: "frames of: com.a\n (pid 1), com.b\r\u{7F} (pid 2)")
        #expect(!error.description.contains("\n") && !error.description.contains("\r") && error.description.contains("com.b"))
    }

    @Test func unknownFieldsAreSkipped() throws {
        // A packet with only unknown fields (varint, fixed64, bytes, fixed32), then nothing else.
        let packet: [UInt8] = [0xB8, 0x3E, 0x07, 0xC1, 0x3E, 1, 2, 3, 4, 5, 6, 7, 8, 0xCA, 0x3E, 0x01, 0x00, 0xD5, 0x3E, 1, 2, 3, 4]
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("perfetto-\(UUID().uuidString).fxt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let sink = try ImportSink(path: output)
        try PerfettoImporter().importBytes([0x0A, UInt8(packet.count)] + packet, name: "t.pftrace", into: sink)
        #expect(try sink.finish().frames == 0)
        // Through `hitch import`, a trace with nothing to analyze is an error that says so.
        #expect {
            _ = try importBytes([0x0A, UInt8(packet.count)] + packet)
        } throws: { error in
            "\(error)".contains("whole file: frames, the platform's own hitches, samples or hangs to analyze; found none")
        }
    }

    @Test func sniffsATraceFromItsFirstBytes() throws {
        let fixture = try [UInt8](Data(contentsOf: Self.fixtures.appendingPathComponent("perfetto-120hz.pftrace")))
        #expect(ImportFormat.sniff(fixture.prefix(64)) == .perfetto)
        #expect(ImportFormat.sniff(Array("\n\nhello".utf8)[...]) == nil)
    }
}
