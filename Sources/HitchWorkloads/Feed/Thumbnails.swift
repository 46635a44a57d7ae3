// Thumbnail decoding. Both variants use the same decoder: inflate + unfilter (image decode), then
// a box-filter resize to the display size (image resize). Naive calls it inside the row body on
// every evaluation; tuned calls it once per row on a background thread and caches the result.
import HeadlessUI
import HitchTrace

public enum ThumbnailDecoder {
    /// Display size of a row's thumbnail, in points (one point is one pixel here).
    public static let displaySide = 56

    /// Decodes a PNG and resizes it to the display size; a broken image decodes to nil.
    public static func decodeForDisplay(_ png: [UInt8]) -> ImagePixels? {
        let decoded = Trace.interval("image decode", category: .stage) { try? PNG.decode(png) }
        guard let decoded else { return nil }
        return Trace.interval("image resize", category: .stage) {
            let small = decoded.resized(width: displaySide, height: displaySide)
            return ImagePixels(width: small.width, height: small.height, rgba: small.pixels)
        }
    }
}

/// Tuned: decoded thumbnails at display size, by item id; misses are decoded on a background
/// thread (`BackgroundWorker`) and published to the row's slot on the main actor.
@MainActor
public final class ThumbnailCache {
    private enum Delivery {
        case background(BackgroundWorker)
        /// Decoded when asked, delivered by `deliverPending()` (a benchmark's fixed frame clock).
        case deferred(decode: ([UInt8]) -> ImagePixels?)
    }

    private var slots: [Int: ThumbnailSlot] = [:]
    private let delivery: Delivery
    private var pending: [(slot: ThumbnailSlot, pixels: ImagePixels?)] = []
    private var pendingPreviews: (() -> Void)?

    public init() {
        delivery = .background(BackgroundWorker(name: "feed.thumbnails"))
    }

    /// A cache that decodes with `decode` at once but publishes only when `deliverPending()` is
    /// called, so the rows still get their image in a later frame, at a time the caller chooses.
    public init(deferredDecode decode: @escaping ([UInt8]) -> ImagePixels?) {
        delivery = .deferred(decode: decode)
    }

    public var cachedCount: Int { slots.values.filter { $0.pixels != nil }.count }

    /// The slot for an item; the first request starts its decode.
    public func slot(for itemID: Int, png: [UInt8]) -> ThumbnailSlot {
        if let slot = slots[itemID] { return slot }
        let slot = ThumbnailSlot()
        slots[itemID] = slot
        switch delivery {
        case .background(let worker):
            worker.async {
                let pixels = ThumbnailDecoder.decodeForDisplay(png)
                Task { @MainActor in slot.pixels = pixels }
            }
        case .deferred(let decode):
            pending.append((slot, decode(png)))
        }
        return slot
    }

    /// Loads the thumbnail archive's previews where this cache decodes (its thumbnail thread, or at
    /// once for a deferred cache) and hands them to `publish` on the main actor (a deferred cache:
    /// at the next `deliverPending()`).
    public func loadPreviews(from archive: ThumbnailArchive, publish: @escaping @MainActor @Sendable (ThumbnailPreviews) -> Void) {
        switch delivery {
        case .background(let worker):
            worker.async {
                let previews = ThumbnailPreviews(pictures: archive.load())
                Task { @MainActor in publish(previews) }
            }
        case .deferred:
            let previews = ThumbnailPreviews(pictures: archive.load())
            pendingPreviews = { publish(previews) }
        }
    }

    /// Publishes the images decoded since the last call (deferred caches only); returns how many.
    @discardableResult
    public func deliverPending() -> Int {
        let ready = pending
        pending.removeAll()
        for (slot, pixels) in ready { slot.pixels = pixels }
        pendingPreviews?()
        pendingPreviews = nil
        return ready.count
    }
}
