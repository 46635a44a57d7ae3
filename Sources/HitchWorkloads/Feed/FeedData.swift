// The feed's data: deterministic rows from a seed (title, author, snippet, date, tags and a PNG
// thumbnail). Thumbnails are drawn procedurally and compressed with our deflate; rows share a
// pool of distinct images (encoding 10,000 PNGs would dominate start-up) but every row decodes
// its own copy.
import HitchAlgorithms

public struct FeedItem: Sendable, Equatable, Identifiable {
    public var id: Int
    public var title: String
    public var author: String
    public var snippet: String
    /// Days since 2020-01-01.
    public var day: Int
    public var tags: [String]
    /// A PNG file (shared storage between rows that show the same picture).
    public var thumbnailPNG: [UInt8]
    /// Which of the data's distinct pictures it is (`FeedDataGenerator.pictureSeed`).
    public var pictureIndex = -1
}

public enum FeedDataGenerator {
    static let subjects = ["Swift", "Concurrency", "Layout", "Rendering", "Scrolling", "Caching", "Streaming", "Search",
                           "Observation", "Actors", "Memory", "Profiling", "Networking", "Animation", "Accessibility",
                           "Storage", "Images", "Typography", "Gestures", "Testing", "Diffing", "Navigation", "Widgets",
                           "Localization", "Security", "Battery", "Metal", "Audio", "Maps", "Sync"]
    static let verbs = ["without hitches", "at scale", "in practice", "on the main actor", "off the main thread",
                        "the hard way", "for large lists", "explained", "deep dive", "pitfalls", "in ten minutes",
                        "revisited", "under load", "with Instruments", "from first principles"]
    static let firstNames = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances", "Edsger",
                             "Radia", "Guido", "Hedy", "Niklaus", "Joan", "Bjarne", "Sophie", "Chris", "Anita"]
    static let lastNames = ["Hopper", "Lovelace", "Liskov", "Thompson", "Hamilton", "Ritchie", "Allen", "Dijkstra",
                            "Perlman", "Rossum", "Lamarr", "Wirth", "Clarke", "Stroustrup", "Wilson", "Lattner", "Borg"]
    static let words = ["the", "view", "body", "state", "frame", "commit", "render", "server", "list", "row", "cell",
                        "image", "decode", "cache", "query", "filter", "sort", "group", "snapshot", "thread", "actor",
                        "task", "stream", "token", "budget", "deadline", "vsync", "display", "link", "layout", "pass",
                        "measure", "text", "font", "glyph", "pixel", "buffer", "memory", "bandwidth", "latency",
                        "a", "of", "and", "when", "every", "keystroke", "scroll", "fling", "invalidates", "model",
                        "résumé", "naïve", "café", "über", "coördinate", "façade"]
    static let tagPool = ["swiftui", "uikit", "performance", "concurrency", "graphics", "design", "testing", "tools",
                          "linux", "server", "ml", "llm", "data", "networking", "security", "a11y"]

    /// The distinct pictures rows share (the thumbnail pool, and the archive's previews).
    public static let pictureCount = 48

    /// The art seed of picture `index` of the data for `seed`.
    static func pictureSeed(_ seed: UInt64, _ index: Int) -> UInt64 { seed &+ UInt64(index) &* 7919 }

    /// Rows for `seed`: the same seed always gives the same rows, byte for byte.
    public static func makeItems(count: Int, seed: UInt64, thumbnailPoolSize: Int = pictureCount, thumbnailSide: Int = 160) -> [FeedItem] {
        var random = SeededGenerator(seed: seed)
        let pool = (0..<thumbnailPoolSize).map { index in
            PNG.encode(ThumbnailArt.draw(side: thumbnailSide, seed: pictureSeed(seed, index)))
        }
        var items: [FeedItem] = []
        items.reserveCapacity(count)
        for id in 0..<count {
            let subject = subjects.randomElement(using: &random)!
            let second = subjects.randomElement(using: &random)!
            let title = "\(subject) and \(second) \(verbs.randomElement(using: &random)!)"
            let author = "\(firstNames.randomElement(using: &random)!) \(lastNames.randomElement(using: &random)!)"
            let snippetLength = Int.random(in: 12...40, using: &random)
            var snippet = (0..<snippetLength).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
            snippet = snippet.prefix(1).uppercased() + snippet.dropFirst() + "."
            let day = Int.random(in: 0..<(365 * 5), using: &random)
            let tagCount = Int.random(in: 1...3, using: &random)
            var tags: [String] = []
            for _ in 0..<tagCount {
                let tag = tagPool.randomElement(using: &random)!
                if !tags.contains(tag) { tags.append(tag) }
            }
            let picture = Int.random(in: 0..<pool.count, using: &random)
            items.append(FeedItem(id: id, title: title, author: author, snippet: snippet, day: day, tags: tags,
                                  thumbnailPNG: pool[picture], pictureIndex: picture))
        }
        return items
    }
}

/// Procedural thumbnails: a gradient, soft circles and fine noise, so the PNG compresses the way a
/// photo-like avatar does (neither flat nor random).
enum ThumbnailArt {
    static func draw(side: Int, seed: UInt64) -> RGBAImage {
        var random = SeededGenerator(seed: seed)
        var image = RGBAImage(width: side, height: side)
        let base = (Double.random(in: 0...255, using: &random), Double.random(in: 0...255, using: &random), Double.random(in: 0...255, using: &random))
        let circles = (0..<4).map { _ in
            (x: Double.random(in: 0...Double(side), using: &random), y: Double.random(in: 0...Double(side), using: &random),
             r: Double.random(in: Double(side) / 8...Double(side) / 2, using: &random), tint: Double.random(in: -90...90, using: &random))
        }
        var noise = SeededGenerator(seed: seed ^ 0xABCD)
        for y in 0..<side {
            for x in 0..<side {
                let t = Double(x + y) / Double(2 * side)
                var shade = 0.0
                for circle in circles {
                    let dx = Double(x) - circle.x, dy = Double(y) - circle.y
                    if dx * dx + dy * dy < circle.r * circle.r { shade += circle.tint }
                }
                let grain = Double(noise.next() % 9) - 4
                let index = (y * side + x) * 4
                image.pixels[index] = UInt8(clamping: Int(base.0 * (1 - t) + 60 * t + shade + grain))
                image.pixels[index + 1] = UInt8(clamping: Int(base.1 * (1 - t) + 120 * t + shade * 0.5 + grain))
                image.pixels[index + 2] = UInt8(clamping: Int(base.2 * (1 - t) + 200 * t - shade * 0.3 + grain))
                image.pixels[index + 3] = 255
            }
        }
        return image
    }
}
