// Which property's write invalidated a view? `withObservationTracking`'s onChange does not say,
// so models name their writes: an @Observable model declares a `withMutation(keyPath:_:)` (the
// member the macro's setters call; the macro uses ours instead of generating one) that runs the
// registrar's mutation inside `ObservedWrite.writing(name)`. The onChange callbacks run inside
// that scope, synchronously in the writer's willSet, so they read the name from the task-local.
#if canImport(Glibc)
import Glibc
#endif
import HitchTrace
import Observation

public enum ObservedWrite {
    /// The property being written right now on this thread or task, e.g. `FeedModel.query`.
    @TaskLocal public static var currentProperty: TraceName?

    /// Runs `mutation` (the registrar's withMutation) with `property` as the current writer.
    public static func writing<T>(_ property: TraceName, _ mutation: () throws -> T) rethrows -> T {
        try $currentProperty.withValue(property) { try mutation() }
    }

    /// In-place mutations (`model.state.offset = 1`) go through the macro's `_modify`, which
    /// calls `access(keyPath:)` and then the registrar's willSet directly, not `withMutation`.
    /// Models that also forward `access` here let the invalidation name that property: the
    /// last property accessed on this thread right before the willSet.
    public static func accessed(_ property: TraceName?) {
        lastAccessedSlot().pointee = property
    }

    /// Forgets the last access. Called after every body evaluation: a body's reads are never the
    /// writer of a later invalidation, and a stale name would blame a model (even one from an
    /// earlier session on this thread) for a write it did not make; unnamed is "unknown", not wrong.
    static func forgetLastAccess() {
        if let existing = pthread_getspecific(slotKey) { existing.assumingMemoryBound(to: TraceName?.self).pointee = nil }
    }

    /// The writer for an invalidation happening now on this thread.
    static var effectiveWriter: TraceName? {
        currentProperty ?? lastAccessedSlot().pointee
    }

    private static let slotKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            #if canImport(Glibc)
            guard let pointer else { return }
            #endif
            let slot = pointer.assumingMemoryBound(to: TraceName?.self)
            slot.deinitialize(count: 1)
            slot.deallocate()
        }
        return key
    }()

    private static func lastAccessedSlot() -> UnsafeMutablePointer<TraceName?> {
        if let existing = pthread_getspecific(slotKey) {
            return existing.assumingMemoryBound(to: TraceName?.self)
        }
        let slot = UnsafeMutablePointer<TraceName?>.allocate(capacity: 1)
        slot.initialize(to: nil)
        pthread_setspecific(slotKey, slot)
        return slot
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
///     func access<Member>(keyPath: KeyPath<FeedModel, Member>) {
///         ObservedWrite.accessed(Self.tracedName(of: keyPath))
///         _$observationRegistrar.access(self, keyPath: keyPath)
///     }
/// }
/// ```
public protocol TracedObservable: Observable, AnyObject {
    /// The trace name of a stored property (`Type.property`), or nil for an untracked one.
    @MainActor static func tracedName(of keyPath: AnyKeyPath) -> TraceName?
}
