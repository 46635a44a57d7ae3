import HitchTrace

/// How Hitch's judgement of imported frames compares with the platform's own (Android's jank
/// verdict, Apple's hitches), over the frames that carry one (docs/METRICS.md "Platform verdicts").
public struct PlatformAgreement: Codable, Sendable, Equatable {
    /// Recorded frames judged by both.
    public var frames = 0
    /// Of those: the platform called janky and Hitch found a hitch (`bothJanky`); the platform called
    /// janky and Hitch found none, e.g. a frame only the platform counts late (`platformOnly`); Hitch
    /// found a hitch the platform did not call janky (`hitchOnly`); neither found anything (`bothOnTime`).
    public var bothJanky = 0, platformOnly = 0, hitchOnly = 0, bothOnTime = 0
    /// Frames with a platform verdict that Hitch could not judge (no hand-over recorded).
    public var unjudged = 0
    /// (bothJanky + bothOnTime) / frames.
    public var agreementRatio = 0.0
    public init() {}

    mutating func add(platformJanky: Bool, hitch: Bool) {
        frames += 1
        switch (platformJanky, hitch) {
        case (true, true): bothJanky += 1
        case (true, false): platformOnly += 1
        case (false, true): hitchOnly += 1
        case (false, false): bothOnTime += 1
        }
        agreementRatio = Double(bothJanky + bothOnTime) / Double(frames)
    }
}

/// The platform verdicts of one run, joined to frames: a verdict instant (`PlatformVerdict`) follows
/// its frame's begin on the same thread at the same time, so it belongs to the last frame begun there.
struct PlatformVerdicts: Sendable {
    private var category: Int32 = -1
    private var lastBegan: [UInt32: UInt64] = [:]
    private var pending: [UInt64: Int32] = [:]
    private(set) var agreement = PlatformAgreement()

    mutating func reset() {
        lastBegan.removeAll(keepingCapacity: true)
        pending.removeAll(keepingCapacity: true)
    }

    mutating func frameBegan(_ frameID: UInt64, thread: UInt32) { lastBegan[thread] = frameID }

    /// Takes an instant if it is a verdict: `name` is the instant's category, `verdict` its name.
    mutating func instant(category name: Int32, verdict: Int32, thread: UInt32, _ context: inout PassContext) -> Bool {
        if category < 0 { category = context.names.index(of: PlatformVerdict.category) }
        guard name == category else { return false }
        if let frameID = lastBegan[thread], verdict >= 0 { pending[frameID] = verdict }
        return true
    }

    /// The verdict of a frame being judged (removed), as text.
    mutating func take(_ frameID: UInt64, _ context: PassContext) -> String? {
        guard !pending.isEmpty, let verdict = pending.removeValue(forKey: frameID) else { return nil }
        return context.names[verdict]
    }

    mutating func judged(verdict: String, hitch: Bool) {
        agreement.add(platformJanky: PlatformVerdict(label: verdict) == .janky, hitch: hitch)
    }

    mutating func unjudged(_ frameID: UInt64) {
        if pending.removeValue(forKey: frameID) != nil { agreement.unjudged += 1 }
    }
}
