#if canImport(Glibc)
import Glibc
#endif

// A Perfetto protobuf trace (`perfetto -c config -o trace.pftrace`) -> frames, stages and
// scheduling records. Read as a stream of `TracePacket`s (field 1 of `Trace`), one packet in memory
// at a time; `compressed_packets` (deflate) are inflated and read the same way. What is read:
//
// - `frame_timeline_event` (76): SurfaceFlinger's FrameTimeline. Each app surface frame (token,
//   layer) becomes a frame: begun at its expected start (its vsync), due at its expected end (the
//   app's deadline), handed over at its actual end (max of GPU done and buffer post), shown at the
//   actual end of the display frame it was presented in (`display_frame_token`). Present type,
//   jank type bits and prediction type become the platform verdict beside the frame.
// - `track_event` (11) slices on thread tracks (`track_descriptor`, 60), and atrace slices from
//   ftrace `print` events (`B|pid|name`, `E|pid`): intervals on their threads, the trailing token
//   dropped from names such as `Choreographer#doFrame 1234`.
// - ftrace `sched_switch` and `sched_waking` (also as `compact_sched`): the app's threads' context
//   switches, with their CPU, and thread-state readings at each frame's phases (SchedAccounting).
// - `process_tree` (2) and track descriptors: process and thread names.
// - the app's hangs (PerfettoHangs): its long top-level main-thread slices, and ANRs from system_server's
//   atrace counters (`ErrorId:`, `Subject(for ErrorId`) and timer slices (`expired(`).
//
// A trace holds one app's frames, or `--process` picks one (PerfettoProcessSelection).
//
// Every other field is skipped by its wire type, so what later Android releases add is no error.

public struct PerfettoImporter {
    /// A packet (or an inflated `compressed_packets` batch) larger than this is refused.
    public var maxPacketBytes = 64 << 20
    public var maxInflatedBytes = 256 << 20
    /// The one app whose frames and threads are imported, from a trace with several.
    public var selection: PerfettoProcessSelection?

    public init(selection: PerfettoProcessSelection? = nil) { self.selection = selection }

    public func importFile(path: String, into sink: ImportSink) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ImportError(file: path, location: "open", expected: "a readable file (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        try run(name: path, into: sink) { buffer, count in
            while true {
                let got = read(fd, buffer, count)
                if got < 0, errno == EINTR { continue }
                return got
            }
        }
    }

    /// Imports a trace held in memory (tests, fuzzing).
    public func importBytes(_ bytes: [UInt8], name: String, into sink: ImportSink) throws {
        var position = 0
        try run(name: name, into: sink) { buffer, count in
            let n = min(count, bytes.count - position)
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
            position += n
            return n
        }
    }

    /// The packet loop over `readInto` (fills a buffer, returns the bytes read, 0 at the end, -1 on error).
    private func run(name path: String, into sink: ImportSink, readInto: (UnsafeMutableRawPointer, Int) -> Int) throws {
        let state = PerfettoState(sink: sink, file: path, selection: selection)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        var bufferStart = 0          // first unread byte in `buffer`
        var bufferOffset: UInt64 = 0 // file offset of buffer[0]
        var atEnd = false
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var packets = 0
        func fill() throws {
            if bufferStart > 0 {
                buffer.removeFirst(bufferStart)
                bufferOffset += UInt64(bufferStart)
                bufferStart = 0
            }
            let got = chunk.withUnsafeMutableBytes { readInto($0.baseAddress!, $0.count) }
            if got < 0 {
                throw ImportError(file: path, location: "byte \(bufferOffset + UInt64(buffer.count))", expected: "readable data (\(String(cString: strerror(errno))))")
            }
            if got == 0 { atEnd = true } else { buffer.append(contentsOf: chunk[0..<got]) }
        }
        while true {
            // A top-level field: its tag and length must be in the buffer, then its bytes.
            if buffer.count - bufferStart < 20, !atEnd { try fill(); continue }
            if bufferStart >= buffer.count { break }
            let header = buffer.withUnsafeBufferPointer { readHeader($0, from: bufferStart) }
            let fieldOffset = bufferOffset + UInt64(bufferStart)
            guard let (number, wireType, length, headerBytes) = header else {
                if !atEnd { try fill(); continue }
                throw ImportError(file: path, location: "byte \(fieldOffset)", expected: "a complete field tag and length (the file ends inside one)")
            }
            if number == 0 || wireType > 5 || wireType == 3 || wireType == 4 {
                throw ImportError(file: path, location: "byte \(fieldOffset)",
                                  expected: packets == 0 ? "a Perfetto trace: a TracePacket (field 1, wire type 2) at the start" : "a field tag with a known wire type, found field \(number) wire type \(wireType)")
            }
            // The length is checked before it is added to anything: a hostile one near 2^64 would overflow.
            if wireType == 2 && length > UInt64(maxPacketBytes) {
                throw ImportError(file: path, location: "byte \(fieldOffset)", expected: "a packet under \(maxPacketBytes >> 20) MB, found one of \(length) bytes")
            }
            let size = headerBytes + (wireType == 2 ? Int(length) : wireType == 0 ? 0 : wireType == 1 ? 8 : 4)
            if buffer.count - bufferStart < size {
                if atEnd {
                    throw ImportError(file: path, location: "byte \(fieldOffset)", expected: "\(size) bytes of field \(number), the file ends after \(buffer.count - bufferStart)")
                }
                try fill()
                continue
            }
            if number == 1 && wireType == 2 {
                let start = bufferStart + headerBytes
                try buffer.withUnsafeBufferPointer { bytes in
                    try state.packet(ProtoReader(bytes, range: start..<(start + Int(length)), base: bufferOffset), depth: 0, importer: self)
                }
                packets += 1
            }
            bufferStart += size
        }
        if packets == 0 { throw ImportError(file: path, location: "byte 0", expected: "a Perfetto trace with at least one TracePacket") }
        try state.finish()
    }

    /// (field number, wire type, length for wire type 2 else 0, bytes of tag and length), or nil when
    /// the buffer ends inside them.
    private func readHeader(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (UInt64, UInt64, UInt64, Int)? {
        var position = start
        func varint() -> UInt64? {
            var value: UInt64 = 0, shift: UInt64 = 0
            while position < bytes.count, shift < 64 {
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        guard let tag = varint() else { return nil }
        if tag & 7 == 2 {
            guard let length = varint() else { return nil }
            return (tag >> 3, 2, length, position - start)
        }
        if tag & 7 == 0 { guard varint() != nil else { return nil } }
        return (tag >> 3, tag & 7, 0, position - start)
    }

    /// Inflates a zlib (or raw deflate) stream, refusing more than `maxInflatedBytes`.
    func inflate(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        Inflater.inflate(input, limit: maxInflatedBytes)
    }
}

/// `--process NAME|PID`: a pid, or a process name (the `process_tree` cmdline's first word without
/// its path, or the package its layer names: "com.example.app/...#0").
public enum PerfettoProcessSelection: Sendable, Equatable, CustomStringConvertible {
    case pid(Int64)
    case name(String)

    public init(_ text: String) {
        if let pid = Int64(text), pid > 0 { self = .pid(pid) } else { self = .name(text) }
    }

    func matches(pid: Int64, processName: String?, layerPackage: String?) -> Bool {
        switch self {
        case .pid(let wanted): pid == wanted
        case .name(let name): processName == name || layerPackage == name
        }
    }

    public var description: String {
        switch self {
        case .pid(let pid): "pid \(pid)"
        case .name(let name): "'\(name)'"
        }
    }
}
