import HitchAnalysis
import HitchReader

// libFuzzer target: arbitrary bytes through the FXT reader into the whole analyzer (every pass) and
// its JSON encoding. Hostile event streams (ends before begins, frames without vsyncs, absurd
// timestamps and periods, undefined stacks) must give an Analysis or a clean error, never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAnalyze(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard var reader = try? TraceReader(bytes: bytes) else { return 0 }
    var analyzer = Analyzer(options: AnalyzerOptions(refreshRatesHz: [60, 120, 90]))
    do {
        try analyzer.add(&reader, path: "fuzz.fxt")
    } catch {
        _ = "\(error)"
        return 0
    }
    let analysis = analyzer.finish()
    _ = FuzzJSON.encode(analysis)
    return 0
}
