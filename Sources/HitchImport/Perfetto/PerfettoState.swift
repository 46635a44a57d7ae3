import HitchReader
import HitchTrace

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
    /// `--process`: the one app whose frames, slices and threads' switches are imported.
    let selection: PerfettoProcessSelection?

    init(sink: ImportSink, file: String, selection: PerfettoProcessSelection? = nil) {
        self.sink = sink
        self.file = file
        self.selection = selection
        stageCategory = sink.string("slice")
    }

    // MARK: Names and threads

    private var processNames: [Int64: String] = [:]
    private var threadNames: [Int64: String] = [:]
    private var threadProcess: [Int64: Int64] = [:]
    private struct Track { var pid: Int64; var tid: Int64 }
    private var tracks: [UInt64: Track] = [:]
    private var declared: [Int64: ThreadID] = [:]
    /// Processes with app surface frames (the selected one only, with `--process`): their threads'
    /// switches are kept, and their frames get thread states.
    private var appPids: Set<Int64> = []
    /// Every process with surface frames, selected or not: the candidates an ambiguous trace lists.
    private var candidates: [Int64: (layer: String, frames: Int)] = [:]
    /// Processes a layer name's package names ("com.example.app/...#0"), for `--process NAME`.
    private var layerPackages: [Int64: String] = [:]
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

    /// Open slices per thread: names, for the ends that carry none, and the token of a per-frame slice.
    private struct OpenSlice { var name: StringID; var frame: (token: Int64, main: Bool)? }
    private var open: [Int64: [OpenSlice]] = [:]

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

    /// With `--process`, other processes' slices stay out.
    private func keepsSlices(of tid: Int64) -> Bool { selection == nil || isAppThread(tid) }

    private mutating func begin(_ tid: Int64, _ raw: some StringProtocol, at timestamp: Int64) {
        guard keepsSlices(of: tid) else { return }
        guard open[tid, default: []].count < 256 else { sink.skip("slices nested over 256 deep"); return }
        let name = sliceName(raw)
        let frame = Self.frameSliceToken(raw)
        open[tid, default: []].append(OpenSlice(name: name, frame: frame))
        if let frame { frameSlice(tid, token: frame.token, main: frame.main, begin: timestamp, end: nil) }
        sink.emit(TraceEvent(timestampNs: timestamp, thread: thread(tid), payload: .intervalBegin(category: stageCategory, name: name)))
    }

    private mutating func end(_ tid: Int64, at timestamp: Int64) {
        guard keepsSlices(of: tid) else { return }
        guard let slice = open[tid]?.popLast() else { sink.skip("slice ends without a begin"); return }
        if let frame = slice.frame { frameSlice(tid, token: frame.token, main: frame.main, begin: nil, end: timestamp) }
        sink.emit(TraceEvent(timestampNs: timestamp, thread: thread(tid), payload: .intervalEnd(category: stageCategory, name: slice.name)))
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
        begin(track.tid, text, at: timestamp)
    }

    /// An `FtraceEventBundle`: one CPU's events (field 2) and its `compact_sched` (field 4), read
    /// after the bundle's `cpu` (field 1), wherever that is.
    private mutating func ftrace(_ message: ProtoReader) throws(ProtoError) {
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
            if let print { try atrace(message.message(print), tid: tid, at: timestamp) }
            if let schedSwitch { try contextSwitch(message.message(schedSwitch), cpu: onCPU, at: timestamp) }
            if let waking {
                var fields = message.message(waking)
                while let f = try fields.next() { if f.number == 2 { wake(f.int64, at: timestamp) } }
            }
        }
        if let compact { try compactSched(message.message(compact), cpu: onCPU) }
        drainDeferred()
    }

    /// `compact_sched`: sched_switch and sched_waking as parallel packed arrays, timestamps as
    /// deltas, read side by side without copying them. A compact switch names only the incoming
    /// thread: the outgoing one is the CPU's previous incoming thread (unknown for a CPU's first
    /// switch in the trace).
    private mutating func compactSched(_ message: ProtoReader, cpu: UInt16) throws(ProtoError) {
        var reader = message
        var packed: [UInt32: Range<Int>] = [:]
        while let field = try reader.next() {
            guard [1, 2, 3, 7, 8].contains(field.number) else { continue }
            guard case .bytes(let range) = field.value, packed[field.number] == nil else {
                sink.skip("compact_sched arrays not packed in one run"); continue
            }
            packed[field.number] = range
        }
        func run(_ number: UInt32) -> ProtoReader { message.message(packed[number] ?? 0..<0) }
        var times = run(1), states = run(2), nextPids = run(3)
        var time: UInt64 = 0
        while let delta = try times.nextPacked() {
            guard let state = try states.nextPacked(), let nextPid = try nextPids.nextPacked() else {
                sink.skip("compact_sched switches with arrays of unequal lengths"); break
            }
            time &+= delta
            let next = Int64(Int32(truncatingIfNeeded: nextPid))
            let previous = cpu == SchedSwitch.unknownCPU ? nil : cpuRunning[cpu]
            if cpu != SchedSwitch.unknownCPU { cpuRunning[cpu] = next }
            switched(from: previous, state: Int64(bitPattern: state), to: next, cpu: cpu, at: Int64(bitPattern: time))
        }
        var wakingTimes = run(7), wakingPids = run(8)
        time = 0
        while let delta = try wakingTimes.nextPacked() {
            guard let pid = try wakingPids.nextPacked() else { sink.skip("compact_sched wakings with arrays of unequal lengths"); break }
            time &+= delta
            wake(Int64(Int32(truncatingIfNeeded: pid)), at: Int64(bitPattern: time))
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
            if threadProcess[tid] == nil, threadProcess.count < Self.maxNames, let pid = Int64(parts[1]), pid > 0 { threadProcess[tid] = pid }
            begin(tid, parts[2], at: timestamp)
        } else if text.hasPrefix("E") {
            end(tid, at: timestamp)
        }
    }

    private mutating func contextSwitch(_ message: ProtoReader, cpu: UInt16, at timestamp: Int64) throws(ProtoError) {
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
        if cpu != SchedSwitch.unknownCPU { cpuRunning[cpu] = next }
        switched(from: previous, state: previousState, to: next, cpu: cpu, at: timestamp)
    }

    // MARK: Scheduling

    /// Every thread's transitions, for the thread-state readings at frame phases.
    private var accounting = SchedAccounting()
    /// The thread each CPU last switched in (compact_sched names only the incoming thread).
    private var cpuRunning: [UInt16: Int64] = [:]
    private var sawSched = false
    private var sawWaking = false
    /// The newest scheduling event's time: frames are held until it passes their end by
    /// `schedSlackNs`, so their threads' transitions (one ftrace bundle per CPU) are in.
    private var schedNewestNs = Int64.min
    static let schedSlackNs: Int64 = 1_000_000_000

    /// A thread whose process is the app's (a selected process, or one with surface frames).
    private func isAppThread(_ tid: Int64) -> Bool {
        guard tid > 0 else { return false }
        let pid = threadProcess[tid] ?? tid
        return appPids.contains(pid) || selection?.matches(pid: pid, processName: processNames[pid], layerPackage: layerPackages[pid]) == true
    }

    /// `prev_state` of a switch-out: runnable (TASK_RUNNING 0, with the preemption mark 0x100 of
    /// Linux 4.14 and later or 0x800 before) means preempted; anything else went to sleep.
    static func preempted(_ state: Int64) -> Bool { state >= 0 && state & ~0x900 == 0 }

    private mutating func switched(from previous: Int64?, state: Int64, to next: Int64, cpu: UInt16, at timestamp: Int64) {
        sawSched = true
        schedNewestNs = max(schedNewestNs, timestamp)
        if let previous, previous > 0 {
            let preempted = Self.preempted(state)
            let app = isAppThread(previous)
            accounting.add(preempted ? .switchOutPreempted : .switchOutAsleep, thread: previous, atNs: timestamp, isAppThread: app)
            // The app's threads (known from their first FrameTimeline packet on, or `--process`):
            // the rest of the device's threads stay out of the trace.
            if app {
                sink.emit(TraceEvent(timestampNs: timestamp, thread: thread(previous),
                                     payload: .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: preempted, cpu: cpu))))
            }
        }
        if next > 0 {
            let app = isAppThread(next)
            accounting.add(.switchIn, thread: next, atNs: timestamp, isAppThread: app)
            if app {
                sink.emit(TraceEvent(timestampNs: timestamp, thread: thread(next),
                                     payload: .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: cpu))))
            }
        }
    }

    private mutating func wake(_ tid: Int64, at timestamp: Int64) {
        guard tid > 0 else { return }
        sawWaking = true
        schedNewestNs = max(schedNewestNs, timestamp)
        accounting.add(.waking, thread: tid, atNs: timestamp, isAppThread: isAppThread(tid))
    }

    /// A thread-state reading of `tid` at `atNs` from its transitions (nil where they do not reach).
    /// The run delay is given only where the trace has wake-ups: without them the wait after a
    /// wake-up cannot be told from the sleep before it, and the analysis splits from the switches.
    private mutating func reading(_ tid: Int64, at atNs: Int64, frameID: UInt64, phase: FramePhase) -> ThreadStateReading? {
        guard let c = accounting.counters(thread: tid, atNs: atNs) else { return nil }
        return ThreadStateReading(frameID: frameID, phase: phase, cpuNs: c.cpuNs, runnableWaitNs: sawWaking ? c.runnableNs : nil,
                                  voluntarySwitches: c.voluntary, involuntarySwitches: c.involuntary)
    }

    // MARK: Frame slices

    /// The app's per-frame slices by (process, token): `Choreographer#doFrame <token>` on the main
    /// thread (its end is the hand-over to the RenderThread) and `DrawFrame(s) <token>` on the
    /// RenderThread. They bound the windows of the thread-state readings.
    private struct FrameSlices {
        var mainTid: Int64 = 0, mainBegin: Int64?, mainEnd: Int64?
        var renderTid: Int64 = 0, renderBegin: Int64?, renderEnd: Int64?
    }
    private struct SliceKey: Hashable { var pid: Int64; var token: Int64 }
    private var frameSlices: [SliceKey: FrameSlices] = [:]
    private var frameSliceOrder = InsertionOrder<SliceKey>(limit: PerfettoState.maxWaiting)

    /// The token of a per-frame slice name, and whether it is the main thread's.
    static func frameSliceToken(_ name: some StringProtocol) -> (token: Int64, main: Bool)? {
        guard let space = name.lastIndex(of: " ") else { return nil }
        let head = name[..<space]
        let main: Bool
        if head == "Choreographer#doFrame" { main = true } else if head == "DrawFrame" || head == "DrawFrames" { main = false } else { return nil }
        guard let token = Int64(name[name.index(after: space)...]) else { return nil }
        return (token, main)
    }

    private mutating func frameSlice(_ tid: Int64, token: Int64, main: Bool, begin: Int64?, end: Int64?) {
        let key = SliceKey(pid: threadProcess[tid] ?? tid, token: token)
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
    private enum CookieTarget {
        case surfaceExpected(SurfaceKey), surfaceActual(SurfaceKey), displayExpected(Int64), displayActual(Int64)
        /// A surface frame of a process `--process` left out.
        case ignored
    }
    private var cookies: [Int64: CookieTarget] = [:]
    private var surfaces: [SurfaceKey: SurfaceFrame] = [:]
    private var displays: [Int64: DisplayFrame] = [:]
    private var displayOrder = InsertionOrder<Int64>(limit: PerfettoState.maxWaiting)
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
            case FrameTimelineField.actualDisplayFrameStart:
                cookies[cookie] = .displayActual(token)
                displayFrame(token) { $0.pid = pid }
            case FrameTimelineField.expectedSurfaceFrameStart, FrameTimelineField.actualSurfaceFrameStart:
                guard surfaceProcess(pid, layer: layer, counts: field.number == FrameTimelineField.actualSurfaceFrameStart) else {
                    cookies[cookie] = .ignored
                    continue
                }
                let key = SurfaceKey(pid: pid, token: token, layer: sink.string(String(layer.prefix(200))))
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
                case .displayExpected, .ignored: break
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
            if let oldest = displayOrder.add(token) { displays.removeValue(forKey: oldest) }
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

    /// Writes a frame, or holds it while the scheduling events of its time may still come (below).
    private mutating func emit(_ key: SurfaceKey, _ frame: SurfaceFrame, periodNs period: Int64, final: Bool = false) {
        deferred.append(DeferredFrame(key: key, frame: frame, periodNs: period, final: final))
        drainDeferred()
    }

    private struct DeferredFrame { var key: SurfaceKey; var frame: SurfaceFrame; var periodNs: Int64; var final: Bool }
    /// Frames complete but held until the scheduling events have passed their end by
    /// `schedSlackNs` (at most `maxWaiting`): in file order, ftrace bundles may trail FrameTimeline.
    private var deferred: [DeferredFrame] = []
    private var deferredHead = 0

    private mutating func drainDeferred(all: Bool = false) {
        let horizon = schedNewestNs.subtractingReportingOverflow(Self.schedSlackNs)
        let horizonNs = horizon.overflow ? Int64.min : horizon.partialValue
        while deferredHead < deferred.count {
            let next = deferred[deferredHead]
            let needNs = next.frame.actualEnd ?? next.frame.expectedStart ?? next.frame.actualStart ?? .min
            guard all || !sawSched || deferred.count - deferredHead > Self.maxWaiting
                    || horizonNs >= needNs else { break }
            deferredHead += 1
            write(next.key, next.frame, periodNs: next.periodNs, final: next.final)
        }
        if deferredHead == deferred.count { if deferredHead > 0 { deferred.removeAll(keepingCapacity: true); deferredHead = 0 } }
        else if deferredHead > 1024 && deferredHead * 2 > deferred.count { deferred.removeFirst(deferredHead); deferredHead = 0 }
    }

    /// Writes a frame. `final`: the trace ended with it unshown, so its hand-over is left out too
    /// (a frame in flight is not judged).
    private mutating func write(_ key: SurfaceKey, _ frame: SurfaceFrame, periodNs period: Int64, final: Bool = false) {
        guard let vsync = frame.expectedStart ?? frame.actualStart else { sink.skip("FrameTimeline surface frames without a start"); return }
        let id = frameID(key)
        let main = thread(key.pid, pid: key.pid, role: "main")
        if !wroteMetadata {
            wroteMetadata = true
            sink.metadata(MetadataKey.importedFrom.name, "perfetto", thread: main, timestampNs: vsync)
            if let name = processNames[key.pid] { sink.metadata(MetadataKey.process.name, name, thread: main, timestampNs: vsync) }
        }
        let target = frame.expectedEnd ?? (vsync + period)
        sink.emit(TraceEvent(timestampNs: vsync, thread: main, payload: .frameBegan(FrameBegan(frameID: id, vsyncNs: vsync, targetNs: target, periodNs: period))))
        if frame.hasActual, !final || frame.presentType == FrameTimelineField.presentDropped {
            let (janky, detail) = verdict(frame)
            sink.emitPlatformVerdict(janky ? .janky : .onTime, frameID: id, atNs: vsync, thread: main, detail: detail)
        }
        if frame.expectedStart == nil, frame.hasActual { sink.skip("frames whose prediction expired (judged from their actual start)") }
        guard let handOver = frame.actualEnd, frame.presentType != FrameTimelineField.presentDropped else { return }
        let display = displays[frame.displayToken]
        if final, display?.actualEnd == nil { return }
        let renderThread = threadStates(key, frameID: id, vsync: vsync, handOver: handOver, main: main)
        sink.emit(TraceEvent(timestampNs: handOver, thread: main, payload: .frameCommitted(frameID: id)))
        // With the RenderThread's render in the readings, the app's render ends at its hand-over too:
        // on Android the main thread and then the RenderThread make the frame before SurfaceFlinger
        // takes it, so the analysis runs the two one after the other (not the render on the next vsync).
        if let renderThread { sink.emit(TraceEvent(timestampNs: handOver, thread: renderThread, payload: .frameRenderEnded(frameID: id))) }
        if let display, let present = display.actualEnd {
            let compositor = thread(display.pid, pid: display.pid, role: "render")
            sink.emit(TraceEvent(timestampNs: present, thread: compositor, payload: .framePresented(frameID: id)))
        }
    }

    /// Thread-state readings for a frame from the scheduling events: the main thread's at the
    /// frame's vsync and at its `Choreographer#doFrame` end (the hand-over to the RenderThread), the
    /// RenderThread's at its `DrawFrame` begin and end. Returns the RenderThread when its readings
    /// were written. Nothing without sched data, the frame's doFrame slice, or transitions covering it.
    private mutating func threadStates(_ key: SurfaceKey, frameID: UInt64, vsync: Int64, handOver: Int64, main: ThreadID) -> ThreadID? {
        guard sawSched else { return nil }
        guard let slices = frameSlices[SliceKey(pid: key.pid, token: key.token)], slices.mainTid == key.pid,
              let mainEnd = slices.mainEnd, mainEnd >= vsync, mainEnd <= handOver else {
            sink.skip("thread states of frames without a Choreographer#doFrame slice on the main thread")
            return nil
        }
        guard let began = reading(key.pid, at: vsync, frameID: frameID, phase: .frameBegan),
              let committed = reading(key.pid, at: mainEnd, frameID: frameID, phase: .committed) else {
            sink.skip("thread states of frames whose main thread has no sched_switch before them")
            return nil
        }
        if !wroteSchedMetadata {
            wroteSchedMetadata = true
            sink.metadata(MetadataKey.schedSource.name, "ftrace", thread: main, timestampNs: vsync)
            // Every thread of the one app imported has its switches in the trace (ftrace sees them all).
            sink.metadata(MetadataKey.schedSwitchThreads.name, MetadataKey.everyRecordingThread, thread: main, timestampNs: vsync)
        }
        sink.emit(TraceEvent(timestampNs: vsync, thread: main, payload: .threadState(began)))
        sink.emit(TraceEvent(timestampNs: mainEnd, thread: main, payload: .threadState(committed)))
        guard slices.renderTid > 0, let renderBegin = slices.renderBegin, let renderEnd = slices.renderEnd,
              renderBegin >= mainEnd, renderEnd >= renderBegin, renderEnd <= handOver,
              let renderBegan = reading(slices.renderTid, at: renderBegin, frameID: frameID, phase: .renderBegan),
              let renderEnded = reading(slices.renderTid, at: renderEnd, frameID: frameID, phase: .renderEnded) else {
            sink.skip("RenderThread states of frames without its DrawFrame slice or sched_switch (main thread states only)")
            return nil
        }
        let render = thread(slices.renderTid, pid: key.pid)
        sink.emit(TraceEvent(timestampNs: renderBegin, thread: render, payload: .threadState(renderBegan)))
        sink.emit(TraceEvent(timestampNs: renderEnd, thread: render, payload: .threadState(renderEnded)))
        return render
    }

    private var wroteMetadata = false
    private var wroteSchedMetadata = false

    // MARK: Processes

    /// Whether a surface frame of `pid` is imported (`--process`), noting the process as a candidate
    /// (`counts`: once per frame, at its actual start).
    private mutating func surfaceProcess(_ pid: Int64, layer: String, counts: Bool) -> Bool {
        if candidates[pid] == nil {
            guard candidates.count < 4096 else { return appPids.contains(pid) }
            candidates[pid] = (String(layer.prefix(200)), 0)
            // "com.example.app/com.example.app.MainActivity#0" (Android 12 adds "TX - " to some).
            var package = Substring(layer)
            if package.hasPrefix("TX - ") { package = package.dropFirst(5) }
            if let slash = package.firstIndex(of: "/") { layerPackages[pid] = String(package[..<slash]) }
        }
        if counts { candidates[pid]?.frames += 1 }
        let selected = selection.map { $0.matches(pid: pid, processName: processNames[pid], layerPackage: layerPackages[pid]) } ?? true
        if selected { appPids.insert(pid) }
        return selected
    }

    /// The candidates, most frames first: "com.example.app (pid 4242, 120 frames)".
    private func candidateList() -> String {
        candidates.sorted { ($0.value.frames, $1.key) > ($1.value.frames, $0.key) }.prefix(12).map { pid, candidate in
            "\(processNames[pid] ?? layerPackages[pid] ?? candidate.layer) (pid \(pid), \(candidate.frames) frames)"
        }.joined(separator: ", ") + (candidates.count > 12 ? ", and \(candidates.count - 12) more" : "")
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

    /// Frames still waiting when the trace ends: begun (and handed over) but never shown. Then the
    /// process check: frames of one app, or of the one `--process` names.
    mutating func finish() throws {
        let fallback = periodNs ?? 16_666_667
        flushReady(fallbackPeriodNs: fallback)
        let waiting = surfaces.sorted { $0.value.order < $1.value.order }
        for (key, frame) in waiting { emit(key, frame, periodNs: fallback, final: true) }
        if !waiting.isEmpty { sink.skip("frames still in flight at the end of the trace (not judged)", count: waiting.count) }
        surfaces.removeAll()
        drainDeferred(all: true)
        if accounting.skippedTransitions > 0 { sink.skip("sched transitions beyond the threads or history kept", count: accounting.skippedTransitions) }
        if let selection, appPids.isEmpty {
            throw ImportError(file: file, location: "FrameTimeline",
                              expected: "surface frames of the process \(selection) (--process); "
                                + (candidates.isEmpty ? "the trace has none of any process" : "the trace has frames of: \(candidateList())"))
        }
        if appPids.count > 1 {
            throw ImportError(file: file, location: "FrameTimeline",
                              expected: (selection.map { "one process matching \($0) (--process), found \(appPids.count)" } ?? "surface frames of one app, found \(appPids.count) processes")
                                + ": \(candidateList()); pick one with --process NAME|PID")
        }
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
