import HitchTrace

/// Identity churn figures, present when the trace has view lifetime events.
public struct IdentityChurnFigures: Codable, Sendable, Equatable {
    /// Updates that built or tore down at least one view.
    public var updates = 0
    public var viewsBuilt = 0, viewsTornDown = 0
    /// Views built / torn down, by reason (`newIdentity`, `structuralChange`, `parentBuilt`;
    /// `identityRemoved`, `structuralChange`, `parentRemoved`).
    public var builtByReason: [String: Int] = [:], tornDownByReason: [String: Int] = [:]
    /// A view torn down and another of the same type built in the same update, under the same
    /// parent at the same position, with a different identity.
    public var replacements = 0
    /// Views built by replacements: each replacing view and everything built under it.
    public var rebuiltViews = 0
    /// Updates with at least one replacement.
    public var updatesWithReplacements = 0
    /// The most views one update rebuilt by replacement.
    public var maxRebuiltViewsPerUpdate = 0
    /// rebuiltViews / updatesWithReplacements (0 without any).
    public var meanRebuiltViewsPerReplacingUpdate = 0.0
    /// Per view type, most rebuilt first (top 20).
    public var types: [IdentityChurnType] = []
    /// Places (parent, position, type) replaced in `unstableIdentityMinimumUpdates` or more
    /// updates: likely unstable identity (most replacements first, top 20).
    public var unstableIdentity: [UnstableIdentitySlot] = []
    /// Places flagged in all (`unstableIdentity` keeps the top 20).
    public var unstableIdentitySlots = 0
    /// The updates that rebuilt the most views (top 10).
    public var worstUpdates: [ChurnUpdate] = []
    public init() {}
}

public struct IdentityChurnType: Codable, Sendable, Equatable {
    public var type = ""
    public var built = 0, tornDown = 0
    /// Replacements whose replacing view is of this type.
    public var replacements = 0
    public init() {}
}

public struct UnstableIdentitySlot: Codable, Sendable, Equatable {
    public var type = ""
    /// The parent's view type ("" when its build is not in the trace).
    public var parentType = ""
    /// Index among the parent's children; a lazy list row's index in the data.
    public var position: Int64 = 0
    /// Updates in which a view of `type` was replaced at this place.
    public var replacements = 0
    public var run = 0, firstAtMs = 0.0
    public init() {}
}

public struct ChurnUpdate: Codable, Sendable, Equatable {
    /// The run, and when the update's first build or teardown happened in it.
    public var run = 0, atMs = 0.0
    public var built = 0, tornDown = 0, replacements = 0, rebuiltViews = 0
    public init() {}
}

/// A place must be replaced in this many updates before it is flagged as unstable identity. The
/// analyzer cannot see content: a replacement can be a real change (a search whose new results put
/// other items at the top: the tuned feed's session does that in 2 of its 11 keystrokes); the same
/// place replaced again and again is ids that do not survive updates (the naive feed: every one).
public let unstableIdentityMinimumUpdates = 3
