import HitchTrace

/// One frame, judged on some vsync grid.
struct JudgedFrame: Sendable {
    typealias Kind = FrameKind
    var frameID: UInt64
    var startNs: Int64          // vsync the frame's work started at
    var periodNs: Int64
    var mainWorkNs: Int64
    var renderNs: Int64
    var commitNs: Int64
    var renderEndNs: Int64
    var expectedNs: Int64
    var actualNs: Int64
    var hitchNs: Int64
    var latencyNs: Int64
    var kind: Kind
    /// Why the frame hitched (`HitchCauseRule`, over the whole timeline for recorded frames:
    /// `CauseChain`); `.unknown` when it did not or without readings.
    var cause: HitchCause = .unknown
    /// The root frame a recorded frame queued behind (`CauseChain`); nil when late on its own.
    var queuedBehind: UInt64? = nil
    /// The part of the frame's shown time not running that earlier late frames held (`CauseChain`).
    var heldByEarlierFrames: StateSplit? = nil
    /// How much later than its pipeline allowed the frame was shown (`CauseChain`).
    var latePresentNs: Int64 = 0
    /// The platform judged the frame too (imports): its verdict can name the cause (`PlatformCause`).
    var hasPlatformVerdict = false
    /// The main thread's frame work and the render thread's render by state (nil without readings).
    var states = FrameStates.unknown
    var mainStates: StateSplit? { states.main }
    var renderStates: StateSplit? { states.render }
    /// The main thread's late start (its vsync to the frame's begin) as the cause counts it.
    var mainLateStartStates: StateSplit? { states.lateStart?.countedAsLateStart(wokeLateNs: states.lateStartWokeLateNs) }
    var frameTimeNs: Int64 { mainWorkNs + renderNs }
    var overrunNs: Int64 { actualNs - expectedNs }

    /// All zero: what storage frames are judged into starts as (`ReplayModel.completed`).
    static let zero = JudgedFrame(frameID: 0, startNs: 0, periodNs: 0, mainWorkNs: 0, renderNs: 0, commitNs: 0, renderEndNs: 0,
                                  expectedNs: 0, actualNs: 0, hitchNs: 0, latencyNs: 0, kind: .none)
}
