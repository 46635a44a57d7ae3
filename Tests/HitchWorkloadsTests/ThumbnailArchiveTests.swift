import Foundation
import HeadlessUI
import HitchTrace
import Testing
@testable import HitchWorkloads

/// The feed's thumbnail archive: written when the workload prepares its data, opened at the first
/// keystroke (the naive variant on the main actor, the tuned one where its thumbnails decode), and
/// shown as the top result's preview in the results header.
@MainActor
@Suite struct ThumbnailArchiveTests {
    static let side = Double(ThumbnailArchive.headerSide)

    @Test func everyPictureDecodesAtTheHeadersSize() throws {
        let archive = ThumbnailArchive(pictureCount: 3, seed: 7, side: 40)
        #expect(FileManager.default.fileExists(atPath: archive.path))
        let previews = archive.load()
        #expect(previews.count == 3)
        #expect(previews.allSatisfy { $0?.width == ThumbnailArchive.headerSide && $0?.height == ThumbnailArchive.headerSide })
        // The same art as the rows' thumbnails: picture 1 of seed 7, drawn at 40 px.
        let drawn = ThumbnailArt.draw(side: 40, seed: FeedDataGenerator.pictureSeed(7, 1)).resized(width: ThumbnailArchive.headerSide, height: ThumbnailArchive.headerSide)
        #expect(previews[1]?.rgba == drawn.pixels)
    }

    /// Whether the header (the screen's first row of views) shows an image at the preview's size.
    static func headerShowsAPreview(_ host: ViewHost) -> Bool {
        host.layoutFrames().contains { $0.type == "Image" && $0.frame.size.width == side && $0.frame.size.height == side }
    }

    /// Steps `session` on a 120 Hz frame clock from `frame` until it has typed `keystrokes` characters.
    static func type(_ session: FeedSession, keystrokes: Int, from frame: inout Int, after: () -> Void = {}) {
        while session.keystrokes < keystrokes {
            after()
            session.beginFrame(elapsedSeconds: Double(frame) / 120)
            _ = session.host.update()
            frame += 1
        }
    }

    @Test func theNaiveFeedOpensItOnTheMainActorAtTheFirstKeystroke() throws {
        let workload = FeedWorkload(configuration: FeedConfiguration(variant: .naive, seconds: 6, rows: 300, previewSide: 32))
        let session = workload.makeSession(hostConfiguration: HostConfiguration(), searchRunner: ManualSearchRunner(items: workload.items),
                                           thumbnails: ThumbnailCache(deferredDecode: { _ in nil }))
        var frame = 0
        Self.type(session, keystrokes: 0, from: &frame)
        _ = session.host.update()
        #expect(!Self.headerShowsAPreview(session.host))
        // The frame of the first keystroke opened it, on this thread, before it returned.
        Self.type(session, keystrokes: 1, from: &frame)
        #expect(Self.headerShowsAPreview(session.host))
    }

    @Test func theTunedFeedOpensItWhereItsThumbnailsDecode() throws {
        let workload = FeedWorkload(configuration: FeedConfiguration(variant: .tuned, seconds: 6, rows: 300, previewSide: 32))
        let runner = ManualSearchRunner(items: workload.items)
        let thumbnails = ThumbnailCache(deferredDecode: { _ in nil })
        let session = workload.makeSession(hostConfiguration: HostConfiguration(), searchRunner: runner, thumbnails: thumbnails)
        var frame = 0
        Self.type(session, keystrokes: 1, from: &frame)
        // Asked for, not delivered: the header waits for the thumbnail side.
        _ = session.host.update()
        #expect(!Self.headerShowsAPreview(session.host))
        thumbnails.deliverPending()
        _ = session.host.update()
        // Delivered, but the header shows the top result's: none until the search's result is in.
        runner.requests.last.map { $0.completion(runner.result(runner.requests.count - 1)) }
        for _ in 0..<3 {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
            _ = session.host.update()
        }
        #expect(Self.headerShowsAPreview(session.host))
    }
}
