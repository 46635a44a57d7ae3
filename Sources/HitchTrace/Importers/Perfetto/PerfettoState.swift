// What the Perfetto importer keeps between packets: tracks, names, interning, open slices and the
// FrameTimeline frames being assembled (SurfaceFlinger reports a frame's expected and actual
// timelines and its display frame separately, after the frame is shown). Everything is bounded:
// frames and display frames waiting are capped, the oldest going out first.

/// FrameTimelineEvent's field numbers and enums (AOSP frame_timeline_event.proto).
enum FrameTimelineField {
    static let expectedDisplayFrameStart: UInt32 = 1, actualDisplayFrameStart: UInt32 = 2
    static let expectedSurfaceFrameStart: UInt32 = 3, actualSurfaceFrameStart: UInt32 = 4, frameEnd: UInt32 = 5
    static let presentDropped: UInt64 = 4
    static let predictionExpired: UInt64 = 2
    static let jankNone: UInt64 = 1
    static let jankBufferStuffing: UInt64 = 128
    /// The jank type bits, in Perfetto's words.
    static let jankNames: [(bit: UInt64, name: String)] = [
        (2, "SurfaceFlinger Scheduling"), (4, "Prediction Error"), (8, "Display HAL"),
        (16, "SurfaceFlinger CPU Deadline Missed"), (32, "SurfaceFlinger GPU Deadline Missed"),
        (64, "App Deadline Missed"), (128, "Buffer Stuffing"), (256, "Unknown Jank"),
        (512, "SurfaceFlinger Stuffing"), (1024, "Dropped Frame"),
    ]
}

struct PerfettoState {
    let sink: ImportSink
    let file: String

    init(sink: ImportSink, file: String) {
        self.sink = sink
        self.file = file
        stageCategory = sink.string("slice")
    }

    // MARK: Names and threads

    private var processNames: [Int64: String] = [:]
    private var threadNames: [Int64: String] = [:]
    private var threadProcess: [Int64: Int64] = [:]
    private struct Track { var pid: Int64; var tid: Int64 }
    private var tracks: [UInt64: Track] = [:]
    private var declared: [Int64: ThreadID] = [:]
    /// Processes with app frames, and SurfaceFlinger's: their threads' switches are kept.
    private var framePids: Set<Int64> = []
    private let stageCategory: StringID
    private static let maxNames = 1 << 20

    private mutating func thread(_ tid: Int64, pid explicitPid: Int64? = nil, role: String? = nil) -> ThreadID {
        if let id = declared[tid] { return id }
        let pid = explicitPid ?? threadProcess[tid] ?? tid
        let name = threadNames[tid] ?? (tid == pid ? processNames[pid] : nil) ?? "thread \(tid)"
        let id = sink.thread(pid: UInt64(bitPattern: pid), tid: UInt64(bitPattern: tid), name: name,
                             role: role ?? (name == "RenderThread" ? "render" : nil))
        declared[tid] = id
        return id
    }

    // MARK: Packets

    private struct Sequence { var eventNames: [UInt64: String] = [:] }
    private var sequences: [UInt64: Sequence] = [:]

    mutating func packet(_ message: ProtoReader, depth: Int, importer: PerfettoImporter) throws {
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
            if clearsState { sequences[sequenceID] = Sequence() }
            // Interned names first: a packet's own track event may use them.
            for (number, range) in body where number == 12 { try internedData(message.message(range), sequence: sequenceID) }
            for (number, range) in body {
                let sub = message.message(range)
                switch number {
                case 1: try ftrace(sub)
                case 2: try processTree(sub)
                case 11: if let timestamp { try trackEvent(sub, at: timestamp, sequence: sequenceID) }
                case 50: try compressed(message, range, depth: depth, importer: importer)
                case 60: try trackDescriptor(sub)
                case 76: if let timestamp { try frameTimeline(sub, at: timestamp) }
                default: break
                }
            }
        } catch let error as ProtoError {
            throw ImportError(file: file, location: "byte \(error.offset)", expected: error.expected)
        }
    }

    private mutating func compressed(_ message: ProtoReader, _ range: Range<Int>, depth: Int, importer: PerfettoImporter) throws {
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

    private mutating func internedData(_ message: ProtoReader, sequence: UInt64) throws(ProtoError) {
        var reader = message
        while let field = try reader.next() {
            guard field.number == 2, case .bytes(let range) = field.value else { continue }
            var entry = message.message(range)
            var iid: UInt64 = 0, name = ""
            while let f = try entry.next() {
                if f.number == 1 { iid = f.uint64 }
                if f.number == 2, case .bytes(let text) = f.value { name = entry.string(text) }
            }
            if sequences[sequence, default: Sequence()].eventNames.count < Self.maxNames {
                sequences[sequence, default: Sequence()].eventNames[iid] = name
            }
        }
    }

    private mutating func processTree(_ message: ProtoReader) throws(ProtoError) {
        var reader = message
        while let field = try reader.next() {
            guard case .bytes(let range) = field.value, field.number == 1 || field.number == 2 else { continue }
            var entry = message.message(range)
            var id: Int64 = 0, tgid: Int64 = 0, name: String?
            while let f = try entry.next() {
                switch (field.number, f.number) {
                case (1, 1), (2, 1): id = f.int64
                case (1, 3): if name == nil, case .bytes(let text) = f.value { name = entry.string(text) }
                case (2, 2): if case .bytes(let text) = f.value { name = entry.string(text) }
                case (2, 3): tgid = f.int64
                default: break
                }
            }
            guard let name, processNames.count + threadNames.count < Self.maxNames else { continue }
            if field.number == 1 {
                // A cmdline's first word, without its path: "com.example.app", "/system/bin/surfaceflinger".
                processNames[id] = String(name.split(separator: " ").first.map { $0.split(separator: "/").last ?? $0 } ?? Substring(name))
            } else {
                threadNames[id] = name
                if tgid != 0 { threadProcess[id] = tgid }
            }
        }
    }

    private mutating func trackDescriptor(_ message: ProtoReader) throws(ProtoError) {
        var reader = message
        var uuid: UInt64 = 0
        var pid: Int64?, tid: Int64?, threadName: String?, processName: String?
        while let field = try reader.next() {
            switch (field.number, field.value) {
            case (1, _): uuid = field.uint64
            case (3, .bytes(let range)):
                var process = message.message(range)
                while let f = try process.next() {
                    if f.number == 1 { pid = f.int64 }
                    if f.number == 6, case .bytes(let text) = f.value { processName = process.string(text) }
                }
            case (4, .bytes(let range)):
                var thread = message.message(range)
                while let f = try thread.next() {
                    if f.number == 1 { pid = f.int64 }
                    if f.number == 2 { tid = f.int64 }
                    if f.number == 5, case .bytes(let text) = f.value { threadName = thread.string(text) }
                }
            default: break
            }
        }
        guard tracks.count < Self.maxNames else { return }
        if let pid, let processName { processNames[pid] = processName }
        if let tid {
            tracks[uuid] = Track(pid: pid ?? tid, tid: tid)
            if let threadName { threadNames[tid] = threadName }
            if let pid { threadProcess[tid] = pid }
        }
    }

    // MARK: Slices

    /// Open slices per thread (names, for the ends that carry none).
    private var open: [Int64: [StringID]] = [:]

    /// "Choreographer#doFrame 1234" -> "Choreographer#doFrame": per-frame tokens would make every
    /// slice name unique.
    private func sliceName(_ raw: some StringProtocol) -> StringID {
        var text = Substring(raw)
        if let space = text.lastIndex(of: " "), text[text.index(after: space)...].allSatisfy(\.isNumber),
           text.index(after: space) < text.endIndex {
            text = text[..<space]
        }
        return sink.string(String(text.prefix(200)))
    }

    private mutating func begin(_ tid: Int64, _ name: StringID, at timestamp: Int64) {
        guard open[tid, default: []].count < 256 else { sink.skip("slices nested over 256 deep"); return }
        open[tid, default: []].append(name)
        sink.emit(TraceEvent(timestampNs: timestamp, thread: thread(tid), payload: .intervalBegin(category: stageCategory, name: name)))
    }

    private mutating func end(_ tid: Int64, at timestamp: Int64) {
        guard let name = open[tid]?.popLast() else { sink.skip("slice ends without a begin"); return }
        sink.emit(TraceEvent(timestampNs: timestamp, thread: thread(tid), payload: .intervalEnd(category: stageCategory, name: name)))
    }

    private mutating func trackEvent(_ message: ProtoReader, at timestamp: Int64, sequence: UInt64) throws(ProtoError) {
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
        guard let trackUUID, let track = tracks[trackUUID] else { sink.skip("slices on tracks that are not threads"); return }
        if type == 2 { end(track.tid, at: timestamp); return }
        let text = name ?? nameIID.flatMap { sequences[sequence]?.eventNames[$0] } ?? "?"
        begin(track.tid, sliceName(text), at: timestamp)
    }

    private mutating func ftrace(_ message: ProtoReader) throws(ProtoError) {
        var reader = message
        while let field = try reader.next() {
            guard field.number == 2, case .bytes(let range) = field.value else {
                if field.number == 4 { sink.skip("compact_sched bundles (record sched_switch uncompacted to import switches)") }
                continue
            }
            var event = message.message(range)
            var timestamp: Int64 = 0, tid: Int64 = 0
            var print: Range<Int>?, schedSwitch: Range<Int>?
            while let f = try event.next() {
                switch (f.number, f.value) {
                case (1, _): timestamp = f.int64
                case (2, _): tid = f.int64
                case (3, .bytes(let r)): print = r
                case (4, .bytes(let r)): schedSwitch = r
                default: break
                }
            }
            if let print { try atrace(message.message(print), tid: tid, at: timestamp) }
            if let schedSwitch { try contextSwitch(message.message(schedSwitch), at: timestamp) }
        }
    }

    private mutating func atrace(_ message: ProtoReader, tid: Int64, at timestamp: Int64) throws(ProtoError) {
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
            begin(tid, sliceName(parts[2]), at: timestamp)
        } else if text.hasPrefix("E") {
            end(tid, at: timestamp)
        }
    }

    private mutating func contextSwitch(_ message: ProtoReader, at timestamp: Int64) throws(ProtoError) {
        var reader = message
        var previous: Int64 = 0, next: Int64 = 0, previousState: Int64 = -1
        while let f = try reader.next() {
            switch f.number {
            case 2: previous = f.int64
            case 4: previousState = f.int64
            case 6: next = f.int64
            default: break
            }
        }
        // The threads of processes with frames (known from their first FrameTimeline packet on) and
        // every thread already in the trace (slices): the rest of the device's threads stay out.
        func kept(_ tid: Int64) -> Bool { tid != 0 && (declared[tid] != nil || framePids.contains(threadProcess[tid] ?? tid)) }
        if kept(previous) {
            // prev_state 0 is TASK_RUNNING: switched out while runnable, i.e. preempted.
            sink.emit(TraceEvent(timestampNs: timestamp, thread: thread(previous),
                                 payload: .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: previousState == 0))))
        }
        if kept(next) {
            sink.emit(TraceEvent(timestampNs: timestamp, thread: thread(next), payload: .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false))))
        }
    }

    // MARK: FrameTimeline

    private struct SurfaceKey: Hashable { var pid: Int64; var token: Int64; var layer: StringID }
    private struct SurfaceFrame {
        var displayToken: Int64 = 0
        var expectedStart: Int64?, expectedEnd: Int64?
        var actualStart: Int64?, actualEnd: Int64?
        var presentType: UInt64 = 0, jankType: UInt64 = 0, predictionType: UInt64 = 0
        var hasActual = false
        var order = 0
    }
    private struct DisplayFrame {
        var pid: Int64 = 0
        var expectedStart: Int64?
        var actualEnd: Int64?
        var order = 0
    }
    private enum CookieTarget { case surfaceExpected(SurfaceKey), surfaceActual(SurfaceKey), displayExpected(Int64), displayActual(Int64) }
    private var cookies: [Int64: CookieTarget] = [:]
    private var surfaces: [SurfaceKey: SurfaceFrame] = [:]
    private var displays: [Int64: DisplayFrame] = [:]
    private var displayOrder: [Int64] = []
    private var displayOrderHead = 0
    private var arrivals = 0
    /// Display frames' expected starts, for the refresh period (below).
    private var lastDisplayStart: Int64?
    private var recentSteps: [Int64] = []
    /// Frames complete but waiting for a first period estimate.
    private var ready: [(SurfaceKey, SurfaceFrame)] = []
    private var layerIndex: [Int64: [StringID]] = [:]
    static let maxWaiting = 50_000

    /// The refresh period: the smallest step between the last 16 display frames' expected starts
    /// (SurfaceFlinger wakes once per vsync it composes; idle vsyncs only make steps longer).
    private var periodNs: Int64? { recentSteps.min() }

    private mutating func frameTimeline(_ message: ProtoReader, at timestamp: Int64) throws(ProtoError) {
        var reader = message
        while let field = try reader.next() {
            guard case .bytes(let range) = field.value else { continue }
            var event = message.message(range)
            var cookie: Int64 = 0, token: Int64 = 0, displayToken: Int64 = 0, pid: Int64 = 0, layer = ""
            var presentType: UInt64 = 0, jankType: UInt64 = 0, predictionType: UInt64 = 0
            let surface = field.number == FrameTimelineField.expectedSurfaceFrameStart || field.number == FrameTimelineField.actualSurfaceFrameStart
            while let f = try event.next() {
                switch (surface, f.number) {
                case (_, 1): cookie = f.int64
                case (_, 2): token = f.int64
                case (true, 3): displayToken = f.int64
                case (true, 4), (false, 3): pid = f.int64
                case (true, 5): if case .bytes(let text) = f.value { layer = event.string(text) }
                case (true, 6), (false, 4): presentType = f.uint64
                case (true, 9), (false, 7): jankType = f.uint64
                case (true, 10), (false, 8): predictionType = f.uint64
                default: break
                }
            }
            arrivals += 1
            switch field.number {
            case FrameTimelineField.expectedDisplayFrameStart:
                cookies[cookie] = .displayExpected(token)
                displayFrame(token) { $0.pid = pid; $0.expectedStart = timestamp }
                if let last = lastDisplayStart, timestamp > last {
                    let step = timestamp - last
                    if step >= 2_000_000, step <= 100_000_000 {
                        recentSteps.append(step)
                        if recentSteps.count > 16 { recentSteps.removeFirst() }
                    }
                }
                if lastDisplayStart.map({ timestamp > $0 }) ?? true { lastDisplayStart = timestamp }
                framePids.insert(pid)
            case FrameTimelineField.actualDisplayFrameStart:
                cookies[cookie] = .displayActual(token)
                displayFrame(token) { $0.pid = pid }
            case FrameTimelineField.expectedSurfaceFrameStart, FrameTimelineField.actualSurfaceFrameStart:
                let key = SurfaceKey(pid: pid, token: token, layer: sink.string(String(layer.prefix(200))))
                framePids.insert(pid)
                let expected = field.number == FrameTimelineField.expectedSurfaceFrameStart
                cookies[cookie] = expected ? .surfaceExpected(key) : .surfaceActual(key)
                var frame = surfaces[key] ?? SurfaceFrame()
                if frame.order == 0 { frame.order = arrivals }
                frame.displayToken = displayToken
                if expected {
                    frame.expectedStart = timestamp
                } else {
                    frame.actualStart = timestamp
                    frame.hasActual = true
                    frame.presentType = presentType; frame.jankType = jankType; frame.predictionType = predictionType
                }
                surfaces[key] = frame
                if surfaces.count > Self.maxWaiting { evictOldestSurface() }
            case FrameTimelineField.frameEnd:
                guard let target = cookies.removeValue(forKey: cookie) else { sink.skip("FrameTimeline ends with an unknown cookie"); continue }
                switch target {
                case .surfaceExpected(let key): surfaces[key]?.expectedEnd = timestamp
                case .surfaceActual(let key):
                    surfaces[key]?.actualEnd = timestamp
                    tryEmit(key)
                case .displayExpected: break
                case .displayActual(let token):
                    displays[token]?.actualEnd = timestamp
                    emitWaiting(forDisplay: token)
                }
            default:
                sink.skip("FrameTimeline events of unknown kinds")
            }
            if cookies.count > 4 * Self.maxWaiting { cookies.removeAll(); sink.skip("FrameTimeline cookies never ended (table reset)") }
        }
    }

    private mutating func displayFrame(_ token: Int64, _ change: (inout DisplayFrame) -> Void) {
        if displays[token] == nil {
            displays[token] = DisplayFrame()
            displayOrder.append(token)
            if displayOrder.count - displayOrderHead > Self.maxWaiting {
                displays.removeValue(forKey: displayOrder[displayOrderHead])
                displayOrderHead += 1
                if displayOrderHead > 4096 { displayOrder.removeFirst(displayOrderHead); displayOrderHead = 0 }
            }
        }
        change(&displays[token]!)
    }

    /// Surface frames waiting for their display frame's present, by display token.
    private var waitingForDisplay: [Int64: [SurfaceKey]] = [:]

    private mutating func tryEmit(_ key: SurfaceKey) {
        guard let frame = surfaces[key], frame.actualEnd != nil else { return }
        if frame.presentType != FrameTimelineField.presentDropped, displays[frame.displayToken]?.actualEnd == nil {
            waitingForDisplay[frame.displayToken, default: []].append(key)
            return
        }
        surfaces.removeValue(forKey: key)
        complete(key, frame)
    }

    private mutating func emitWaiting(forDisplay token: Int64) {
        guard let keys = waitingForDisplay.removeValue(forKey: token) else { return }
        for key in keys { tryEmit(key) }
    }

    private mutating func complete(_ key: SurfaceKey, _ frame: SurfaceFrame) {
        guard let period = periodNs else {
            ready.append((key, frame))
            if ready.count > Self.maxWaiting { flushReady(fallbackPeriodNs: 16_666_667) }
            return
        }
        if !ready.isEmpty { flushReady(fallbackPeriodNs: period) }
        emit(key, frame, periodNs: period)
    }

    private mutating func flushReady(fallbackPeriodNs: Int64) {
        let waiting = ready
        ready.removeAll()
        for (key, frame) in waiting { emit(key, frame, periodNs: periodNs ?? fallbackPeriodNs) }
    }

    private mutating func evictOldestSurface() {
        guard let oldest = surfaces.min(by: { $0.value.order < $1.value.order }) else { return }
        surfaces.removeValue(forKey: oldest.key)
        sink.skip("FrameTimeline surface frames never completed while \(Self.maxWaiting) waited")
        emit(oldest.key, oldest.value, periodNs: periodNs ?? 16_666_667, final: true)
    }

    /// The frame id: the surface frame's token, with the layer's index per process above bit 56 for
    /// a process's second and later layers (one token can serve several layers).
    private mutating func frameID(_ key: SurfaceKey) -> UInt64 {
        var layers = layerIndex[key.pid] ?? []
        var index = layers.firstIndex(of: key.layer)
        if index == nil, layers.count < 255 { layers.append(key.layer); layerIndex[key.pid] = layers; index = layers.count - 1 }
        return UInt64(bitPattern: key.token) & ((1 << 56) - 1) | UInt64(index ?? 255) << 56
    }

    /// Writes a frame. `final`: the trace ended with it unshown, so its hand-over is left out too
    /// (a frame in flight is not judged).
    private mutating func emit(_ key: SurfaceKey, _ frame: SurfaceFrame, periodNs period: Int64, final: Bool = false) {
        guard let vsync = frame.expectedStart ?? frame.actualStart else { sink.skip("FrameTimeline surface frames without a start"); return }
        let id = frameID(key)
        let main = thread(key.pid, pid: key.pid, role: "main")
        let target = frame.expectedEnd ?? (vsync + period)
        sink.emit(TraceEvent(timestampNs: vsync, thread: main, payload: .frameBegan(FrameBegan(frameID: id, vsyncNs: vsync, targetNs: target, periodNs: period))))
        if frame.hasActual, !final || frame.presentType == FrameTimelineField.presentDropped {
            let (janky, detail) = verdict(frame)
            PlatformVerdict.emit(into: sink, frameID: id, atNs: vsync, thread: main, janky: janky, detail: detail)
        }
        if frame.expectedStart == nil, frame.hasActual { sink.skip("frames whose prediction expired (judged from their actual start)") }
        guard let handOver = frame.actualEnd, frame.presentType != FrameTimelineField.presentDropped else { return }
        let display = displays[frame.displayToken]
        if final, display?.actualEnd == nil { return }
        sink.emit(TraceEvent(timestampNs: handOver, thread: main, payload: .frameCommitted(frameID: id)))
        if let display, let present = display.actualEnd {
            let compositor = thread(display.pid, pid: display.pid, role: "render")
            sink.emit(TraceEvent(timestampNs: present, thread: compositor, payload: .framePresented(frameID: id)))
        }
    }

    /// Android's verdict in Perfetto's words: on time, latency (buffer stuffing alone: the frame
    /// was on time but queued behind a late one), or janky with the jank types.
    private func verdict(_ frame: SurfaceFrame) -> (janky: Bool, detail: String?) {
        if frame.presentType == FrameTimelineField.presentDropped { return (true, "Dropped Frame") }
        let bits = frame.jankType & ~FrameTimelineField.jankNone
        if bits == 0 { return frame.presentType == 2 ? (true, "late present") : (false, nil) }
        let names = FrameTimelineField.jankNames.filter { bits & $0.bit != 0 }.map(\.name).joined(separator: ", ")
        if bits == FrameTimelineField.jankBufferStuffing { return (false, names) }
        return (true, names)
    }

    /// Frames still waiting when the trace ends: begun (and handed over) but never shown.
    mutating func finish() {
        let fallback = periodNs ?? 16_666_667
        flushReady(fallbackPeriodNs: fallback)
        let waiting = surfaces.sorted { $0.value.order < $1.value.order }
        for (key, frame) in waiting { emit(key, frame, periodNs: fallback, final: true) }
        if !waiting.isEmpty { sink.skip("frames still in flight at the end of the trace (not judged)", count: waiting.count) }
        surfaces.removeAll()
    }
}
