// The feed's thumbnail archive: every distinct picture of the data at preview size, as PNG files
// packed into one file on disk, written when the workload prepares its data (not recorded). The
// results header shows the top result's preview from it, so the app opens it the first time the
// user types: it reads the file and decodes every preview, scaled to the header's size. That is
// hundreds of milliseconds of work; the naive variant does it on the main actor (a hang), the tuned
// variant on its thumbnail thread.
import Foundation
import HeadlessUI
import HitchTrace

/// The previews of one data set: written to `path` by `write`, read back by `load`.
public final class ThumbnailArchive: Sendable {
    /// The previews' side in the results header, in points.
    public static let headerSide = 96
    /// The side the archive stores each picture at, unless configured.
    public static let defaultPreviewSide = 512

    public let path: String
    /// The archive's bytes when the file could not be written (no writable temporary directory):
    /// opened from memory instead, with the same decoding.
    private let unwritten: [UInt8]?

    /// Draws each of the data's `pictureCount` pictures at `side` pixels (the art of
    /// `FeedDataGenerator` for `seed`), encodes them as PNG and packs them into a new file.
    init(pictureCount: Int, seed: UInt64, side: Int) {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("hitch-thumbnails-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).archive").path
        var file: [UInt8] = []
        func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { file.append(contentsOf: $0) } }
        append(UInt32(pictureCount))
        for index in 0..<pictureCount {
            let png = PNG.encode(ThumbnailArt.draw(side: side, seed: FeedDataGenerator.pictureSeed(seed, index)))
            append(UInt32(png.count))
            file.append(contentsOf: png)
        }
        unwritten = FileManager.default.createFile(atPath: path, contents: Data(file)) ? nil : file
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Reads the archive and decodes every preview at the header's size, by picture index (nil for
    /// an entry that does not decode; empty when the file cannot be read).
    public func load() -> [ImagePixels?] {
        Trace.interval("load thumbnail archive", category: .stage) {
            guard let bytes = unwritten ?? FileManager.default.contents(atPath: path).map({ [UInt8]($0) }) else { return [] }
            func word(at offset: Int) -> Int? {
                guard offset + 4 <= bytes.count else { return nil }
                return Int(UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24)
            }
            guard let count = word(at: 0) else { return [] }
            var previews: [ImagePixels?] = []
            var offset = 4
            for _ in 0..<count {
                guard let length = word(at: offset), offset + 4 + length <= bytes.count else { break }
                let png = Array(bytes[(offset + 4)..<(offset + 4 + length)])
                offset += 4 + length
                previews.append(Trace.interval("decode preview", category: .stage) {
                    guard let image = try? PNG.decode(png) else { return nil }
                    let small = image.resized(width: Self.headerSide, height: Self.headerSide)
                    return ImagePixels(width: small.width, height: small.height, rgba: small.pixels)
                })
            }
            return previews
        }
    }
}

/// The previews once loaded, for the results header: the top result's, by its picture.
public struct ThumbnailPreviews: Sendable {
    public let pictures: [ImagePixels?]

    public func preview(for row: FeedRowData?) -> ImagePixels? {
        guard let row, row.pictureIndex >= 0, row.pictureIndex < pictures.count else { return nil }
        return pictures[row.pictureIndex]
    }
}
