public struct StageFigures: Codable, Sendable, Equatable {
    public var name: String = ""
    public var count: Int = 0
    public var totalMs: Double = 0
    /// Total minus the time of stages nested inside it on the same thread.
    public var selfMs: Double = 0
    public var meanMs: Double = 0
    public var p50Ms: Double = 0
    public var p95Ms: Double = 0
    public var p99Ms: Double = 0
    public var maxMs: Double = 0
    public var threads: [String] = []
    /// This stage's self time on the main thread / all stages' self time on the main thread.
    public var mainThreadShare: Double = 0
    /// This stage's time on the main thread / its total time.
    public var onMainThreadFraction: Double = 0
    /// This stage's time on the main thread (what delays frames; `hitch diff` judges it per frame).
    public var mainThreadMs: Double = 0
    /// Self time that fell inside hitching frames' windows.
    public var inHitchingFramesMs: Double = 0
    public init() {}
}

public struct ViewFigures: Codable, Sendable, Equatable {
    public var type: String = ""
    public var bodyEvaluations: Int = 0
    public var totalMs: Double = 0
    public var maxMs: Double = 0
    /// Evaluations longer than 500 us (Instruments' orange).
    public var longUpdates: Int = 0
    /// Evaluations longer than 1 ms (Instruments' red).
    public var longUpdatesOver1ms: Int = 0
    /// Evaluations / recorded frames.
    public var evaluationsPerFrame: Double = 0
    public init() {}
}

public struct LayoutFigures: Codable, Sendable, Equatable {
    public var passes: Int = 0
    public var totalMs: Double = 0
    public var maxMs: Double = 0
    public var viewsLaidOut: UInt64 = 0
    public init() {}
}

public struct InvalidationEdge: Codable, Sendable, Equatable {
    /// The written property (from the event), e.g. `FeedModel.query`.
    public var source: String = ""
    /// The invalidated view type.
    public var target: String = ""
    public var count: Int = 0
    /// The writer's function from its backtrace (first frame outside the recorder and Observation), if any.
    public var writer: String? = nil
    public init() {}
}

public struct InvalidationSource: Codable, Sendable, Equatable {
    public var source: String = ""
    public var invalidations: Int = 0
    /// Distinct target view types.
    public var targetTypes: Int = 0
    public init() {}
}
