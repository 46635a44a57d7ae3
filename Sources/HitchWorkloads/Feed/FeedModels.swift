// The observable models. Naive: one broad model whose single `state` every view reads, so any
// write (a keystroke, a scroll step) invalidates every row. Tuned: separate properties read only
// by the views that show them, and one observable slot per thumbnail, so a decoded image
// invalidates only its own row.
import HeadlessUI
import HitchTrace
import Observation

/// Everything the naive screen shows, in one value.
public struct FeedState: Sendable {
    public var query = ""
    public var snapshot = FeedSnapshot.empty
    public var scrollOffset = 0.0
    /// The thumbnail archive's previews, once opened (the first keystroke opens it).
    public var previews: ThumbnailPreviews? = nil
}

@MainActor
@Observable
public final class NaiveFeedModel: TracedObservable {
    public var state = FeedState()

    public init() {}

    public static func tracedName(of keyPath: AnyKeyPath) -> TraceName? {
        keyPath == \NaiveFeedModel.state ? "NaiveFeedModel.state" : nil
    }

    func withMutation<Member, Result>(keyPath: KeyPath<NaiveFeedModel, Member>,
                                                  _ mutation: () throws -> Result) rethrows -> Result {
        try ObservedWrite.writing(Self.tracedName(of: keyPath) ?? "NaiveFeedModel") {
            try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
        }
    }

    func access<Member>(keyPath: KeyPath<NaiveFeedModel, Member>) {
        ObservedWrite.accessed(Self.tracedName(of: keyPath))
        _$observationRegistrar.access(self, keyPath: keyPath)
    }
}

@MainActor
@Observable
public final class TunedFeedModel: TracedObservable {
    public var query = ""
    public var snapshot = FeedSnapshot.empty
    /// True while a search for the current query is running off the main actor.
    public var isSearching = false
    /// The thumbnail archive's previews, once its thumbnail thread has opened them.
    public var previews: ThumbnailPreviews? = nil
    /// Whether the archive was asked for (read only by the model's owner: not observed).
    @ObservationIgnored var previewsRequested = false

    public init() {}

    public static func tracedName(of keyPath: AnyKeyPath) -> TraceName? {
        switch keyPath {
        case \TunedFeedModel.query: "TunedFeedModel.query"
        case \TunedFeedModel.snapshot: "TunedFeedModel.snapshot"
        case \TunedFeedModel.isSearching: "TunedFeedModel.isSearching"
        case \TunedFeedModel.previews: "TunedFeedModel.previews"
        default: nil
        }
    }

    func withMutation<Member, Result>(keyPath: KeyPath<TunedFeedModel, Member>,
                                                  _ mutation: () throws -> Result) rethrows -> Result {
        try ObservedWrite.writing(Self.tracedName(of: keyPath) ?? "TunedFeedModel") {
            try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
        }
    }

    func access<Member>(keyPath: KeyPath<TunedFeedModel, Member>) {
        ObservedWrite.accessed(Self.tracedName(of: keyPath))
        _$observationRegistrar.access(self, keyPath: keyPath)
    }
}

/// One row's thumbnail at display size, filled in when its off-main decode finishes.
@MainActor
@Observable
public final class ThumbnailSlot: TracedObservable {
    public var pixels: ImagePixels?

    public init() {}

    public static func tracedName(of keyPath: AnyKeyPath) -> TraceName? {
        keyPath == \ThumbnailSlot.pixels ? "ThumbnailSlot.pixels" : nil
    }

    func withMutation<Member, Result>(keyPath: KeyPath<ThumbnailSlot, Member>,
                                                  _ mutation: () throws -> Result) rethrows -> Result {
        try ObservedWrite.writing(Self.tracedName(of: keyPath) ?? "ThumbnailSlot") {
            try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
        }
    }

    func access<Member>(keyPath: KeyPath<ThumbnailSlot, Member>) {
        ObservedWrite.accessed(Self.tracedName(of: keyPath))
        _$observationRegistrar.access(self, keyPath: keyPath)
    }
}
