public struct StageFigures: Codable, Sendable, Equatable {
    public var name = ""
    public var count = 0, totalMs = 0.0
    /// Total minus the time of stages nested inside it on the same thread.
    public var selfMs = 0.0
    public var meanMs = 0.0, p50Ms = 0.0, p95Ms = 0.0, p99Ms = 0.0, maxMs = 0.0
    public var threads: [String] = []
    /// This stage's self time on the main thread / all stages' self time on the main thread.
    public var mainThreadShare = 0.0
    /// This stage's time on the main thread / its total time.
    public var onMainThreadFraction = 0.0
    /// This stage's time on the main thread (what delays frames; `hitch diff` judges it per frame).
    public var mainThreadMs = 0.0
    /// Self time that fell inside hitching frames' windows.
    public var inHitchingFramesMs = 0.0
    public init() {}
}

public struct ViewFigures: Codable, Sendable, Equatable {
    public var type = ""
    public var bodyEvaluations = 0
    public var totalMs = 0.0, maxMs = 0.0
    /// Evaluations longer than 500 us (Instruments' orange).
    public var longUpdates = 0
    /// Evaluations longer than 1 ms (Instruments' red).
    public var longUpdatesOver1ms = 0
    /// Evaluations / recorded frames.
    public var evaluationsPerFrame = 0.0
    public init() {}
}

public struct LayoutFigures: Codable, Sendable, Equatable {
    public var passes = 0
    public var totalMs = 0.0, maxMs = 0.0
    public var viewsLaidOut: UInt64 = 0
    public init() {}
}

public struct InvalidationEdge: Codable, Sendable, Equatable {
    /// The written property (from the event), e.g. `FeedModel.query`.
    public var source = ""
    /// The invalidated view type.
    public var target = ""
    public var count = 0
    /// The writer's function from its backtrace (first frame outside the recorder and Observation), if any.
    public var writer: String? = nil
    public init() {}
}

public struct InvalidationSource: Codable, Sendable, Equatable {
    public var source = ""
    public var invalidations = 0
    /// Distinct target view types.
    public var targetTypes = 0
    public init() {}
}
