import HitchReader

// libFuzzer target: the FXT reader over arbitrary bytes. Every event is read to the end of the trace
// or to the first error; the reader's string and thread tables are touched too, since a bad index
// there is the classic crash. A crash, a hang (-timeout) or an allocation past -malloc_limit_mb is
// a finding. Built by scripts/fuzz.sh.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard var reader = try? TraceReader(bytes: bytes) else { return 0 }
    var checksum = 0
    while true {
        let event: TraceEvent?
        do { event = try reader.next() } catch { _ = error.description; break }
        guard let event else { break }
        checksum &+= Int(event.thread.rawValue)
        switch event.payload {
        case let .intervalBegin(category, name), let .intervalEnd(category, name),
             let .intervalComplete(category, name, _), let .instant(category, name):
            checksum &+= reader.string(category).utf8.count &+ reader.string(name).utf8.count
        case let .metadata(key, value):
            checksum &+= reader.string(key).utf8.count &+ reader.string(value).utf8.count
        case let .symbol(symbol):
            checksum &+= reader.string(symbol.function).utf8.count &+ reader.string(symbol.image).utf8.count
        case let .bodyEvaluation(body):
            checksum &+= reader.string(body.viewType).utf8.count
        case let .invalidation(invalidation):
            checksum &+= reader.string(invalidation.source).utf8.count &+ reader.string(invalidation.target).utf8.count
        default:
            break
        }
        checksum &+= reader.threadName(event.thread).utf8.count
    }
    checksum &+= reader.threads.count &+ reader.metadata.count &+ reader.warnings.count
    return checksum == -1 ? 1 : 0
}
