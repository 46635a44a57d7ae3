import HitchReader
import HitchTrace

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

/// SurfaceFlinger's FrameTimeline (`frame_timeline_event`): each app surface frame's expected and
/// actual timelines and its display frame, reported separately and after the frame is shown,
/// assembled into frames and written with their platform verdict and, from the scheduling events,
/// their threads' states. Everything waiting is bounded (`PerfettoState.maxWaiting`), the oldest going out first.
final class PerfettoFrameTimeline {
    private let sink: ImportSink, processes: PerfettoProcesses, scheduling: PerfettoScheduling

    init(sink: ImportSink, processes: PerfettoProcesses, scheduling: PerfettoScheduling) {
        (self.sink, self.processes, self.scheduling) = (sink, processes, scheduling)
    }

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

    /// The refresh period: the smallest step between the last 16 display frames' expected starts
    /// (SurfaceFlinger wakes once per vsync it composes; idle vsyncs only make steps longer).
    private var periodNs: Int64? { recentSteps.min() }

    func frameTimeline(_ message: ProtoReader, at timestamp: Int64) throws(ProtoError) {
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
                guard processes.surfaceProcess(pid, layer: layer, counts: field.number == FrameTimelineField.actualSurfaceFrameStart) else {
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
                if surfaces.count > PerfettoState.maxWaiting { evictOldestSurface() }
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
            if cookies.count > 4 * PerfettoState.maxWaiting { cookies.removeAll(); sink.skip("FrameTimeline cookies never ended (table reset)") }
        }
    }

    private func displayFrame(_ token: Int64, _ change: (inout DisplayFrame) -> Void) {
        if displays[token] == nil {
            displays[token] = DisplayFrame()
            if let oldest = displayOrder.add(token) { displays.removeValue(forKey: oldest) }
        }
        change(&displays[token]!)
    }

    /// Surface frames waiting for their display frame's present, by display token.
    private var waitingForDisplay: [Int64: [SurfaceKey]] = [:]

    private func tryEmit(_ key: SurfaceKey) {
        guard let frame = surfaces[key], frame.actualEnd != nil else { return }
        if frame.presentType != FrameTimelineField.presentDropped, displays[frame.displayToken]?.actualEnd == nil {
            waitingForDisplay[frame.displayToken, default: []].append(key)
            return
        }
        surfaces.removeValue(forKey: key)
        complete(key, frame)
    }

    private func emitWaiting(forDisplay token: Int64) {
        guard let keys = waitingForDisplay.removeValue(forKey: token) else { return }
        for key in keys { tryEmit(key) }
    }

    private func complete(_ key: SurfaceKey, _ frame: SurfaceFrame) {
        guard let period = periodNs else {
            ready.append((key, frame))
            if ready.count > PerfettoState.maxWaiting { flushReady(fallbackPeriodNs: 16_666_667) }
            return
        }
        if !ready.isEmpty { flushReady(fallbackPeriodNs: period) }
        emit(key, frame, periodNs: period)
    }

    private func flushReady(fallbackPeriodNs: Int64) {
        let waiting = ready
        ready.removeAll()
        for (key, frame) in waiting { emit(key, frame, periodNs: periodNs ?? fallbackPeriodNs) }
    }

    private func evictOldestSurface() {
        guard let oldest = surfaces.min(by: { $0.value.order < $1.value.order }) else { return }
        surfaces.removeValue(forKey: oldest.key)
        sink.skip("FrameTimeline surface frames never completed while \(PerfettoState.maxWaiting) waited")
        emit(oldest.key, oldest.value, periodNs: periodNs ?? 16_666_667, final: true)
    }

    /// The frame id: the surface frame's token, with the layer's index per process above bit 56 for
    /// a process's second and later layers (one token can serve several layers).
    private func frameID(_ key: SurfaceKey) -> UInt64 {
        var layers = layerIndex[key.pid] ?? []
        var index = layers.firstIndex(of: key.layer)
        if index == nil, layers.count < 255 { layers.append(key.layer); layerIndex[key.pid] = layers; index = layers.count - 1 }
        return UInt64(bitPattern: key.token) & ((1 << 56) - 1) | UInt64(index ?? 255) << 56
    }

    /// Writes a frame, or holds it while the scheduling events of its time may still come (below).
    private func emit(_ key: SurfaceKey, _ frame: SurfaceFrame, periodNs period: Int64, final: Bool = false) {
        deferred.append(DeferredFrame(key: key, frame: frame, periodNs: period, final: final))
        drainDeferred()
    }

    private struct DeferredFrame { var key: SurfaceKey; var frame: SurfaceFrame; var periodNs: Int64; var final: Bool }
    /// Frames complete but held until the scheduling events have passed their end by
    /// `schedSlackNs` (at most `maxWaiting`): in file order, ftrace bundles may trail FrameTimeline.
    private var deferred: [DeferredFrame] = []
    private var deferredHead = 0

    func drainDeferred(all: Bool = false) {
        let horizon = scheduling.schedNewestNs.subtractingReportingOverflow(PerfettoScheduling.schedSlackNs)
        let horizonNs = horizon.overflow ? Int64.min : horizon.partialValue
        while deferredHead < deferred.count {
            let next = deferred[deferredHead]
            let needNs = next.frame.actualEnd ?? next.frame.expectedStart ?? next.frame.actualStart ?? .min
            guard all || !scheduling.sawSched || deferred.count - deferredHead > PerfettoState.maxWaiting
                    || horizonNs >= needNs else { break }
            deferredHead += 1
            write(next.key, next.frame, periodNs: next.periodNs, final: next.final)
        }
        if deferredHead == deferred.count { if deferredHead > 0 { deferred.removeAll(keepingCapacity: true); deferredHead = 0 } }
        else if deferredHead > 1024 && deferredHead * 2 > deferred.count { deferred.removeFirst(deferredHead); deferredHead = 0 }
    }

    /// Writes a frame. `final`: the trace ended with it unshown, so its hand-over is left out too
    /// (a frame in flight is not judged).
    private func write(_ key: SurfaceKey, _ frame: SurfaceFrame, periodNs period: Int64, final: Bool = false) {
        guard let vsync = frame.expectedStart ?? frame.actualStart else { sink.skip("FrameTimeline surface frames without a start"); return }
        let id = frameID(key)
        let main = processes.thread(key.pid, pid: key.pid, role: .main)
        if !wroteMetadata {
            wroteMetadata = true
            sink.metadata(.importedFrom, ImportFormat.perfetto.rawValue, thread: main, timestampNs: vsync)
            if let name = processes.processNames[key.pid] { sink.metadata(.process, name, thread: main, timestampNs: vsync) }
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
        let renderThread = scheduling.threadStates(pid: key.pid, token: key.token, frameID: id, vsync: vsync, handOver: handOver, main: main)
        sink.emit(TraceEvent(timestampNs: handOver, thread: main, payload: .frameCommitted(frameID: id)))
        // With the RenderThread's render in the readings, the app's render ends at its hand-over too:
        // on Android the main thread and then the RenderThread make the frame before SurfaceFlinger
        // takes it, so the analysis runs the two one after the other (not the render on the next vsync).
        if let renderThread { sink.emit(TraceEvent(timestampNs: handOver, thread: renderThread, payload: .frameRenderEnded(frameID: id))) }
        if let display, let present = display.actualEnd {
            let compositor = processes.thread(display.pid, pid: display.pid, role: .render)
            sink.emit(TraceEvent(timestampNs: present, thread: compositor, payload: .framePresented(frameID: id)))
        }
    }

    private var wroteMetadata = false

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
    func finish() {
        let fallback = periodNs ?? 16_666_667
        flushReady(fallbackPeriodNs: fallback)
        let waiting = surfaces.sorted { $0.value.order < $1.value.order }
        for (key, frame) in waiting { emit(key, frame, periodNs: fallback, final: true) }
        if !waiting.isEmpty { sink.skip("frames still in flight at the end of the trace (not judged)", count: waiting.count) }
        surfaces.removeAll()
        drainDeferred(all: true)
    }
}
