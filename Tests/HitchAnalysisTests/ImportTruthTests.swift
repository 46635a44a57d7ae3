import Foundation
import HitchTrace
import Testing
@testable import HitchAnalysis

/// Imported traces judged against what their generators planted, and against the platform's own
/// verdict carried beside each frame (docs/IMPORT.md).
@Suite struct ImportTruthTests {
    static let fixtures = HostileAnalysisTests.repository.appendingPathComponent("Tests/Fixtures/import")

    static func importAndAnalyze(_ format: ImportFormat, _ name: String, options: ImportOptions = ImportOptions()) throws -> (ImportSummary, Analysis) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).fxt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let summary = try TraceImport.run(format, inputs: [fixtures.appendingPathComponent(name).path], output: output, options: options)
        var analyzer = Analyzer(options: AnalyzerOptions(refreshRatesHz: [60, 120]))
        var reader = try TraceReader(path: output)
        try analyzer.add(&reader, path: output)
        return (summary, analyzer.finish())
    }

    /// Every FrameInfo column set from Android 6 to 16 (FrameInterval and FrameStartTime swapped in
    /// one header, DisplayPresentTime 0 in it, two windows at 60 and 120 Hz in one dump): each window
    /// has a frame one period late and one two periods late, and Android calls exactly those janky.
    @Test(arguments: ["framestats-android6.txt", "framestats-android8.txt", "framestats-android10.txt", "framestats-android12.txt",
                      "framestats-android12-swapped.txt", "framestats-android14.txt", "framestats-android16.txt"])
    func framestatsJankyFramesAreOurHitches(_ name: String) throws {
        let (summary, analysis) = try Self.importAndAnalyze(.framestats, name)
        let windows = name.contains("android14") ? 2 : 1
        #expect(summary.frames == 40 * windows)
        let agreement = try #require(analysis.platformAgreement)
        #expect(agreement.frames == 40 * windows)
        #expect(agreement.bothJanky == 2 * windows && agreement.platformOnly == 0 && agreement.hitchOnly == 0)
        // Hitches of one and two periods at each window's own rate (FrameInterval, or inferred).
        let hitches = analysis.frames.filter { $0.hitchMs > 0 }
        #expect(hitches.count == 2 * windows)
        for pair in stride(from: 0, to: hitches.count, by: 2) {
            let period = hitches[pair].periodMs
            #expect(abs(hitches[pair].hitchMs - period) < 0.001)
            #expect(abs(hitches[pair + 1].hitchMs - 2 * period) < 0.001)
            #expect(hitches[pair].kind == .commit && hitches[pair + 1].kind == .commit)
        }
        #expect(analysis.stages.contains { $0.name == "draw" && $0.count == 40 * windows })
    }

    @Test func framestatsRefreshOptionOverridesTheInferredPeriod() throws {
        let (_, analysis) = try Self.importAndAnalyze(.framestats, "framestats-android6.txt", options: ImportOptions(periodNs: 8_333_333))
        #expect(analysis.recordedRates.map(\.rateHz) == [120])
    }
}
