import HitchTrace

/// Smallest t' = anchor + k * period with t' >= t (k may be negative).
@inline(__always)
func vsyncAtOrAfter(_ t: Int64, anchor: Int64, period: Int64) -> Int64 {
    guard period > 0 else { return t }
    let delta = t - anchor
    // Integer division truncates toward zero: that is the ceiling for negative deltas.
    let k = delta > 0 && delta % period != 0 ? delta / period + 1 : delta / period
    return anchor + k * period
}

/// A recorded present is a clock read after a real wait for the display, so it lands a little
/// after (or, predicted, before) the vsync it belongs to. Within this fraction of a period of a
/// vsync it is taken as that vsync (docs/METRICS.md "Present jitter").
let presentSnapTolerance = 0.25

/// The vsync a recorded present belongs to: the nearest one on the frame's grid when within
/// `presentSnapTolerance` of a period, else the first one at or after it (a frame cannot be shown
/// between vsyncs).
func presentOnVsyncGrid(_ t: Int64, anchor: Int64, period: Int64) -> Int64 {
    guard period > 0 else { return t }
    let after = vsyncAtOrAfter(t, anchor: anchor, period: period)
    let before = after - period
    let nearest = after - t <= t - before ? after : before
    return abs(t - nearest) <= Int64(Double(period) * presentSnapTolerance) ? nearest : after
}

/// Lateness -> hitch, applying the triple-buffering rule. Keeps the previous frame's lateness (and,
/// for frames judged against a stated expected present, the vsync it was shown on).
struct LatenessJudge: Sendable {
    private var previousLatenessNs: Int64 = 0
    private var previousActualNs: Int64 = .min

    mutating func reset() { previousLatenessNs = 0; previousActualNs = .min }

    /// A frame whose trace states its expected present (`FrameBegan.expectedPresentNs`: a platform
    /// that queues finished buffers, as Android's BufferQueue does) is shown at the earliest one vsync
    /// after the frame ahead of it. The lateness that queue imposed is latency (buffer stuffing: the
    /// display still showed a new frame at every vsync); only the vsyncs it missed beyond that are its
    /// hitch. `actualNs` and `expectedNs` are on the display's vsync grid.
    mutating func judgeQueued(expectedNs: Int64, actualNs: Int64, periodNs: Int64) -> (hitchNs: Int64, latencyNs: Int64) {
        let lateness = max(0, actualNs - expectedNs)
        let earliest = previousActualNs == .min ? expectedNs : max(expectedNs, previousActualNs.addingSaturated(periodNs))
        let hitch = min(lateness, max(0, actualNs - earliest))
        previousActualNs = actualNs
        previousLatenessNs = actualNs - expectedNs
        return (hitch, lateness - hitch)
    }

    /// Returns (hitch, latency). A frame one period late right after a frame also one period late
    /// is steady triple buffering: latency. After such a frame the expectation moves one period.
    mutating func judge(latenessNs: Int64, periodNs: Int64) -> (hitchNs: Int64, latencyNs: Int64) {
        defer { previousLatenessNs = latenessNs; previousActualNs = .min }
        let tolerance = Int64(Double(periodNs) * tripleBufferTolerance)
        let previousWasOnePeriodLate = abs(previousLatenessNs - periodNs) <= tolerance && periodNs > 0
        if previousWasOnePeriodLate {
            if abs(latenessNs - periodNs) <= tolerance { return (0, latenessNs) }
            return (max(0, latenessNs - periodNs), min(max(0, latenessNs), periodNs))
        }
        return (max(0, latenessNs), 0)
    }
}

/// Judges a recorded frame (`isJudgeable`) on its own recorded grid (vsync + k * period); its cause
/// comes from the whole timeline (`CauseChain`). Not an Optional: the frame is built in the
/// caller's storage, where an Optional's payload was copied out.
func judgeRecorded(_ frame: FrameRecord, judge: inout LatenessJudge, switches: SwitchHistory) -> JudgedFrame {
    let period = frame.periodNs
    // A stated expected present (imports) is on the display's vsync grid; the recorder's frames are
    // due one period after their target, on their own vsync's grid.
    let stated = frame.statedExpectedPresentNs != .min
    let expected = stated ? frame.statedExpectedPresentNs : frame.targetNs + period
    let grid = stated ? expected : frame.vsyncNs
    let renderStart = vsyncAtOrAfter(frame.commitNs, anchor: frame.vsyncNs, period: period)
    let renderEnd = frame.renderEndNs == .min ? renderStart : frame.renderEndNs
    // Render duration: from the vsync after commit, or from the commit itself when the renderer
    // finished before that vsync (it started at once).
    let renderNs = renderEnd >= renderStart ? renderEnd - renderStart : max(0, renderEnd - frame.commitNs)
    let actual: Int64
    if frame.presentNs != .min {
        actual = presentOnVsyncGrid(frame.presentNs, anchor: grid, period: period)
    } else {
        let periods = max(1, (max(0, renderEnd - renderStart) + period - 1) / period)
        actual = renderStart + periods * period
    }
    let (hitch, latency) = stated ? judge.judgeQueued(expectedNs: expected, actualNs: actual, periodNs: period)
                                  : judge.judge(latenessNs: actual - expected, periodNs: period)
    let kind: JudgedFrame.Kind
    if hitch > 0 { kind = frame.commitNs > frame.targetNs ? .commit : .render }
    else if latency > 0 { kind = .latency }
    else { kind = .none }
    var judged = JudgedFrame(frameID: frame.frameID, startNs: frame.vsyncNs, periodNs: period,
                             mainWorkNs: max(0, frame.commitNs - frame.beganNs), renderNs: renderNs,
                             commitNs: frame.commitNs, renderEndNs: renderEnd,
                             expectedNs: expected, actualNs: actual, hitchNs: hitch, latencyNs: latency, kind: kind)
    if frame.hasReadings {   // without readings every split is nil
        // How long after the last vsync before it a thread began: asleep before that vsync it
        // waited for that vsync, and met it.
        func sinceVsync(_ t: Int64) -> Int64 { t - (vsyncAtOrAfter(t + 1, anchor: frame.vsyncNs, period: period) - period) }
        let renderBegan = frame.readings.renderBegan
        judged.states = FrameStates(main: frame.readings.main(beganNs: frame.beganNs, switches: switches),
                                    render: frame.readings.render(switches: switches,
                                                                  wokeLateNs: renderBegan.isPresent ? sinceVsync(renderBegan.atNs) : .max),
                                    lateStart: frame.readings.mainLateStart, lateStartWokeLateNs: sinceVsync(frame.beganNs),
                                    renderLateStart: frame.readings.renderLateStart)
    }
    return judged
}
