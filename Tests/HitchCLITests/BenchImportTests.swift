import Foundation
import Testing

/// `hitch bench import`.
@Suite struct BenchImportTests {
    /// `hitch bench import` measures every format in one run, beside the FXT reader (small inputs:
    /// the figures are the benchmark's, not the test's).
    @Test func benchImportReportsEveryFormatBesideTheReader() throws {
        let r = try HitchCLI.run(["bench", "import", "--size", "512KB", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: [String: Double]]
        #expect(Set(object?.keys.map { $0 } ?? []) == ["fxt", "framestats", "perfetto", "xctrace"])
        for (format, figures) in object ?? [:] {
            #expect((figures["megabytesPerSecond"] ?? 0) > 0 && (figures["frames"] ?? 0) > 0, "\(format)")
        }
        #expect(object?["fxt"]?["toReaderRatio"] == 1)
        #expect(try HitchCLI.run(["bench", "import", "--formats", "pdf"]).status == 2)
    }
}
