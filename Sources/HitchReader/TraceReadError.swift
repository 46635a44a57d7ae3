/// Why a trace cannot be read. Every description is one line naming the byte offset.
public enum TraceReadError: Error, CustomStringConvertible, Sendable, Equatable {
    case cannotOpen(path: String, reason: String)
    case ioError(offset: UInt64, reason: String)
    case empty
    case badMagic(offset: UInt64, found: UInt64)
    case impossibleRecordSize(offset: UInt64, header: UInt64)
    case tooManyStrings(offset: UInt64, limit: Int)
    case tooManyThreads(offset: UInt64, limit: Int)

    public var offset: UInt64 {
        switch self {
        case .cannotOpen, .empty: 0
        case let .ioError(offset, _), let .badMagic(offset, _), let .impossibleRecordSize(offset, _),
             let .tooManyStrings(offset, _), let .tooManyThreads(offset, _): offset
        }
    }

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): "cannot open trace '\(path)': \(reason)"
        case let .ioError(offset, reason): "read error at byte \(offset): \(reason)"
        case .empty: "not a trace: the file is empty (byte 0)"
        case let .badMagic(offset, found):
            "not an FXT trace: byte \(offset) holds 0x\(String(found, radix: 16, uppercase: false)), expected the magic record 0x0016547846040010"
        case let .impossibleRecordSize(offset, header):
            "corrupt trace: record at byte \(offset) has size 0 (header 0x\(String(header, radix: 16))), cannot continue"
        case let .tooManyStrings(offset, limit): "trace defines more than \(limit) distinct strings (at byte \(offset)); refusing to grow further"
        case let .tooManyThreads(offset, limit): "trace defines more than \(limit) distinct threads (at byte \(offset)); refusing to grow further"
        }
    }
}

/// Something the reader skipped; the rest of the trace was still read.
public struct TraceReadWarning: Sendable, Equatable, CustomStringConvertible {
    public var offset: UInt64
    public var message: String
    public var description: String { "byte \(offset): \(message)" }
}

/// A thread of a trace, by the koids the file names it with.
public struct TraceThread: Sendable, Equatable {
    public var id: ThreadID
    public var processID: UInt64
    public var threadID: UInt64
    public var name: String
}
