// Tuned search: each query change starts a request with a new generation number; the pipeline
// runs off the main actor, and a result is published only if its generation is still the
// latest when it arrives on the main actor. A request that falls behind also stops early.
import HitchTrace
import Synchronization

/// Runs a search request somewhere and calls back with its result (nil when it gave up as stale).
public protocol SearchRunner: Sendable {
    func run(query: String, generation: UInt64, isStale: @escaping @Sendable () -> Bool,
             completion: @escaping @Sendable (FeedSnapshot?) -> Void)
    /// Frees snapshots the screen no longer shows. By default they are freed on the caller's
    /// thread; a runner with a thread of its own frees them there, off the main thread.
    func release(_ snapshots: consuming [FeedSnapshot])
}

extension SearchRunner {
    public func release(_ snapshots: consuming [FeedSnapshot]) {}
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

/// Snapshots the screen has replaced, held until the view graph has let go of them and then freed
/// by the search runner. A result of thousands of rows takes milliseconds to free (every row's
/// strings and image bytes); freed where the view graph drops its last reference, that lands in
/// the main thread's layout of the frame that shows the next result.
@MainActor
final class RetiredSnapshots {
    private let runner: any SearchRunner
    private var sinceLastFrame: [FeedSnapshot] = []
    private var beforeLastFrame: [FeedSnapshot] = []

    init(runner: any SearchRunner) { self.runner = runner }

    /// Keeps `snapshot`, just replaced on screen, until it is safe to free off the main thread.
    func retire(_ snapshot: FeedSnapshot) { sinceLastFrame.append(snapshot) }

    /// At the start of every frame. A snapshot replaced before the previous frame began was
    /// swapped out of the view graph by that frame, so these are the last references to it.
    func frameStarted() {
        if !beforeLastFrame.isEmpty {
            var ready: [FeedSnapshot] = []
            swap(&ready, &beforeLastFrame)
            runner.release(consume ready)
        }
        swap(&beforeLastFrame, &sinceLastFrame)
    }
}

/// The latest generation, readable from the background pipeline between stages.
final class LatestGeneration: Sendable {
    let value = Atomic<UInt64>(0)
}

/// Runs the pipeline on one background thread that never preempts the main thread
/// (`BackgroundWorker`), requests in order. The rows are normalized for search once, by the first
/// request, and reused by the rest.
public struct BackgroundSearchRunner: SearchRunner {
    let items: [FeedItem]
    let worker: BackgroundWorker
    private let index = LazySearchIndex()

    public init(items: [FeedItem]) {
        self.items = items
        worker = BackgroundWorker(name: "feed.search")
    }

    public func run(query: String, generation: UInt64, isStale: @escaping @Sendable () -> Bool,
                    completion: @escaping @Sendable (FeedSnapshot?) -> Void) {
        let items = self.items, index = self.index
        worker.async {
            if isStale() { return completion(nil) }
            let searchIndex = index.index(for: items)
            completion(FeedPipeline.run(query: query, items: items, index: searchIndex, generation: generation,
                                        identity: .stable, isStale: isStale))
        }
    }

    /// Frees the snapshots on the search thread, which allocated their rows (so the frees also
    /// stay in that thread's malloc arena).
    public func release(_ snapshots: consuming [FeedSnapshot]) {
        let retired = RetiredRows(consume snapshots)
        worker.async { retired.free() }
    }
}

/// Snapshots handed to the search thread to be freed there.
private final class RetiredRows: Sendable {
    private let snapshots: Mutex<[FeedSnapshot]>
    init(_ snapshots: consuming [FeedSnapshot]) { self.snapshots = Mutex(snapshots) }
    func free() { snapshots.withLock { $0 = [] } }
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
