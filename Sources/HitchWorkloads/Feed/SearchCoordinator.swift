// Tuned search: each query change starts a request with a new generation number; the pipeline
// runs off the main actor, and a result is published only if its generation is still the
// latest when it arrives on the main actor. A request that falls behind also stops early.
import Dispatch
import HitchTrace
import Synchronization

/// Runs a search request somewhere and calls back with its result (nil when it gave up as stale).
public protocol SearchRunner: Sendable {
    func run(query: String, generation: UInt64, isStale: @escaping @Sendable () -> Bool,
             completion: @escaping @Sendable (FeedSnapshot?) -> Void)
}

@MainActor
public final class SearchCoordinator {
    public private(set) var latestGeneration: UInt64 = 0
    public private(set) var publishedCount = 0
    public private(set) var droppedStaleCount = 0
    private let latest = LatestGeneration()
    private let runner: any SearchRunner
    private let publish: (FeedSnapshot) -> Void

    public init(runner: any SearchRunner, publish: @escaping (FeedSnapshot) -> Void) {
        self.runner = runner
        self.publish = publish
    }

    /// Starts a search for `query`; every earlier request becomes stale.
    public func search(_ query: String) {
        latestGeneration += 1
        let generation = latestGeneration
        latest.value.store(generation, ordering: .releasing)
        let latest = self.latest
        runner.run(query: query, generation: generation,
                   isStale: { latest.value.load(ordering: .acquiring) != generation },
                   completion: { snapshot in
                       Task { @MainActor [weak self] in self?.complete(generation: generation, snapshot: snapshot) }
                   })
    }

    /// The guard: only the latest generation's result is ever published.
    public func complete(generation: UInt64, snapshot: FeedSnapshot?) {
        guard generation == latestGeneration, let snapshot else {
            droppedStaleCount += 1
            Trace.instant("stale search result dropped", category: "feed")
            return
        }
        publishedCount += 1
        publish(snapshot)
    }
}

/// The latest generation, readable from the background pipeline between stages.
final class LatestGeneration: Sendable {
    let value = Atomic<UInt64>(0)
}

/// Runs the pipeline on one background queue (user-initiated QoS), requests in order. The rows
/// are normalized for search once, by the first request, and reused by the rest.
public struct BackgroundSearchRunner: SearchRunner {
    let items: [FeedItem]
    let queue: DispatchQueue
    private let index = LazySearchIndex()

    public init(items: [FeedItem]) {
        self.items = items
        queue = DispatchQueue(label: "feed.search", qos: .userInitiated)
    }

    public func run(query: String, generation: UInt64, isStale: @escaping @Sendable () -> Bool,
                    completion: @escaping @Sendable (FeedSnapshot?) -> Void) {
        let items = self.items, index = self.index
        queue.async {
            if isStale() { return completion(nil) }
            let searchIndex = index.index(for: items)
            completion(FeedPipeline.run(query: query, items: items, index: searchIndex, generation: generation,
                                        identity: .stable, isStale: isStale))
        }
    }
}

/// The runner's search index, built on first use.
private final class LazySearchIndex: Sendable {
    private let built = Mutex<SearchIndex?>(nil)

    func index(for items: [FeedItem]) -> SearchIndex {
        built.withLock { index in
            if let index { return index }
            let made = SearchIndex(items: items)
            index = made
            return made
        }
    }
}
