import HitchReader
import HitchTrace

/// Slices (`track_event` on thread tracks, with their interned names, and atrace markers from ftrace
/// `print`): intervals on their threads, and the app's per-frame slices, which bound the windows of
/// the frames' thread-state readings.
final class PerfettoSlices {
    private let sink: ImportSink
    private let processes: PerfettoProcesses
    private let stageCategory: StringID
    /// The app's hangs: its long main-thread slices, and the ANR markers among the slices and counters.
    let hangs: PerfettoHangs

    init(sink: ImportSink, processes: PerfettoProcesses) {
        self.sink = sink
        self.processes = processes
        stageCategory = sink.string("slice")
        hangs = PerfettoHangs(sink: sink, processes: processes)
    }

    // MARK: Interned names

    private struct Sequence { var eventNames: [UInt64: String] = [:] }
    private var sequences: [UInt64: Sequence] = [:]

    /// A packet that clears its sequence's incremental state.
    func clearSequence(_ sequence: UInt64) { sequences[sequence] = Sequence() }

    func internedData(_ message: ProtoReader, sequence: UInt64) throws(ProtoError) {
        var reader = message
        while let field = try reader.next() {
            guard field.number == 2, case .bytes(let range) = field.value else { continue }
            var entry = message.message(range)
            var iid: UInt64 = 0, name = ""
            while let f = try entry.next() {
                if f.number == 1 { iid = f.uint64 }
                if f.number == 2, case .bytes(let text) = f.value { name = entry.string(text) }
            }
            if sequences[sequence, default: Sequence()].eventNames.count < PerfettoState.maxNames {
                sequences[sequence, default: Sequence()].eventNames[iid] = name
            }
        }
    }

    // MARK: Slices

    /// Open slices per thread: names, for the ends that carry none, and the token of a per-frame slice.
    private struct OpenSlice {
        var name: StringID; var frame: (token: Int64, main: Bool)?
        /// A top-level slice's name and begin (a long one on a main thread is a hang).
        var topLevel: (name: String, beginNs: Int64)?
    }
    private var open: [Int64: [OpenSlice]] = [:]

    /// "Choreographer#doFrame 1234" -> "Choreographer#doFrame": per-frame tokens would make every
    /// slice name unique.
    private func sliceName(_ raw: some StringProtocol) -> StringID { sink.string(Self.withoutToken(raw)) }

    /// A slice's name without its trailing per-frame token, at most 200 characters.
    static func withoutToken(_ raw: some StringProtocol) -> String {
        var text = Substring(raw)
        if let space = text.lastIndex(of: " "), text[text.index(after: space)...].allSatisfy(\.isNumber),
           text.index(after: space) < text.endIndex {
            text = text[..<space]
        }
        return String(text.prefix(200))
    }

    /// With `--process`, other processes' slices stay out.
    private func keepsSlices(of tid: Int64) -> Bool { processes.selection == nil || processes.isAppThread(tid) }

    private func begin(_ tid: Int64, _ raw: some StringProtocol, at timestamp: Int64) {
        hangs.sliceBegan(raw, at: timestamp)
        guard keepsSlices(of: tid) else { return }
        guard open[tid, default: []].count < 256 else { sink.skip("slices nested over 256 deep"); return }
        let name = sliceName(raw)
        let frame = Self.frameSliceToken(raw)
        let topLevel = open[tid, default: []].isEmpty ? (Self.withoutToken(raw), timestamp) : nil
        open[tid, default: []].append(OpenSlice(name: name, frame: frame, topLevel: topLevel))
        if let frame { frameSlice(tid, token: frame.token, main: frame.main, begin: timestamp, end: nil) }
        sink.emit(TraceEvent(timestampNs: timestamp, thread: processes.thread(tid), payload: .intervalBegin(category: stageCategory, name: name)))
    }

    private func end(_ tid: Int64, at timestamp: Int64) {
        guard keepsSlices(of: tid) else { return }
        guard let slice = open[tid]?.popLast() else { sink.skip("slice ends without a begin"); return }
        if let frame = slice.frame { frameSlice(tid, token: frame.token, main: frame.main, begin: nil, end: timestamp) }
        if let top = slice.topLevel { hangs.topLevelSlice(tid: tid, name: top.name, beginNs: top.beginNs, endNs: timestamp) }
        sink.emit(TraceEvent(timestampNs: timestamp, thread: processes.thread(tid), payload: .intervalEnd(category: stageCategory, name: slice.name)))
    }

    func trackEvent(_ message: ProtoReader, at timestamp: Int64, sequence: UInt64) throws(ProtoError) {
        var reader = message
        var type: UInt64 = 0, trackUUID: UInt64?, name: String?, nameIID: UInt64?
        while let field = try reader.next() {
            switch (field.number, field.value) {
            case (9, _): type = field.uint64
            case (11, _): trackUUID = field.uint64
            case (10, _): nameIID = field.uint64
            case (23, .bytes(let range)): name = message.string(range)
            default: break
            }
        }
        guard type == 1 || type == 2 else { if type != 0 { sink.skip("track events other than slices") }; return }
        guard let trackUUID, let track = processes.track(trackUUID) else { sink.skip("slices on tracks that are not threads"); return }
        if type == 2 { end(track.tid, at: timestamp); return }
        let text = name ?? nameIID.flatMap { sequences[sequence]?.eventNames[$0] } ?? "?"
        begin(track.tid, text, at: timestamp)
    }

    /// An ftrace `print` event: an atrace marker (`B|pid|name`, `E|pid`).
    func atrace(_ message: ProtoReader, tid: Int64, at timestamp: Int64) throws(ProtoError) {
        var reader = message
        var buffer: String?
        while let f = try reader.next() {
            if f.number == 2, case .bytes(let range) = f.value { buffer = message.string(range) }
        }
        guard let buffer else { return }
        var text = Substring(buffer)
        while text.last == "\n" { text = text.dropLast() }
        if text.hasPrefix("B|") {
            let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { sink.skip("atrace markers without a name"); return }
            if let pid = Int64(parts[1]), pid > 0 { processes.noteProcess(pid, ofThread: tid) }
            begin(tid, parts[2], at: timestamp)
        } else if text.hasPrefix("E") {
            end(tid, at: timestamp)
        } else if text.hasPrefix("C|") {
            // A counter, `C|pid|name|value`: system_server's ANR markers are counters.
            let parts = text.split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count == 4, let pid = Int64(parts[1]) else { return }
            hangs.counter(pid: pid, name: parts[2], at: timestamp)
        }
    }

    // MARK: Frame slices

    /// The app's per-frame slices by (process, token): `Choreographer#doFrame <token>` on the main
    /// thread (its end is the hand-over to the RenderThread) and `DrawFrame(s) <token>` on the
    /// RenderThread. They bound the windows of the thread-state readings.
    struct FrameSlices {
        var mainTid: Int64 = 0, mainBegin: Int64?, mainEnd: Int64?
        var renderTid: Int64 = 0, renderBegin: Int64?, renderEnd: Int64?
    }
    private struct SliceKey: Hashable { var pid: Int64; var token: Int64 }
    private var frameSlices: [SliceKey: FrameSlices] = [:]
    private var frameSliceOrder = InsertionOrder<SliceKey>(limit: PerfettoState.maxWaiting)

    /// The per-frame slices of the frame `token` of process `pid`, as far as they have come.
    func frameSlices(pid: Int64, token: Int64) -> FrameSlices? { frameSlices[SliceKey(pid: pid, token: token)] }

    /// The token of a per-frame slice name, and whether it is the main thread's.
    static func frameSliceToken(_ name: some StringProtocol) -> (token: Int64, main: Bool)? {
        guard let space = name.lastIndex(of: " ") else { return nil }
        let head = name[..<space]
        let main: Bool
        if head == "Choreographer#doFrame" { main = true } else if head == "DrawFrame" || head == "DrawFrames" { main = false } else { return nil }
        guard let token = Int64(name[name.index(after: space)...]) else { return nil }
        return (token, main)
    }

    private func frameSlice(_ tid: Int64, token: Int64, main: Bool, begin: Int64?, end: Int64?) {
        let key = SliceKey(pid: processes.process(ofThread: tid), token: token)
        if frameSlices[key] == nil {
            frameSlices[key] = FrameSlices()
            if let oldest = frameSliceOrder.add(key) { frameSlices.removeValue(forKey: oldest) }
        }
        if main {
            frameSlices[key]!.mainTid = tid
            if let begin { frameSlices[key]!.mainBegin = begin }
            if let end { frameSlices[key]!.mainEnd = end }
        } else {
            frameSlices[key]!.renderTid = tid
            if let begin { frameSlices[key]!.renderBegin = begin }
            if let end { frameSlices[key]!.renderEnd = end }
        }
    }
}
