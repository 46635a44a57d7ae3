// The host: a root view, its graph, a display link on the main queue at a chosen refresh rate,
// and a render thread. Each vsync the main thread handles input (the app's `onFrame` hook),
// applies invalidations, re-evaluates invalid bodies, lays out and commits; the render thread
// starts at the first vsync at or after the commit, rasterizes, and presents at the next vsync.
import Dispatch
import Foundation
import Synchronization

/// One display-link callback's timing (nanoseconds on `MonotonicClock`).
public struct FrameTiming: Sendable {
    public var frameID: UInt64
    public var vsyncNs: Int64
    /// When the frame should be committed: the next vsync (the display link's target timestamp).
    public var targetNs: Int64
    public var periodNs: Int64
    /// Seconds since the frame loop started, for scripted input.
    public var elapsedSeconds: Double
}

public struct HostConfiguration: Sendable {
    public var viewport: Size
    public var refreshRateHz: Double
    /// Capture the writer's stack with each invalidation (slower; for cause-and-effect views).
    public var captureWriterStacks: Bool
    public init(viewport: Size = Size(width: 390, height: 844), refreshRateHz: Double = 120, captureWriterStacks: Bool = false) {
        self.viewport = viewport
        self.refreshRateHz = refreshRateHz
        self.captureWriterStacks = captureWriterStacks
    }
    public var periodNs: Int64 { Int64((1e9 / refreshRateHz).rounded()) }
}

public struct FrameLoopSummary: Sendable {
    public var frames: Int
    public var presentedFrames: Int
    public var durationSeconds: Double
}

/// One `update()`'s main-thread time by step, in nanoseconds. Diffing (children matched by
/// identity, in the update pass or when layout materializes lazy rows) is counted in `diffNs`
/// only, not in the step it ran in.
public struct FrameCost: Sendable, Equatable {
    /// Applying invalidations and re-evaluating invalid bodies.
    public var updateNs: Int64 = 0
    /// Measuring and placing.
    public var layoutNs: Int64 = 0
    public var diffNs: Int64 = 0
    /// The commit: building the display list.
    public var displayListNs: Int64 = 0
    public init(updateNs: Int64 = 0, layoutNs: Int64 = 0, diffNs: Int64 = 0, displayListNs: Int64 = 0) {
        self.updateNs = updateNs
        self.layoutNs = layoutNs
        self.diffNs = diffNs
        self.displayListNs = displayListNs
    }
    public var totalNs: Int64 { updateNs + layoutNs + diffNs + displayListNs }
}

@MainActor
public final class ViewHost {
    public let configuration: HostConfiguration
    let graph: ViewGraph
    private var frameCounter: UInt64 = 0
    private var needsFullLayout = true

    /// Called on the main thread at the start of every frame, before bodies are evaluated: the
    /// place to deliver input that arrived since the last frame and to advance animations.
    public var onFrame: ((FrameTiming) -> Void)?
    /// Called on the render thread when a frame is presented (frame id, present time in ns).
    public var onPresent: (@Sendable (UInt64, Int64) -> Void)?

    public init(root: some View, configuration: HostConfiguration = HostConfiguration()) {
        self.configuration = configuration
        graph = ViewGraph(root: root, captureWriterStacks: configuration.captureWriterStacks)
    }

    // MARK: Inspection (tests, tools)

    public var statistics: RuntimeStatistics { graph.statistics }
    public func resetStatistics() { graph.statistics = RuntimeStatistics() }
    /// Keep a list of invalidation records in `statistics` (tests); the trace always gets them.
    public var recordsInvalidations: Bool {
        get { graph.recordsInvalidationList }
        set { graph.recordsInvalidationList = newValue }
    }
    public var nodeCount: Int { graph.nodeCount }

    /// Every laid-out view in tree order: its type name and frame.
    public func layoutFrames() -> [(type: String, frame: Rect)] {
        var result: [(String, Rect)] = []
        func visit(_ node: ViewNode) {
            result.append((node.typeName.string, node.frame))
            node.children.forEach(visit)
        }
        visit(graph.root)
        return result
    }

    // MARK: One frame's main-thread work

    /// Applies invalidations, updates invalid bodies, lays out and builds the display list,
    /// recording each step. Usable without the frame loop (tests, offline rendering).
    public func update() -> DisplayList {
        let start = MonotonicClock.nowNs()
        _ = graph.applyPendingInvalidations()
        graph.updateInvalidNodes()
        let updated = MonotonicClock.nowNs()
        let updateDiffNs = graph.takeDiffNs()
        Instrument.stage("layout") {
            Instrument.layoutPass(viewCount: graph.nodeCount) { graph.layout(viewport: configuration.viewport) }
        }
        let laidOut = MonotonicClock.nowNs()
        let layoutDiffNs = graph.takeDiffNs()
        let list = Instrument.stage("commit") { graph.buildDisplayList(viewport: configuration.viewport) }
        let committed = MonotonicClock.nowNs()
        lastFrameCost = FrameCost(updateNs: updated - start - updateDiffNs, layoutNs: laidOut - updated - layoutDiffNs,
                                  diffNs: updateDiffNs + layoutDiffNs, displayListNs: committed - laidOut)
        return list
    }

    /// Where the last `update()`'s main-thread time went.
    public private(set) var lastFrameCost = FrameCost()

    /// Runs the display link for `seconds` of wall time, then drains the render thread.
    /// The main queue keeps running between frames (so `MainActor` tasks and results posted
    /// from background work land there, as on a device).
    public func run(seconds: Double) -> FrameLoopSummary {
        run(maxSeconds: seconds, until: { false })
    }

    /// Runs one display link (one vsync grid, one render thread) until `isDone` returns true or
    /// `maxSeconds` of wall time pass, then drains the render thread. `isDone` is asked on the main
    /// thread at every display-link callback, before that vsync's frame starts, so a workload of
    /// unknown length (a token stream) keeps a single uninterrupted frame loop.
    public func run(maxSeconds: Double, until isDone: @escaping @MainActor () -> Bool) -> FrameLoopSummary {
        let period = configuration.periodNs
        // The thread that runs the display link is the app's main thread, whatever it is named.
        Instrument.setCurrentThreadRole(.main)
        let startNs = MonotonicClock.nowNs()
        let renderer = RenderThread(viewport: configuration.viewport, periodNs: period, gridOriginNs: startNs, onPresent: onPresent)
        renderer.start()
        // Bounded so the nanosecond arithmetic cannot overflow (about 11 days).
        let endNs = startNs + Int64(min(max(maxSeconds, 0), 1e6) * 1e9)
        var lastVsyncIndex: Int64 = -1
        var finished = false
        var frames = 0

        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: .main)
        timer.schedule(deadline: .now(), repeating: .nanoseconds(Int(period)), leeway: .nanoseconds(0))
        timer.setEventHandler { [unowned self] in
            MainActor.assumeIsolated {
                let now = MonotonicClock.nowNs()
                guard now < endNs, !isDone() else {
                    finished = true
                    return
                }
                // The display link reports the latest vsync; missed ones are simply gone.
                let index = (now - startNs) / period
                guard index > lastVsyncIndex else { return }
                // Back-pressure, as a swap chain gives: with two frames already waiting for the
                // render thread there is no buffer to draw into, so this vsync starts no frame.
                guard renderer.framesInFlight(atNs: now) < 2 else { return }
                lastVsyncIndex = index
                let vsync = startNs + index * period
                self.frameCounter += 1
                let timing = FrameTiming(frameID: self.frameCounter, vsyncNs: vsync, targetNs: vsync + period,
                                         periodNs: period, elapsedSeconds: Double(vsync - startNs) / 1e9)
                self.runFrame(timing, renderer: renderer)
                frames += 1
            }
        }
        timer.resume()
        while !finished {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
        }
        timer.cancel()
        let presented = renderer.finish()
        return FrameLoopSummary(frames: frames, presentedFrames: presented,
                                durationSeconds: Double(MonotonicClock.nowNs() - startNs) / 1e9)
    }

    private func runFrame(_ timing: FrameTiming, renderer: RenderThread) {
        Instrument.frameBegan(frameID: timing.frameID, vsyncNs: timing.vsyncNs, targetNs: timing.targetNs, periodNs: timing.periodNs)
        onFrame?(timing)
        let list = update()
        Instrument.frameCommitted(frameID: timing.frameID)
        renderer.submit(frameID: timing.frameID, list: list, committedNs: MonotonicClock.nowNs())
    }
}

/// The render server: takes committed display lists in order, starts each at the first vsync
/// at or after its commit, rasterizes it, and presents at the first vsync after rendering ends.
final class RenderThread: Sendable {
    private struct Job: Sendable {
        var frameID: UInt64
        var list: DisplayList
        var committedNs: Int64
    }

    private struct Queue {
        var jobs: [Job] = []
        var closed = false
        var submitted = 0
        var presented = 0
        /// The vsync at which the rendered frame waiting for it goes on screen.
        var presentingAtNs: Int64?
    }

    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let viewport: Size
    private let periodNs: Int64
    private let gridOriginNs: Int64
    private let onPresent: (@Sendable (UInt64, Int64) -> Void)?

    init(viewport: Size, periodNs: Int64, gridOriginNs: Int64, onPresent: (@Sendable (UInt64, Int64) -> Void)?) {
        self.viewport = viewport
        self.periodNs = periodNs
        self.gridOriginNs = gridOriginNs
        self.onPresent = onPresent
    }

    func start() {
        let thread = Thread { [self] in loop() }
        thread.name = "render"
        thread.start()
    }

    func submit(frameID: UInt64, list: DisplayList, committedNs: Int64) {
        queue.withLock {
            $0.jobs.append(Job(frameID: frameID, list: list, committedNs: committedNs))
            $0.submitted += 1
        }
        wake.signal()
    }

    /// Frames committed but not on screen at `nowNs`. A rendered frame whose present vsync has
    /// come counts as presented even if the render thread has not woken for it yet: the display
    /// link and the present share that vsync, and which thread runs first must not decide whether
    /// the app may start a frame.
    func framesInFlight(atNs nowNs: Int64) -> Int {
        queue.withLock { state in
            let onScreen = state.presentingAtNs.map { $0 <= nowNs } ?? false
            return state.submitted - state.presented - (onScreen ? 1 : 0)
        }
    }

    /// Closes the queue, waits for the remaining frames to present, returns the presented count.
    func finish() -> Int {
        queue.withLock { $0.closed = true }
        wake.signal()
        done.wait()
        return queue.withLock { $0.presented }
    }

    /// The first vsync at or after `time` (vsyncs are on a grid of the refresh period).
    private func vsync(atOrAfter time: Int64) -> Int64 {
        let since = time - gridOriginNs
        let index = (since + periodNs - 1) / periodNs
        return gridOriginNs + index * periodNs
    }

    private func loop() {
        Instrument.nameCurrentThread("render")
        Instrument.setCurrentThreadRole(.render)
        let rasterizer = Rasterizer(viewport: viewport)
        while true {
            // The semaphore only wakes the thread: it takes every queued job before waiting again,
            // so a wake-up that comes early or late never leaves a committed frame waiting.
            let (next, closed): (Job?, Bool) = queue.withLock { state in
                (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.closed)
            }
            guard let job = next else {
                if closed { break }
                wake.wait()
                continue
            }
            MonotonicClock.sleep(untilNs: vsync(atOrAfter: job.committedNs))
            Instrument.frameRenderBegan(frameID: job.frameID)
            Instrument.stage("render") { _ = rasterizer.render(job.list) }
            Instrument.frameRenderEnded(frameID: job.frameID)
            let present = vsync(atOrAfter: MonotonicClock.nowNs())
            queue.withLock { $0.presentingAtNs = present }
            MonotonicClock.sleep(untilNs: present)
            Instrument.framePresented(frameID: job.frameID, atNs: present)
            onPresent?(job.frameID, present)
            queue.withLock { $0.presented += 1; $0.presentingAtNs = nil }
        }
        done.signal()
    }
}
