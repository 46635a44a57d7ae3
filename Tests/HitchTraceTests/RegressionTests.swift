import Foundation
import Testing
import HitchImport
import HitchReader

/// Every fuzz seed and every fuzzer finding through the reader and the Chrome importer, in a child
/// process (a trap fails this test instead of killing the suite). What the fuzz targets check,
/// kept as a plain test so a change that breaks an old input is caught by `swift test`.
@Suite struct RegressionTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func files(_ relative: String, suffix: String) -> [String] {
        let directory = repository.appendingPathComponent(relative)
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(suffix) }.sorted().map { directory.appendingPathComponent($0).path }
    }

    static var traceInputs: [String] {
        files("Tests/Fuzz/corpus/reader", suffix: "") + files("Tests/Fixtures/regressions", suffix: ".fxt")
    }

    static var chromeInputs: [String] {
        files("Tests/Fuzz/corpus/chrome", suffix: "") + files("Tests/Fixtures/regressions", suffix: ".json").filter { $0.contains("/chrome-") }
    }

    @Test func readerReadsEverySeedAndFindingToTheEndOrOneError() async throws {
        try #require(Self.traceInputs.count > 10)
        await #expect(processExitsWith: .success) {
            for path in RegressionTests.traceInputs {
                guard let bytes = FileManager.default.contents(atPath: path) else { exit(5) }
                // From memory and from the file: the two input paths of the reader.
                for useFile in [false, true] {
                    var reader: TraceReader
                    do {
                        reader = useFile ? try TraceReader(path: path) : try TraceReader(bytes: [UInt8](bytes))
                    } catch {
                        if "\(error)".contains("\n") { exit(3) }
                        continue
                    }
                    var count = 0
                    while true {
                        do {
                            guard let event = try reader.next() else { break }
                            count += 1
                            _ = reader.threadName(event.thread)
                        } catch {
                            if "\(error)".contains("\n") || !"\(error)".contains("byte") { exit(4) }
                            break
                        }
                    }
                    if reader.warnings.contains(where: { $0.description.contains("\n") }) { exit(6) }
                }
            }
        }
    }

    @Test func chromeImporterImportsEverySeedAndFindingOrGivesOneLine() async throws {
        try #require(Self.chromeInputs.count > 5)
        await #expect(processExitsWith: .success) {
            for path in RegressionTests.chromeInputs {
                guard let bytes = FileManager.default.contents(atPath: path) else { exit(5) }
                do {
                    let trace = try ChromeTraceImporter.importBytes([UInt8](bytes), name: "input.json")
                    // Every string and thread an event names is in the imported tables.
                    for event in trace.events where Int(event.thread.rawValue) >= trace.threadNames.count { exit(7) }
                } catch {
                    if "\(error)".contains("\n") { exit(3) }
                }
            }
        }
    }
}
