import Foundation
import HeadlessUI
import Synchronization
import Testing
@testable import HitchWorkloads
#if canImport(Glibc)
import Glibc
#endif

@Suite struct FeedDataTests {
    @Test func sameSeedSameRows() {
        let a = FeedDataGenerator.makeItems(count: 300, seed: 42, thumbnailPoolSize: 3, thumbnailSide: 16)
        let b = FeedDataGenerator.makeItems(count: 300, seed: 42, thumbnailPoolSize: 3, thumbnailSide: 16)
        let c = FeedDataGenerator.makeItems(count: 300, seed: 43, thumbnailPoolSize: 3, thumbnailSide: 16)
        #expect(a == b)
        #expect(a != c)
        #expect(Set(a.map(\.id)).count == 300)
        #expect(a.allSatisfy { (try? PNG.decode($0.thumbnailPNG))?.width == 16 })
    }

    @Test func pipelineFiltersSortsAndGroups() throws {
        let items = FeedDataGenerator.makeItems(count: 2_000, seed: 5, thumbnailPoolSize: 2, thumbnailSide: 8)
        let snapshot = try #require(FeedPipeline.run(query: "Swift", items: items, generation: 1, identity: .stable))
        #expect(!snapshot.rows.isEmpty)
        let byID = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0) })
        for row in snapshot.rows {
            let item = try #require(byID[row.itemID])
            let text = FeedPipeline.normalize([item.title, item.author, item.tags.joined(separator: " "), item.snippet].joined(separator: " "))
            #expect(String(decoding: text, as: UTF8.self).contains("swift"))
        }
        let days = snapshot.rows.map { byID[$0.itemID]!.day }
        #expect(days == days.sorted(by: >))
        #expect(snapshot.rows.filter { $0.sectionHeader != nil }.count == snapshot.sectionCount)
        // Stable ids are item ids; regenerated ids are new for every snapshot.
        #expect(snapshot.rows.allSatisfy { $0.id == $0.itemID })
        let first = try #require(FeedPipeline.run(query: "swift", items: items, generation: 1, identity: .regeneratedPerSnapshot))
        let second = try #require(FeedPipeline.run(query: "swift", items: items, generation: 2, identity: .regeneratedPerSnapshot))
        #expect(Set(first.rows.map(\.id)).isDisjoint(with: second.rows.map(\.id)))
    }

    @Test func anIndexFindsWhatNormalizingEveryRowFinds() throws {
        let items = FeedDataGenerator.makeItems(count: 1_500, seed: 8, thumbnailPoolSize: 2, thumbnailSide: 8)
        let index = SearchIndex(items: items)
        for query in ["swift", "Café la", "zzz"] {
            let plain = try #require(FeedPipeline.run(query: query, items: items, generation: 1, identity: .stable))
            let indexed = try #require(FeedPipeline.run(query: query, items: items, index: index, generation: 1, identity: .stable))
            #expect(plain.rows == indexed.rows)
            #expect(plain.sectionCount == indexed.sectionCount)
        }
    }

    @Test func normalizeFoldsCaseAndDiacritics() {
        #expect(String(decoding: FeedPipeline.normalize("  Résumé,  NAÏVE café "), as: UTF8.self) == "resume naive cafe")
    }

    @Test func flingDeceleratesAndStops() {
        var physics = ScrollPhysics()
        physics.drag(100, maxOffset: 10_000)
        physics.release(velocity: 3000)
        var previous = physics.offset
        var steps = 0
        while physics.isMoving && steps < 2_000 {
            physics.advance(seconds: 1.0 / 120, maxOffset: 10_000)
            #expect(physics.offset >= previous)
            previous = physics.offset
            steps += 1
        }
        #expect(!physics.isMoving)
        // v / ln(1/0.998) / 1000 = 3000 / 2.002 ≈ 1499 points of coasting.
        #expect(abs(physics.offset - 100 - 1499) < 20)
    }
}

/// A runner that holds every request until the test completes it, in any order.
final class ManualSearchRunner: SearchRunner, @unchecked Sendable {
    // Only touched from the test's main actor; the protocol requires Sendable.
    struct Request { var query: String; var generation: UInt64; var isStale: @Sendable () -> Bool; var completion: @Sendable (FeedSnapshot?) -> Void }
    var requests: [Request] = []
    let items: [FeedItem]
    init(items: [FeedItem]) { self.items = items }

    func run(query: String, generation: UInt64, isStale: @escaping @Sendable () -> Bool,
             completion: @escaping @Sendable (FeedSnapshot?) -> Void) {
        requests.append(Request(query: query, generation: generation, isStale: isStale, completion: completion))
    }

    func result(_ index: Int) -> FeedSnapshot {
        let request = requests[index]
        return FeedPipeline.run(query: request.query, items: items, generation: request.generation, identity: .stable)!
    }

    /// Snapshots handed back to be freed, and whether each one's rows were held by nothing else.
    var released: [(query: String, rowsHeldOnlyHere: Bool)] = []

    func release(_ snapshots: consuming [FeedSnapshot]) {
        var snapshots = consume snapshots
        for index in snapshots.indices where !snapshots[index].rows.isEmpty {
            // Writing to shared rows copies them first; rows held only here are written in place.
            let before = snapshots[index].rows.withUnsafeBufferPointer { $0.baseAddress }
            snapshots[index].rows[0].title += "."
            let after = snapshots[index].rows.withUnsafeBufferPointer { $0.baseAddress }
            released.append((snapshots[index].query, before == after))
        }
    }
}

@MainActor
@Suite struct GenerationGuardTests {
    @Test func outOfOrderCompletionsNeverPublishStaleResults() {
        let items = FeedDataGenerator.makeItems(count: 500, seed: 9, thumbnailPoolSize: 2, thumbnailSide: 8)
        let runner = ManualSearchRunner(items: items)
        var published: [(snapshot: FeedSnapshot, latestQuery: String)] = []
        var currentQuery = ""
        let coordinator = SearchCoordinator(runner: runner) { published.append(($0, currentQuery)) }
        for query in ["s", "sw", "swi", "swif"] {
            currentQuery = query
            coordinator.search(query)
        }
        #expect(runner.requests.prefix(3).allSatisfy { $0.isStale() })
        #expect(!runner.requests[3].isStale())
        // Completions arrive out of order: newest first, then the older ones.
        for index in [3, 0, 2, 1] {
            coordinator.complete(generation: runner.requests[index].generation, snapshot: runner.result(index))
        }
        #expect(published.count == 1)
        #expect(coordinator.droppedStaleCount == 3)
        // Typing more, and an old result landing after the new request started.
        currentQuery = "swift"
        coordinator.search("swift")
        coordinator.complete(generation: runner.requests[2].generation, snapshot: runner.result(2))
        coordinator.complete(generation: runner.requests[4].generation, snapshot: runner.result(4))
        coordinator.complete(generation: runner.requests[4].generation, snapshot: nil)
        #expect(published.count == 2)
        for entry in published {
            #expect(entry.snapshot.query == entry.latestQuery)
        }
        #expect(published.last?.snapshot.query == "swift")
    }

    @Test func staleRequestsStopEarly() {
        let items = FeedDataGenerator.makeItems(count: 50, seed: 1, thumbnailPoolSize: 1, thumbnailSide: 8)
        #expect(FeedPipeline.run(query: "a", items: items, generation: 1, identity: .stable, isStale: { true }) == nil)
    }
}

@MainActor
@Suite struct FeedScreenTests {
    @Test func tunedKeystrokeInvalidatesOnlyTheSearchBar() throws {
        let items = FeedDataGenerator.makeItems(count: 400, seed: 2, thumbnailPoolSize: 2, thumbnailSide: 16)
        let model = TunedFeedModel()
        model.snapshot = try #require(FeedPipeline.run(query: "", items: items, generation: 0, identity: .stable))
        let host = ViewHost(root: TunedFeedScreen(model: model, thumbnails: ThumbnailCache(), position: ScrollPosition()),
                            configuration: HostConfiguration(viewport: Size(width: 390, height: 600)))
        host.recordsInvalidations = true
        _ = host.update()
        host.resetStatistics()
        model.query = "s"
        _ = host.update()
        #expect(host.statistics.invalidations.map(\.targetType) == ["TunedSearchBar"])
        #expect(host.statistics.invalidations.map(\.source) == ["TunedFeedModel.query"])
        #expect(host.statistics.bodyEvaluations["FeedRow"] == nil)
    }

    @Test func naiveScrollWriteInvalidatesEveryVisibleRow() throws {
        let items = FeedDataGenerator.makeItems(count: 400, seed: 2, thumbnailPoolSize: 2, thumbnailSide: 16)
        let model = NaiveFeedModel()
        model.state.snapshot = try #require(FeedPipeline.run(query: "", items: items, generation: 0, identity: .regeneratedPerSnapshot))
        let position = ScrollPosition()
        let host = ViewHost(root: NaiveFeedScreen(model: model, position: position),
                            configuration: HostConfiguration(viewport: Size(width: 390, height: 600)))
        host.recordsInvalidations = true
        _ = host.update()
        let rows = position.materializedRows.count
        #expect(rows > 3)
        host.resetStatistics()
        model.state.scrollOffset = 5
        _ = host.update()
        let rowInvalidations = host.statistics.invalidations.filter { $0.targetType == "FeedRow" }
        #expect(rowInvalidations.count == rows)
        #expect(Set(rowInvalidations.map(\.source)) == ["NaiveFeedModel.state"])
        #expect(host.statistics.bodyEvaluations["FeedRow"] == rows)
    }
}

/// The runtime's work after a new snapshot and a decoded thumbnail is what changed on screen.
@MainActor
@Suite struct FeedRuntimeWorkTests {
    func makeTunedScreen(rows: Int) throws -> (ViewHost, TunedFeedModel, ThumbnailCache, ScrollPosition, [FeedItem]) {
        let items = FeedDataGenerator.makeItems(count: rows, seed: 3, thumbnailPoolSize: 2, thumbnailSide: 16)
        let model = TunedFeedModel()
        model.snapshot = try #require(FeedPipeline.run(query: "", items: items, generation: 0, identity: .stable))
        let thumbnails = ThumbnailCache(deferredDecode: { _ in ImagePixels(width: 1, height: 1, rgba: [0, 0, 0, 255]) })
        let position = ScrollPosition()
        let host = ViewHost(root: TunedFeedScreen(model: model, thumbnails: thumbnails, position: position),
                            configuration: HostConfiguration(viewport: Size(width: 390, height: 600)))
        _ = host.update()
        host.resetStatistics()
        return (host, model, thumbnails, position, items)
    }

    @Test func aSnapshotEvaluatesOnlyTheVisibleRows() throws {
        let (host, model, _, position, items) = try makeTunedScreen(rows: 3_000)
        model.snapshot = try #require(FeedPipeline.run(query: "swift", items: items, generation: 1, identity: .stable))
        _ = host.update()
        let visible = position.materializedRows.count
        #expect(visible > 3)
        #expect((host.statistics.bodyEvaluations["FeedRow"] ?? 0) <= visible)
        #expect(host.nodeCount < 40 * visible)
    }

    @Test func aDeliveredThumbnailInvalidatesOnlyItsRow() throws {
        let (host, _, thumbnails, position, _) = try makeTunedScreen(rows: 500)
        let delivered = thumbnails.deliverPending()
        #expect(delivered == position.materializedRows.count)
        _ = host.update()
        #expect(host.statistics.bodyEvaluations["FeedRow"] == delivered)
        host.resetStatistics()
        #expect(thumbnails.deliverPending() == 0)
        _ = host.update()
        #expect(host.statistics.bodyEvaluations.isEmpty)
    }

    @Test func aSteppedSessionTypesTheQueryAndScrolls() {
        let workload = FeedWorkload(configuration: FeedConfiguration(variant: .tuned, seconds: 6, rows: 600, previewSide: 32))
        let session = workload.makeSession(hostConfiguration: HostConfiguration(), searchRunner: ManualSearchRunner(items: workload.items),
                                           thumbnails: ThumbnailCache(deferredDecode: { _ in nil }))
        for frame in 0..<(6 * 120) {
            session.beginFrame(elapsedSeconds: Double(frame) / 120)
            _ = session.host.update()
        }
        #expect(session.keystrokes == FeedScript.defaultQuery.count)
        #expect(session.summary.query == FeedScript.defaultQuery)
    }
}

/// The tuned feed's background work: off the main thread, below it, and freeing old results there.
@MainActor
@Suite struct BackgroundWorkTests {
    // The worker's wake-up waits for the main actor, which the other @MainActor suites hold with
    // whole feed sessions in a full run (the test took 8 minutes there): the limit only catches a
    // wake-up that never comes, inside the run's own deadline (scripts/test.sh).
    @Test(.timeLimit(.minutes(20))) func aWorkerRunsJobsInOrderOffTheMainThreadAsBackgroundWork() async {
        let worker = BackgroundWorker(name: "test.worker")
        let log = Mutex<[String]>([])
        // Queued from the main thread: the worker is woken once the main queue is free again.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for index in 0..<3 { worker.async { log.withLock { $0.append("job \(index)") } } }
            worker.async {
                #if os(Linux)
                // nice 19 (BackgroundWorker.swift), or SCHED_IDLE (5).
                let background = sched_getscheduler(0) == 5 || getpriority(__priority_which_t(0), 0) == 19
                #else
                let background = true
                #endif
                log.withLock { $0.append("main \(Thread.isMainThread), background \(background)") }
                done.resume()
            }
        }
        #expect(log.withLock { $0 } == ["job 0", "job 1", "job 2", "main false, background true"])
    }

    @Test func aReplacedResultIsFreedByTheRunnerOnceTheViewGraphHasLetGoOfIt() async {
        let workload = FeedWorkload(configuration: FeedConfiguration(variant: .tuned, seconds: 4, rows: 600, previewSide: 32))
        let runner = ManualSearchRunner(items: workload.items)
        let session = workload.makeSession(hostConfiguration: HostConfiguration(), searchRunner: runner,
                                           thumbnails: ThumbnailCache(deferredDecode: { _ in nil }))
        var frame = 0
        func step() {
            session.beginFrame(elapsedSeconds: Double(frame) / 120)
            _ = session.host.update()
            frame += 1
        }
        /// Completes the latest request and lets its result arrive on the main actor.
        func completeLatest() async {
            let latest = runner.requests.count - 1
            runner.requests[latest].completion(runner.result(latest))
            while session.summary.published < latest + 1 { await Task.yield() }
        }
        while runner.requests.count < 1 { step() }
        await completeLatest()  // replaces the first screen, which the workload also keeps
        while runner.requests.count < 2 { step() }
        await completeLatest()  // replaces the first result, held by the screen alone
        step()  // this frame shows the new result: the old one is still being swapped out of the graph
        #expect(runner.released.map(\.query) == [""])
        step()  // the frame after: the old result is handed to the runner
        #expect(runner.released.map(\.query) == ["", "s"])
        // The workload's first screen is still shared; the replaced result was held by nothing else.
        #expect(runner.released.map(\.rowsHeldOnlyHere) == [false, true])
    }
}
