#if canImport(Glibc)
import Glibc
#endif
import HitchAnalysis
import HitchImport
import HitchReader

// libFuzzer targets for the importers of other tools' traces: arbitrary bytes through one importer
// into an FXT file, and that file through the analyzer (the path `hitch analyze FILE` takes). Which
// importer is compiled in is chosen by scripts/fuzz.sh with -D FUZZ_FRAMESTATS / FUZZ_PERFETTO / FUZZ_XCTRACE.

/// One FXT file per fuzzing process, overwritten by every input.
private let fuzzOutput = "/tmp/hitch-import-fuzz-\(getpid()).fxt"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImport(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let sink = try ImportSink(path: fuzzOutput)
        #if FUZZ_FRAMESTATS
        try FramestatsImporter().importBytes(bytes, name: "fuzz.txt", into: sink)
        #elseif FUZZ_PERFETTO
        // Half the inputs pick the seeds' app (`--process`): a trace with two apps' frames is otherwise
        // refused at its end, before the analysis sees the thread states built from its sched events.
        try PerfettoImporter(selection: size % 2 == 1 ? .name("com.example.feed") : nil).importBytes(bytes, name: "fuzz.pftrace", into: sink)
        #elseif FUZZ_XCTRACE
        var importer = XctraceImporter()
        try importer.importBytes(bytes, name: "fuzz.xml", into: sink)
        importer.finish(into: sink)
        #endif
        _ = try sink.finish()
    } catch let error as ImportError {
        // The error is one line naming where and what was expected.
        precondition(!error.description.contains("\n"), "multi-line import error: \(error)")
        return 0
    } catch {
        _ = "\(error)"
        return 0
    }
    var analyzer = Analyzer(options: AnalyzerOptions(refreshRatesHz: [60, 120]))
    do {
        var reader = try TraceReader(path: fuzzOutput)
        try analyzer.add(&reader, path: "fuzz.fxt")
    } catch {
        _ = "\(error)"
        return 0
    }
    _ = FuzzJSON.encode(analyzer.finish())
    return 0
}
