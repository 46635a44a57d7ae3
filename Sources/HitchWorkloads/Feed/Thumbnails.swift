// Thumbnail decoding. Both variants use the same decoder: inflate + unfilter (image decode), then
// a box-filter resize to the display size (image resize). Naive calls it inside the row body on
// every evaluation; tuned calls it once per row on a background queue and caches the result.
import Dispatch
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
/// queue and published to the row's slot on the main actor.
@MainActor
public final class ThumbnailCache {
    private var slots: [Int: ThumbnailSlot] = [:]
    private let queue = DispatchQueue(label: "feed.thumbnails", qos: .userInitiated)

    public init() {}

    public var cachedCount: Int { slots.values.filter { $0.pixels != nil }.count }

    /// The slot for an item; the first request starts its decode.
    public func slot(for itemID: Int, png: [UInt8]) -> ThumbnailSlot {
        if let slot = slots[itemID] { return slot }
        let slot = ThumbnailSlot()
        slots[itemID] = slot
        queue.async {
            let pixels = ThumbnailDecoder.decodeForDisplay(png)
            Task { @MainActor in slot.pixels = pixels }
        }
        return slot
    }
}
