import Foundation
import Testing
import HitchReader
@testable import HitchAnalysis

@Suite struct TraceReaderInputTests {
    @Test func syntheticTraceRoundTripsThroughTheFXTReader() throws {
        let path = NSTemporaryDirectory() + "hitch-analysis-test-\(getpid()).fxt"
        defer { unlink(path) }
        let writer = try TraceFileWriter(path: path)
        var generator = SyntheticTrace(seed: 3)
        let written = generator.write(to: writer, targetBytes: .max, maxFrames: 2000)
        _ = try writer.close()
        let a = try Analyzer.analyze(paths: [path])
        #expect(a.recorded.frameCount == written.frames)
        #expect(a.metadata["workload"] == "synthetic")
        #expect(a.hitches["120"]?.source == .recorded)
        #expect((a.hitches["120"]?.hitchCount ?? 0) > 0)
        #expect(a.stages.contains { $0.name == "filter" && $0.mainThreadShare > 0 })
        #expect(a.stages.first { $0.name == "image decode" }?.threads == ["worker"])
        #expect(a.invalidations.first?.source == "FeedModel.query")
        // Merging the same trace twice doubles counts and keeps the ratio.
        let twice = try Analyzer.analyze(paths: [path, path])
        #expect(twice.recorded.frameCount == 2 * written.frames)
        #expect(abs((twice.hitches["120"]?.hitchTimeRatioMsPerS ?? 0) - (a.hitches["120"]?.hitchTimeRatioMsPerS ?? 0)) < 1e-9)
    }

    @Test func unreadableTracesThrowOneLineErrors() throws {
        #expect(throws: TraceReadError.self) { try Analyzer.analyze(paths: ["/nonexistent/trace.fxt"]) }
        let path = NSTemporaryDirectory() + "hitch-analysis-garbage-\(getpid()).fxt"
        defer { unlink(path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data("this is not a trace at all".utf8)))
        do {
            _ = try Analyzer.analyze(paths: [path])
            Issue.record("garbage was accepted")
        } catch let error as TraceReadError {
            #expect(!error.description.contains("\n"))
            #expect(error.description.contains("byte"))
        }
    }
}
