import HitchTrace

// Hitch causes over the whole recorded timeline (docs/METRICS.md "Hitch causes").
//
// A frame may be late for its own sake or because an earlier frame still held the main thread, the
// render thread or the display (its present slot) when this one needed it. Two timelines tell
// them apart, both fed the recorded frames in the order they began:
// - the counterfactual: every frame doing only its on-CPU work (the main thread's running time,
//   the render thread's), with the same queues (one main thread, one render thread, one present
//   per vsync). A hitch that remains there is the app's work; if the frame alone (no queue) would
//   have been on time, it is the app work of the frame that built the queue, its root;
// - the recorded one: a hitch gone from the counterfactual came from time not running. If the frame
//   would have been on time without the hold of the frame before it (the part of its late start
//   and of its render's late start that the previous frame still held, or a present slot it took),
//   it is that frame's cause and root; else the frame's own largest part of time not running.

/// One recorded frame as the chain reads it.
struct ChainFrame: Sendable {
    var frameID: UInt64
    var vsyncNs: Int64
    var periodNs: Int64
    var beganNs: Int64
    var commitNs: Int64
    /// When the render thread began this frame's render (its renderBegan reading), else .min.
    var renderBeganNs: Int64
    var renderEndNs: Int64
    var expectedNs: Int64
    var actualNs: Int64
    var hitchNs: Int64
    /// Lateness minus hitch, at least 0: the triple-buffering allowance the recorded frame was judged with.
    var allowanceNs: Int64
    /// The judged render duration (from the first vsync after the commit).
    var renderNs: Int64
    var states: FrameStates
}

/// What the chain decided for one frame.
struct ChainVerdict: Sendable, Equatable {
    var cause: HitchCause
    /// The earlier frame whose hold made this one late (nil: late for its own sake, or on time).
    var queuedBehind: UInt64?
}

struct CauseChain: Sendable {
    // The recorded timeline: when the previous frame let go of the main thread, the render thread,
    // and the vsync it was shown at; the root and cause of what it held.
    private var previousCommitNs: Int64 = .min
    private var previousRenderEndNs: Int64 = .min
    private var previousActualNs: Int64 = .min
    private var previousHold = Hold(root: 0, cause: .unknown)
    // The counterfactual timeline, and whose work each resource's free time ends.
    private var cfMainFreeNs: Int64 = .min
    private var cfRenderFreeNs: Int64 = .min
    private var cfLastActualNs: Int64 = .min
    private var cfMainOwner: UInt64 = 0
    private var cfRenderOwner: UInt64 = 0
    private var cfDisplayOwner: UInt64 = 0
    private var hasPrevious = false
    /// How much later than the pipeline's first chance the app shows its frames by design (a loop
    /// that presents a period after it renders): from the last frame shown on time.
    private var presentDelayNs: Int64 = 0

    /// Whether the app renders on the vsync grid, as the last frame that could tell showed it.
    private var toldRendersOnGrid: Bool? = nil

    private struct Hold: Sendable { var root: UInt64; var cause: HitchCause }

    /// Whether `f` rendered on the grid: a render that began (without a renderBegan reading: ended)
    /// before the first vsync after the commit was rendered at once; one that began at or after it
    /// waited for that vsync, unless the commit came within a quarter period of it. A render begun
    /// at once crosses that vsync too then, so the frame cannot tell and takes what the last frame
    /// that could showed (the recorded mode when none has yet).
    private mutating func rendersOnGrid(_ f: ChainFrame, renderGrid: Int64, period: Int64) -> Bool {
        let renderMark = f.renderBeganNs == .min ? f.renderEndNs : f.renderBeganNs
        let told: Bool? = renderMark < renderGrid ? false : (renderGrid - f.commitNs >= period / 4 ? true : nil)
        if let told { toldRendersOnGrid = told }
        return told ?? toldRendersOnGrid ?? (f.renderEndNs >= renderGrid)
    }

    mutating func reset() { self = CauseChain() }

    /// Judges `frame` (frames in the order they began) and moves both timelines on.
    mutating func judge(_ f: ChainFrame) -> ChainVerdict {
        let p = max(1, f.periodNs)
        func gridAtOrAfter(_ t: Int64) -> Int64 { vsyncAtOrAfter(t, anchor: f.vsyncNs, period: p) }
        let main = f.states.main
        let renderGrid = gridAtOrAfter(f.commitNs)
        // On-CPU work: the main thread's running time in the frame plus what it ran between the
        // previous commit (or the vsync) and the frame's begin; the render thread's running time.
        let lateStartFrom = max(f.vsyncNs, hasPrevious ? previousCommitNs : .min)
        let lateStartRunning = min(f.states.lateStart?.runningNs ?? 0, max(0, f.beganNs - lateStartFrom))
        let mainCPU = main.map { $0.runningNs.addingSaturated(lateStartRunning) } ?? max(0, f.commitNs - f.beganNs)
        let renderCPU = f.states.render.map(\.runningNs) ?? f.renderNs

        // Where a render starts: at the first vsync after the commit when the recorded one did (a
        // render server), else at once (a loop that renders right after its update, `FrameMarker`).
        let renderStartsOnGrid = rendersOnGrid(f, renderGrid: renderGrid, period: p)
        func renderReady(_ commit: Int64) -> Int64 { renderStartsOnGrid ? gridAtOrAfter(commit) : commit }
        // When a frame whose render ends at `end` is shown: the recorded present moved as much earlier
        // as the render end did, but no later than the pipeline shows it (the first vsync after the
        // render, a period after an on-grid render start): a present recorded late for reasons outside
        // both threads' windows is not carried into the counterfactual.
        func pipelineShown(renderReady ready: Int64, renderEnd end: Int64) -> Int64 {
            renderStartsOnGrid ? max(gridAtOrAfter(end), ready + p) : gridAtOrAfter(end)
        }
        func shown(renderReady ready: Int64, renderEnd end: Int64) -> Int64 {
            let moved = gridAtOrAfter(f.actualNs - max(0, f.renderEndNs - end))
            return min(moved, pipelineShown(renderReady: ready, renderEnd: end) + presentDelayNs)
        }

        // The counterfactual, with the queues, and alone.
        let cfStart = max(f.vsyncNs, cfMainFreeNs)
        let cfCommit = cfStart.addingSaturated(mainCPU)
        let cfRenderReady = renderReady(cfCommit)
        let cfRenderStart = max(cfRenderReady, cfRenderFreeNs)
        let cfRenderEnd = cfRenderStart.addingSaturated(renderCPU)
        let cfShown = shown(renderReady: cfRenderReady, renderEnd: cfRenderEnd)
        // One frame per vsync: shown no sooner after the previous frame than it was recorded (at most a
        // period: a loop that presents faster than the display, like `FrameMarker`'s, keeps its pace).
        let recordedGap = hasPrevious && previousActualNs != .min ? min(p, max(0, f.actualNs - previousActualNs)) : p
        let cfActual = cfLastActualNs == .min ? cfShown : max(cfShown, cfLastActualNs + recordedGap)
        let aloneCommit = f.vsyncNs.addingSaturated(mainCPU)
        let aloneReady = renderReady(aloneCommit)
        let aloneActual = shown(renderReady: aloneReady, renderEnd: aloneReady.addingSaturated(renderCPU))
        let cfHitch = cfActual - f.expectedNs - f.allowanceNs
        let aloneHitch = aloneActual - f.expectedNs - f.allowanceNs
        // Who the counterfactual frame waited behind, the latest constraint first.
        var cfBehind: UInt64? = nil
        if cfActual > cfShown { cfBehind = cfDisplayOwner }
        else if cfRenderStart > cfRenderReady { cfBehind = cfRenderOwner }
        else if cfStart > f.vsyncNs { cfBehind = cfMainOwner }

        // The recorded frame without the previous frame's hold: of its late start, the part the
        // previous frame still held the main thread or the render thread (a main thread that waits
        // for the render thread before it begins: the swap chain's back-pressure); of its render's
        // late start, the part the previous render still ran; or the vsync after the previous
        // frame's, when the pipeline alone would have shown it sooner.
        let previousBusyNs = max(previousCommitNs, previousRenderEndNs)
        let heldMain = hasPrevious ? max(0, min(previousBusyNs, f.beganNs) - f.vsyncNs) : 0
        let renderBegan = f.renderBeganNs == .min ? renderGrid : max(renderGrid, f.renderBeganNs)
        let heldRender = hasPrevious ? max(0, min(previousRenderEndNs, renderBegan) - renderGrid) : 0
        let freeReady = renderReady(f.commitNs - heldMain)
        let freeActual = shown(renderReady: freeReady, renderEnd: freeReady.addingSaturated(max(0, f.renderNs - heldRender)))
        let pipelineActual = pipelineShown(renderReady: renderReady(f.commitNs), renderEnd: f.renderEndNs) + presentDelayNs
        let heldDisplay = hasPrevious && previousActualNs != .min && previousActualNs + p >= f.actualNs && pipelineActual < f.actualNs
        let freeHitch = min(freeActual, heldDisplay ? pipelineActual : freeActual) - f.expectedNs - f.allowanceNs
        let recordedQueued = hasPrevious && freeHitch <= 0 && (heldMain > 0 || heldRender > 0 || heldDisplay)

        var verdict = ChainVerdict(cause: .unknown, queuedBehind: nil)
        if f.hitchNs > 0, main != nil {
            if cfHitch > 0 {
                verdict.cause = .appWork
                if aloneHitch <= 0, let behind = cfBehind, behind != f.frameID { verdict.queuedBehind = behind }
            } else if recordedQueued {
                verdict.cause = previousHold.cause
                verdict.queuedBehind = previousHold.root
            } else {
                verdict.cause = HitchCauseRule.largestNotRunning(f.states)
            }
        }

        // What this frame holds for the next one: its root and cause.
        if let behind = verdict.queuedBehind {
            previousHold = Hold(root: behind, cause: verdict.cause)
        } else if f.hitchNs > 0 && main != nil {
            previousHold = Hold(root: f.frameID, cause: verdict.cause)
        } else if recordedQueued && f.actualNs > f.expectedNs {
            // Late itself (added latency, not a hitch) only by the earlier hold: it carries that hold on.
        } else {
            // A hold the next frame is judged by in the recorded timeline only: one its on-CPU work
            // made shows in the counterfactual, so this is the frame's time not running.
            previousHold = Hold(root: f.frameID, cause: main == nil ? .unknown : HitchCauseRule.largestNotRunning(f.states))
        }
        if f.hitchNs == 0 && f.actualNs <= f.expectedNs {
            presentDelayNs = max(0, f.actualNs - pipelineShown(renderReady: renderReady(f.commitNs), renderEnd: f.renderEndNs))
        }
        previousCommitNs = f.commitNs
        previousRenderEndNs = f.renderEndNs
        previousActualNs = f.actualNs
        hasPrevious = true
        let cfRoot = cfHitch > 0 && aloneHitch <= 0 ? (cfBehind ?? f.frameID) : f.frameID
        cfMainFreeNs = cfCommit; cfMainOwner = cfStart > f.vsyncNs ? cfMainOwner : cfRoot
        cfRenderFreeNs = cfRenderEnd; cfRenderOwner = cfRenderStart > cfRenderReady ? cfRenderOwner : cfRoot
        cfLastActualNs = cfActual; cfDisplayOwner = cfActual > cfShown ? cfDisplayOwner : cfRoot
        return verdict
    }
}
