import HitchTrace

/// The platform's own hitches where the trace has no frames to judge (Instruments' `hitches` table
/// exported alone; docs/METRICS.md "Platform hitches"): Apple's figures, not Hitch's judgement.
public struct PlatformHitchFigures: Codable, Sendable, Equatable {
    public var hitchCount = 0
    public var totalHitchMs = 0.0
    public var longestHitchMs = 0.0
    /// The export's span: its earliest time to its latest (hitch ends included), in seconds.
    public var spanSeconds = 0.0
    /// totalHitchMs / spanSeconds.
    public var hitchTimeRatioMsPerS = 0.0
    /// Hitches the platform marks as the system's (`is-system`), not the app's, and their time.
    public var systemHitchCount = 0
    public var systemHitchMs = 0.0
    /// The platform's words on its hitches, most hitch time first (at most 50).
    public var narratives: [PlatformNarrative] = []
    public init() {}
}

public struct PlatformNarrative: Codable, Sendable, Equatable {
    public var text = ""
    public var hitchCount = 0
    public var totalHitchMs = 0.0
    /// The platform marks these hitches as the system's, not the app's.
    public var isSystem = false
    public init() {}
}
