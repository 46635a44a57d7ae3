// Runs the feed session on the headless runtime in real time: a display link at the chosen
// refresh rate, scripted input delivered at the start of the frame it arrives in, and the
// variant's pipeline. The caller owns the recorder (start it after `prepare`).
import HeadlessUI
import HitchTrace

public enum FeedVariant: String, Sendable, CaseIterable {
    case naive, tuned
}

public struct FeedConfiguration: Sendable {
    public var variant: FeedVariant
    public var refreshRateHz: Double
    public var seconds: Double
    public var rows: Int
    public var seed: UInt64
    public var captureWriterStacks: Bool
    /// The side, in pixels, of the pictures in the thumbnail archive (`ThumbnailArchive`).
    public var previewSide: Int

    public init(variant: FeedVariant, refreshRateHz: Double = 120, seconds: Double = 12, rows: Int = 10_000,
                seed: UInt64 = 1, captureWriterStacks: Bool = false, previewSide: Int = ThumbnailArchive.defaultPreviewSide) {
        self.variant = variant
        self.refreshRateHz = refreshRateHz
        self.seconds = seconds
        self.rows = rows
        self.seed = seed
        self.captureWriterStacks = captureWriterStacks
        self.previewSide = previewSide
    }
}

public struct FeedRunSummary: Sendable {
    public var frames: Int
    public var presentedFrames: Int
    public var keystrokes: Int
    public var publishedSnapshots: Int
    public var staleResultsDropped: Int
    public var finalQuery: String
    public var finalResultCount: Int
    public var durationSeconds: Double
}

@MainActor
public final class FeedWorkload {
    public let configuration: FeedConfiguration
    public let items: [FeedItem]
    let script: FeedScript
    /// The screen before the first keystroke (every row), as the app would have shown it already.
    let initialSnapshot: FeedSnapshot
    /// The previews the results header shows, on disk until the first keystroke opens them.
    let archive: ThumbnailArchive

    /// Generates the data (rows, PNG thumbnails and the thumbnail archive) and the first screen's
    /// snapshot; not part of the recorded session.
    public init(configuration: FeedConfiguration) {
        self.configuration = configuration
        items = FeedDataGenerator.makeItems(count: configuration.rows, seed: configuration.seed)
        archive = ThumbnailArchive(pictureCount: FeedDataGenerator.pictureCount, seed: configuration.seed, side: configuration.previewSide)
        script = FeedScript.make(seconds: configuration.seconds, seed: configuration.seed)
        initialSnapshot = FeedPipeline.run(query: "", items: items, generation: 0,
                                           identity: configuration.variant == .naive ? .regeneratedPerSnapshot : .stable)!
    }

    /// Runs the session for `configuration.seconds` of wall time.
    public func run() -> FeedRunSummary {
        let hostConfiguration = HostConfiguration(refreshRateHz: configuration.refreshRateHz,
                                                  captureWriterStacks: configuration.captureWriterStacks)
        let session = makeSession(hostConfiguration: hostConfiguration,
                                  searchRunner: BackgroundSearchRunner(items: items), thumbnails: ThumbnailCache())
        session.host.onFrame = { session.beginFrame(elapsedSeconds: $0.elapsedSeconds) }
        let loop = session.host.run(seconds: configuration.seconds)
        session.endInteractions()
        let state = session.summaryState()
        return FeedRunSummary(frames: loop.frames, presentedFrames: loop.presentedFrames, keystrokes: session.keystrokes,
                              publishedSnapshots: state.published, staleResultsDropped: state.dropped,
                              finalQuery: state.query, finalResultCount: state.results, durationSeconds: loop.durationSeconds)
    }

    /// The session without a frame loop: the host, and the input for a frame at a given time.
    /// `run()` drives it from the display link; `hitch bench ui` steps it on a fixed frame clock.
    /// `searchRunner` and `thumbnails` are the tuned variant's (the naive one does both inline).
    public func makeSession(hostConfiguration: HostConfiguration, searchRunner: any SearchRunner,
                            thumbnails: ThumbnailCache) -> FeedSession {
        let position = ScrollPosition()
        let session: FeedSession
        switch configuration.variant {
        case .naive:
            let model = NaiveFeedModel()
            let items = self.items, archive = self.archive
            var published = 0
            model.state.snapshot = initialSnapshot
            let host = ViewHost(root: NaiveFeedScreen(model: model, position: position), configuration: hostConfiguration)
            var generation: UInt64 = 0
            session = FeedSession(host: host, position: position, script: script, typeCharacter: { character in
                // Naive: the whole pipeline, synchronously, on the main actor, for every keystroke;
                // and on the first, the thumbnail archive for the results header (a hang).
                if model.state.previews == nil { model.state.previews = ThumbnailPreviews(pictures: archive.load()) }
                model.state.query.append(character)
                generation += 1
                model.state.snapshot = FeedPipeline.run(query: model.state.query, items: items, generation: generation,
                                                        identity: .regeneratedPerSnapshot)!
                published += 1
            }, setScrollOffset: { offset in
                if model.state.scrollOffset != offset { model.state.scrollOffset = offset }
            }, summaryState: { (model.state.query, model.state.snapshot.rows.count, published, 0) })
        case .tuned:
            let model = TunedFeedModel()
            model.snapshot = initialSnapshot
            let retired = RetiredSnapshots(runner: searchRunner)
            let coordinator = SearchCoordinator(runner: searchRunner) { snapshot in
                retired.retire(model.snapshot)
                model.snapshot = snapshot
                model.isSearching = false
            }
            let host = ViewHost(root: TunedFeedScreen(model: model, thumbnails: thumbnails, position: position),
                                configuration: hostConfiguration)
            let archive = self.archive
            session = FeedSession(host: host, position: position, script: script, typeCharacter: { character in
                // The first keystroke opens the thumbnail archive on the thumbnail thread; the header
                // shows the top result's preview once it is in.
                if !model.previewsRequested {
                    model.previewsRequested = true
                    thumbnails.loadPreviews(from: archive) { model.previews = $0 }
                }
                model.query.append(character)
                if !model.isSearching { model.isSearching = true }
                coordinator.search(model.query)
            }, setScrollOffset: { offset in position.offset = offset },
               summaryState: { (model.query, model.snapshot.rows.count, coordinator.publishedCount, coordinator.droppedStaleCount) },
               frameStarted: retired.frameStarted)
        }
        return session
    }
}

/// One feed session's input side: scripted keystrokes and scroll physics, delivered at the start
/// of the frame they arrive in, with the typing and scroll interactions marked in the trace.
@MainActor
public final class FeedSession {
    public let host: ViewHost
    let position: ScrollPosition
    let script: FeedScript
    /// The variant's answers to: what does a keystroke do, and where does the scroll offset go.
    let typeCharacter: (Character) -> Void
    let setScrollOffset: (Double) -> Void
    let summaryState: () -> (query: String, results: Int, published: Int, dropped: Int)
    /// The variant's own per-frame housekeeping, before the frame's input.
    let frameStarted: () -> Void
    private var physics = ScrollPhysics()
    private var nextEvent = 0
    public private(set) var keystrokes = 0
    private var typing: InteractionToken?
    private var scrolling: InteractionToken?
    private var lastFrameSeconds = 0.0

    init(host: ViewHost, position: ScrollPosition, script: FeedScript, typeCharacter: @escaping (Character) -> Void,
         setScrollOffset: @escaping (Double) -> Void,
         summaryState: @escaping () -> (query: String, results: Int, published: Int, dropped: Int),
         frameStarted: @escaping () -> Void = {}) {
        self.host = host
        self.position = position
        self.script = script
        self.typeCharacter = typeCharacter
        self.setScrollOffset = setScrollOffset
        self.summaryState = summaryState
        self.frameStarted = frameStarted
    }

    /// True once every scripted event has been delivered and the scroll has come to rest.
    public var isFinished: Bool { nextEvent >= script.events.count && !physics.isMoving }

    /// The input for the frame starting `elapsedSeconds` into the session (the host's `onFrame`).
    public func beginFrame(elapsedSeconds now: Double) {
        frameStarted()
        let frameSeconds = now - lastFrameSeconds
        lastFrameSeconds = now
        if typing == nil, now >= script.typingInterval.lowerBound, now < script.typingInterval.upperBound {
            typing = Trace.beginInteraction("typing")
        } else if let token = typing, now >= script.typingInterval.upperBound {
            Trace.endInteraction(token)
            typing = nil
        }
        // Input that arrived since the last frame is handled now, in order.
        while nextEvent < script.events.count, script.events[nextEvent].seconds <= now {
            let event = script.events[nextEvent]
            nextEvent += 1
            switch event.action {
            case .type(let character):
                Trace.instant("keystroke", category: HitchCategory.input)
                keystrokes += 1
                typeCharacter(character)
            case .drag(let delta):
                if scrolling == nil { scrolling = Trace.beginInteraction("scroll") }
                physics.drag(delta, maxOffset: position.maxOffset)
            case .release(let velocity):
                physics.release(velocity: velocity)
            }
        }
        physics.advance(seconds: frameSeconds, maxOffset: position.maxOffset)
        setScrollOffset(physics.offset)
        if let token = scrolling, !physics.isMoving {
            Trace.endInteraction(token)
            scrolling = nil
        }
    }

    func endInteractions() {
        if let typing { Trace.endInteraction(typing) }
        if let scrolling { Trace.endInteraction(scrolling) }
        typing = nil
        scrolling = nil
    }

    /// The query typed so far, the rows it found, snapshots published and stale results dropped.
    public var summary: (query: String, results: Int, published: Int, dropped: Int) { summaryState() }
}
