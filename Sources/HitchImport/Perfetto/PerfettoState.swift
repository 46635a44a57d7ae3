import HitchReader
import HitchTrace

// What the Perfetto importer keeps between packets, split by packet kind as trace_processor splits
// its parsers: the process tree and thread tracks (`PerfettoProcesses`), track-event and atrace
// slices (`PerfettoSlices`), ftrace scheduling (`PerfettoScheduling`) and SurfaceFlinger's
// FrameTimeline (`PerfettoFrameTimeline`). This type reads each packet and hands its fields to the
// one that reads them. Everything is bounded: names and tracks by `maxNames`, what waits for its
// other half by `maxWaiting`, the oldest going out first.

struct PerfettoState {
    let file: String
    private let sink: ImportSink
    private let processes: PerfettoProcesses
    private let slices: PerfettoSlices
    private let scheduling: PerfettoScheduling
    private let frames: PerfettoFrameTimeline
    static let maxNames = 1 << 20
    static let maxWaiting = 50_000

    init(sink: ImportSink, file: String, selection: PerfettoProcessSelection? = nil) {
        self.sink = sink
        self.file = file
        processes = PerfettoProcesses(sink: sink, selection: selection)
        slices = PerfettoSlices(sink: sink, processes: processes)
        scheduling = PerfettoScheduling(sink: sink, processes: processes, slices: slices)
        frames = PerfettoFrameTimeline(sink: sink, processes: processes, scheduling: scheduling)
    }

    /// One `TracePacket`: its timestamp and sequence, then its body by field (AOSP trace_packet.proto).
    func packet(_ message: ProtoReader, depth: Int, importer: PerfettoImporter) throws {
        var reader = message
        var timestamp: Int64?
        var sequenceID: UInt64 = 0
        var clearsState = false
        var body: [(UInt32, Range<Int>)] = []
        do {
            while let field = try reader.next() {
                switch (field.number, field.value) {
                case (8, _): timestamp = field.int64
                case (10, _): sequenceID = field.uint64
                case (13, _): if field.uint64 & 1 != 0 { clearsState = true }
                case (41, _): if field.bool { clearsState = true }
                case (let number, .bytes(let range)) where [1, 2, 11, 12, 50, 60, 76].contains(number):
                    body.append((number, range))
                default: break
                }
            }
            if clearsState { slices.clearSequence(sequenceID) }
            // Interned names first: a packet's own track event may use them.
            for (number, range) in body where number == 12 { try slices.internedData(message.message(range), sequence: sequenceID) }
            for (number, range) in body {
                let sub = message.message(range)
                switch number {
                case 1: try ftrace(sub)
                case 2: try processes.processTree(sub)
                case 11: if let timestamp { try slices.trackEvent(sub, at: timestamp, sequence: sequenceID) }
                case 50: try compressed(message, range, depth: depth, importer: importer)
                case 60: try processes.trackDescriptor(sub)
                case 76: if let timestamp { try frames.frameTimeline(sub, at: timestamp) }
                default: break
                }
            }
        } catch let error as ProtoError {
            throw ImportError(file: file, location: "byte \(error.offset)", expected: error.expected)
        }
    }

    private func compressed(_ message: ProtoReader, _ range: Range<Int>, depth: Int, importer: PerfettoImporter) throws {
        guard depth == 0 else { sink.skip("compressed packets nested in compressed packets"); return }
        guard let inflated = importer.inflate(UnsafeBufferPointer(rebasing: message.bytes[range])) else {
            throw ImportError(file: file, location: "byte \(message.base + UInt64(range.lowerBound))",
                              expected: "compressed_packets holding a complete deflate stream of at most \(importer.maxInflatedBytes >> 20) MB")
        }
        try inflated.withUnsafeBufferPointer { bytes in
            // Offsets inside the inflated batch are reported at the batch's own offset.
            var batch = ProtoReader(bytes, range: 0..<bytes.count, base: 0)
            do {
                while let field = try batch.next() {
                    guard field.number == 1, case .bytes(let packet) = field.value else { continue }
                    try self.packet(ProtoReader(bytes, range: packet, base: 0), depth: depth + 1, importer: importer)
                }
            } catch let error as ProtoError {
                throw ImportError(file: file, location: "byte \(message.base + UInt64(range.lowerBound)) (compressed packets, inflated byte \(error.offset))",
                                  expected: error.expected)
            } catch let error as ImportError {
                throw ImportError(file: file, location: "byte \(message.base + UInt64(range.lowerBound)) (compressed packets, inflated \(error.location))",
                                  expected: error.expected)
            }
        }
    }

    /// An `FtraceEventBundle`: one CPU's events (field 2) and its `compact_sched` (field 4), read
    /// after the bundle's `cpu` (field 1), wherever that is. Atrace markers go to the slices, the
    /// rest to the scheduling; then the frames its events were holding back are written.
    private func ftrace(_ message: ProtoReader) throws(ProtoError) {
        var reader = message
        var cpu: UInt64 = UInt64(SchedSwitch.unknownCPU)
        var events: [Range<Int>] = []
        var compact: Range<Int>?
        while let field = try reader.next() {
            switch (field.number, field.value) {
            case (1, _): cpu = field.uint64
            case (2, .bytes(let range)): events.append(range)
            case (4, .bytes(let range)): compact = range
            default: break
            }
        }
        let onCPU = UInt16(clamping: min(cpu, UInt64(SchedSwitch.unknownCPU)))
        for range in events {
            var event = message.message(range)
            var timestamp: Int64 = 0, tid: Int64 = 0
            var print: Range<Int>?, schedSwitch: Range<Int>?, waking: Range<Int>?
            while let f = try event.next() {
                switch (f.number, f.value) {
                case (1, _): timestamp = f.int64
                case (2, _): tid = f.int64
                case (3, .bytes(let r)): print = r
                case (4, .bytes(let r)): schedSwitch = r
                case (17, .bytes(let r)), (20, .bytes(let r)): waking = r   // sched_wakeup, sched_waking
                default: break
                }
            }
            if let print { try slices.atrace(message.message(print), tid: tid, at: timestamp) }
            if let schedSwitch { try scheduling.contextSwitch(message.message(schedSwitch), cpu: onCPU, at: timestamp) }
            if let waking { try scheduling.waking(message.message(waking), at: timestamp) }
        }
        if let compact { try scheduling.compactSched(message.message(compact), cpu: onCPU) }
        frames.drainDeferred()
    }

    /// The end of the trace: frames still in flight, what was skipped, then the process check
    /// (frames of one app, or of the one `--process` names).
    func finish() throws {
        frames.finish()
        scheduling.finish()
        slices.hangs.finish()
        try processes.checkOneApp(file: file)
    }
}

/// Keys in the order they were first added, at most `limit`: adding one past the limit hands back
/// the oldest, for its table to drop (the bound on what waits for its other half).
struct InsertionOrder<Key: Hashable> {
    private var keys: [Key] = []
    private var head = 0
    let limit: Int

    init(limit: Int) { self.limit = limit }

    mutating func add(_ key: Key) -> Key? {
        keys.append(key)
        guard keys.count - head > limit else { return nil }
        let oldest = keys[head]
        head += 1
        if head > 4096 { keys.removeFirst(head); head = 0 }
        return oldest
    }
}
