import HitchAnalysis
import HitchImport
import HitchReader

// libFuzzer target: the Chrome trace-event JSON importer over arbitrary bytes, and what it imports
// through the analyzer (the same path `hitch analyze FILE.json` and `hitch import chrome` take).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChromeImport(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let imported: ImportedTrace
    do {
        imported = try ChromeTraceImporter.importBytes(bytes, name: "fuzz.json")
    } catch {
        _ = "\(error)"
        return 0
    }
    var list = TraceEventList(events: imported.events, strings: imported.strings, threadNames: imported.threadNames)
    var analyzer = Analyzer(options: AnalyzerOptions(refreshRatesHz: [60, 120]))
    do {
        try analyzer.add(&list, path: "fuzz.json")
    } catch {
        _ = "\(error)"
        return 0
    }
    _ = FuzzJSON.encode(analyzer.finish())
    return 0
}
