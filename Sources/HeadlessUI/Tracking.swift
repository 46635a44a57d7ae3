// Which property's write invalidated a view? `withObservationTracking`'s onChange does not say,
// so models name their writes: an @Observable model declares a `withMutation(keyPath:_:)` (the
// member the macro's setters call; the macro uses ours instead of generating one) that runs the
// registrar's mutation inside `ObservedWrite.writing(name)`. The onChange callbacks run inside
// that scope, synchronously in the writer's willSet, so they read the name from the task-local.
import HitchTrace
import Observation

public enum ObservedWrite {
    /// The property being written right now on this thread or task, e.g. `FeedModel.query`.
    @TaskLocal public static var currentProperty: TraceName?

    /// Runs `mutation` (the registrar's withMutation) with `property` as the current writer.
    public static func writing<T>(_ property: TraceName, _ mutation: () throws -> T) rethrows -> T {
        try $currentProperty.withValue(property) { try mutation() }
    }
}

/// An @Observable model whose writes are named for invalidation records. Conformers list their
/// tracked properties once and forward the macro's `withMutation` hook:
///
/// (Main-actor models: both members are main-actor isolated, as the setters that call them are.)
///
/// ```swift
/// @MainActor @Observable final class FeedModel: TracedObservable {
///     var query = ""
///     static func tracedName(of keyPath: AnyKeyPath) -> TraceName? {
///         keyPath == \FeedModel.query ? "FeedModel.query" : nil
///     }
///     func withMutation<Member, Result>(keyPath: KeyPath<FeedModel, Member>,
///                                                   _ mutation: () throws -> Result) rethrows -> Result {
///         try ObservedWrite.writing(Self.tracedName(of: keyPath) ?? "FeedModel") {
///             try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
///         }
///     }
/// }
/// ```
public protocol TracedObservable: Observable, AnyObject {
    /// The trace name of a stored property (`Type.property`), or nil for an untracked one.
    @MainActor static func tracedName(of keyPath: AnyKeyPath) -> TraceName?
}
