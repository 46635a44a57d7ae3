#if canImport(Glibc)
import Glibc
#endif
import HitchAnalysis
import HitchImport
import HitchReader

// libFuzzer targets for the importers of other tools' traces: arbitrary bytes through one importer
// into an FXT file, and that file through the analyzer (the path `hitch analyze FILE` takes). Which
// importer is compiled in is chosen by scripts/dev/fuzz.sh with -D FUZZ_FRAMESTATS / FUZZ_PERFETTO / FUZZ_XCTRACE.

/// One FXT file per fuzzing process, overwritten by every input.
private let fuzzOutput = "/tmp/hitch-import-fuzz-\(getpid()).fxt"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImport(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        #if FUZZ_FRAMESTATS
        let format = ImportFormat.framestats, options = ImportOptions()
        #elseif FUZZ_PERFETTO
        // Half the inputs pick the seeds' app (`--process`): a trace with two apps' frames is otherwise
        // refused at its end, before the analysis sees the thread states built from its sched events.
        let format = ImportFormat.perfetto, options = ImportOptions(process: size % 2 == 1 ? .name("com.example.feed") : nil)
        #elseif FUZZ_XCTRACE
        let format = ImportFormat.xctrace, options = ImportOptions()
        #endif
        // As `TraceImport.run` does, from memory.
        let sink = try ImportSink(path: fuzzOutput, keepsFileOrder: format.keepsFileOrder)
        var importer = format.importer(options: options)
        try importer.importBytes(bytes, name: "fuzz." + format.rawValue, into: sink)
        try importer.finish(into: sink)
        _ = try sink.finish()
    } catch let error as ImportError {
        // The error is one line naming where and what was expected.
        precondition(!error.description.contains("\n"), "multi-line import error: \(error)")
        return 0
    } catch {
        _ = "\(error)"
        return 0
    }
    guard var reader = try? TraceReader(path: fuzzOutput) else { return 0 }
    FuzzJSON.analyze(&reader, path: "fuzz.fxt")
    return 0
}
