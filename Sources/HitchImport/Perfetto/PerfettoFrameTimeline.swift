import HitchReader
import HitchTrace

/// FrameTimelineEvent's kinds (the `event` oneof of AOSP's frame_timeline_event.proto).
enum FrameTimelineField {
    static let expectedDisplayFrameStart: UInt32 = 1, actualDisplayFrameStart: UInt32 = 2
    static let expectedSurfaceFrameStart: UInt32 = 3, actualSurfaceFrameStart: UInt32 = 4, frameEnd: UInt32 = 5
}

/// SurfaceFlinger's FrameTimeline (`frame_timeline_event`): each app surface frame's expected and
/// actual timelines and the display frame that latched it, reported after the display frame's
/// present fence signals (FrameTimeline.cpp traces a display frame, then every surface frame it
/// latched or dropped), assembled into frames and written with their expected present, their
/// platform verdict and, from the scheduling events, their threads' states. Everything waiting is
/// bounded (`PerfettoState.maxWaiting`), the oldest going out first.
///
/// A frame's expected present is the vsync its token aimed at: the actual present less
/// `present_delay_millis` where the build writes it; else the surface frame's expected end (the
/// app's deadline) plus SurfaceFlinger's expected duration for the display frame that latched it
/// (an app token's deadline is its present less SurfaceFlinger's work duration, and SurfaceFlinger's
/// own expected timeline runs from its wake-up to that present). A frame whose prediction expired
/// has neither: it was due one period after the frame of its layer shown before it.
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
        var verdict = FrameTimelineVerdict()
        var layerName = ""
        var hasActual = false
        var order = 0
    }
    private struct DisplayFrame {
        var pid: Int64 = 0
        var expectedStart: Int64?, expectedEnd: Int64?
        var actualEnd: Int64?
        /// SurfaceFlinger's expected duration (its wake-up to the present it aimed at), when traced.
        var expectedDurationNs: Int64? {
            guard let start = expectedStart, let end = expectedEnd, end > start, end - start < 1_000_000_000 else { return nil }
            return end - start
        }
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
    /// The latest display frames' expected starts, in arrival order and sorted (the refresh period, below).
    private var recentStarts: [Int64] = []
    private var sortedStarts: [Int64] = []
    private(set) var periodNs: Int64?
    /// Display frames seen: frames wait until `settlingStarts` have been, so an estimate from the
    /// first few (which may come out of order) does not judge the first frames.
    private var startsSeen = 0
    private static let settlingStarts = 16
    /// Frames complete but waiting for a settled period estimate.
    private var ready: [(SurfaceKey, SurfaceFrame)] = []
    private var layerIndex: [Int64: [StringID]] = [:]
    /// Each layer's latest presents, sorted (at most `presentMemory`): the frame shown before an
    /// expired one.
    private var presentsByLayer: [SurfaceKey: [Int64]] = [:]
    private static let presentMemory = 64
    /// Frames whose prediction expired, held until SurfaceFlinger's reports have passed their
    /// present by `expiredSlackNs` (FrameTimeline sequences may reach the file out of order, so the
    /// frame shown before one may come after it).
    private var expiredWaiting: [(key: SurfaceKey, frame: SurfaceFrame, periodNs: Int64)] = []
    private var newestPresentNs = Int64.min
    private static let expiredSlackNs: Int64 = 1_000_000_000

    /// The refresh period: the smallest step between the latest 32 display frames' expected starts
    /// taken in time order (SurfaceFlinger wakes once per vsync it composes; idle vsyncs only make
    /// steps longer, and FrameTimeline's reports may arrive out of time order).
    private func notePeriod(_ start: Int64) {
        startsSeen += 1
        recentStarts.append(start)
        var low = 0, high = sortedStarts.count
        while low < high { let mid = (low + high) / 2; if sortedStarts[mid] < start { low = mid + 1 } else { high = mid } }
        sortedStarts.insert(start, at: low)
        if recentStarts.count > 32, let oldest = recentStarts.first {
            recentStarts.removeFirst()
            if let index = sortedStarts.firstIndex(of: oldest) { sortedStarts.remove(at: index) }
        }
        var best: Int64?
        for i in sortedStarts.indices.dropFirst() {
            let step = sortedStarts[i] - sortedStarts[i - 1]
            if step >= 2_000_000, step <= 100_000_000, step < (best ?? .max) { best = step }
        }
        if let best { periodNs = best }
    }

    func frameTimeline(_ message: ProtoReader, at timestamp: Int64) throws(ProtoError) {
        var reader = message
        while let field = try reader.next() {
            guard case .bytes(let range) = field.value else { continue }
            var event = message.message(range)
            var cookie: Int64 = 0, token: Int64 = 0, displayToken: Int64 = 0, pid: Int64 = 0, layer = ""
            var verdict = FrameTimelineVerdict()
            let surface = field.number == FrameTimelineField.expectedSurfaceFrameStart || field.number == FrameTimelineField.actualSurfaceFrameStart
            while let f = try event.next() {
                switch (surface, f.number) {
                case (_, 1): cookie = f.int64
                case (_, 2): token = f.int64
                case (true, 3): displayToken = f.int64
                case (true, 4), (false, 3): pid = f.int64
                case (true, 5): if case .bytes(let text) = f.value { layer = event.string(text) }
                case (true, 6), (false, 4): verdict.presentType = f.uint64
                case (true, 8), (false, 6): verdict.gpuComposition = f.bool
                case (true, 9), (false, 7): verdict.jankType = UInt64(UInt32(truncatingIfNeeded: f.uint64))
                case (true, 10), (false, 8): verdict.predictionType = f.uint64
                case (true, 12), (false, 9): verdict.severity = f.uint64
                case (true, 13):
                    if let millis = f.float, millis.isFinite, abs(millis) < 1e6 { verdict.presentDelayNs = Int64((Double(millis) * 1e6).rounded()) }
                default: break
                }
            }
            arrivals += 1
            switch field.number {
            case FrameTimelineField.expectedDisplayFrameStart:
                cookies[cookie] = .displayExpected(token)
                displayFrame(token) { $0.pid = pid; $0.expectedStart = timestamp }
                notePeriod(timestamp)
            case FrameTimelineField.actualDisplayFrameStart:
                cookies[cookie] = .displayActual(token)
                displayFrame(token) { $0.pid = pid }
            case FrameTimelineField.expectedSurfaceFrameStart, FrameTimelineField.actualSurfaceFrameStart:
                guard processes.surfaceProcess(pid, layer: layer, counts: field.number == FrameTimelineField.actualSurfaceFrameStart) else {
                    cookies[cookie] = .ignored
                    continue
                }
                let layerName = String(layer.prefix(200))
                let key = SurfaceKey(pid: pid, token: token, layer: sink.string(layerName))
                let expected = field.number == FrameTimelineField.expectedSurfaceFrameStart
                cookies[cookie] = expected ? .surfaceExpected(key) : .surfaceActual(key)
                var frame = surfaces[key] ?? SurfaceFrame()
                if frame.order == 0 { frame.order = arrivals }
                frame.displayToken = displayToken
                frame.layerName = layerName
                if expected {
                    frame.expectedStart = timestamp
                } else {
                    frame.actualStart = timestamp
                    frame.hasActual = true
                    frame.verdict = verdict
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
                case .ignored: break
                case .displayExpected(let token): displays[token]?.expectedEnd = timestamp
                case .displayActual(let token):
                    displays[token]?.actualEnd = timestamp
                    newestPresentNs = max(newestPresentNs, timestamp)
                    emitWaiting(forDisplay: token)
                    writeExpired(all: false)
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
        if !frame.verdict.isDropped, displays[frame.displayToken]?.actualEnd == nil {
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
        guard let period = periodNs, startsSeen >= Self.settlingStarts else {
            ready.append((key, frame))
            if ready.count > PerfettoState.maxWaiting { flushReady(fallbackPeriodNs: 16_666_667) }
            return
        }
        if !ready.isEmpty { flushReady(fallbackPeriodNs: period) }
        route(key, frame, periodNs: period)
    }

    private func flushReady(fallbackPeriodNs: Int64) {
        let waiting = ready
        ready.removeAll()
        for (key, frame) in waiting { route(key, frame, periodNs: periodNs ?? fallbackPeriodNs) }
    }

    /// Frames shown with an expired prediction wait for the frames shown before them; the rest go on.
    private func route(_ key: SurfaceKey, _ frame: SurfaceFrame, periodNs period: Int64) {
        if let present = presentTime(frame) { notePresent(present, layer: key) }
        if frame.expectedStart == nil, frame.hasActual, !frame.verdict.isDropped, presentTime(frame) != nil {
            expiredWaiting.append((key, frame, period))
            if expiredWaiting.count > PerfettoState.maxWaiting { writeExpired(all: true) }
            return
        }
        emit(key, frame, periodNs: period)
    }

    private func writeExpired(all: Bool) {
        guard !expiredWaiting.isEmpty else { return }
        var kept: [(key: SurfaceKey, frame: SurfaceFrame, periodNs: Int64)] = []
        for waiting in expiredWaiting {
            let present = presentTime(waiting.frame) ?? .min
            if all || newestPresentNs.subtractingReportingOverflow(Self.expiredSlackNs).partialValue >= present {
                emit(waiting.key, waiting.frame, periodNs: waiting.periodNs)
            } else {
                kept.append(waiting)
            }
        }
        expiredWaiting = kept
    }

    private func presentTime(_ frame: SurfaceFrame) -> Int64? {
        frame.verdict.isDropped ? nil : displays[frame.displayToken]?.actualEnd
    }

    private func notePresent(_ present: Int64, layer key: SurfaceKey) {
        let layer = SurfaceKey(pid: key.pid, token: 0, layer: key.layer)
        if presentsByLayer[layer] == nil, presentsByLayer.count >= 4096 { return }
        var presents = presentsByLayer[layer] ?? []
        var low = 0, high = presents.count
        while low < high { let mid = (low + high) / 2; if presents[mid] < present { low = mid + 1 } else { high = mid } }
        presents.insert(present, at: low)
        if presents.count > Self.presentMemory { presents.removeFirst() }
        presentsByLayer[layer] = presents
    }

    /// The latest present of the layer before `present`.
    private func presentBefore(_ present: Int64, layer key: SurfaceKey) -> Int64? {
        presentsByLayer[SurfaceKey(pid: key.pid, token: 0, layer: key.layer)]?.last { $0 < present }
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

    /// When the frame was due on screen (the type's comment says how), with what it was taken from.
    private func expectedPresent(_ key: SurfaceKey, _ frame: SurfaceFrame, display: DisplayFrame?, periodNs period: Int64) -> Int64? {
        guard let present = display?.actualEnd else { return nil }
        if frame.expectedStart == nil || frame.verdict.predictionExpired {
            guard let before = presentBefore(present, layer: key) else {
                sink.skip("frames whose prediction expired with no earlier frame of their layer shown (judged from their deadline)")
                return nil
            }
            return before + period
        }
        if let delay = frame.verdict.presentDelayNs { return present - delay }
        guard let deadline = frame.expectedEnd else { return nil }
        if let duration = display?.expectedDurationNs { return deadline + duration }
        sink.skip("frames whose display frame has no expected timeline and no present delay (due one period after their deadline)")
        return deadline + period
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
        let display = displays[frame.displayToken]
        let expected = final || frame.verdict.isDropped ? nil : expectedPresent(key, frame, display: display, periodNs: period)
        // The app's deadline; a frame whose prediction expired has none: due one period before its
        // expected present, so it counts as late on the app's side (SurfaceFlinger calls it App
        // Deadline Missed: the token expired in a long stall).
        let target = frame.expectedEnd ?? expected.map { $0 - period } ?? (vsync + period)
        sink.emit(TraceEvent(timestampNs: vsync, thread: main, payload: .frameBegan(FrameBegan(
            frameID: id, vsyncNs: vsync, targetNs: target, periodNs: period, expectedPresentNs: expected))))
        if frame.hasActual, !final || frame.verdict.isDropped, let word = frame.verdict.word {
            sink.emitPlatformVerdict(word, frameID: id, atNs: vsync, thread: main, detail: frame.verdict.detail(layer: frame.layerName))
        }
        guard let handOver = frame.actualEnd, !frame.verdict.isDropped else { return }
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

    /// Frames still waiting when the trace ends: begun (and handed over) but never shown.
    func finish() {
        let fallback = periodNs ?? 16_666_667
        flushReady(fallbackPeriodNs: fallback)
        writeExpired(all: true)
        let waiting = surfaces.sorted { $0.value.order < $1.value.order }
        for (key, frame) in waiting { emit(key, frame, periodNs: fallback, final: true) }
        if !waiting.isEmpty { sink.skip("frames still in flight at the end of the trace (not judged)", count: waiting.count) }
        surfaces.removeAll()
        drainDeferred(all: true)
    }
}
