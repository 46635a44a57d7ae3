// The data half of the data-to-pixels pipeline: normalize -> filter -> sort -> group -> snapshot.
// The same function runs in both variants; only where it runs (and whether stale results are
// dropped) differs. Each stage is recorded in category `stage`.
import HitchTrace

/// One row as the list shows it.
public struct FeedRowData: Sendable, Identifiable, Equatable {
    /// The list identity: the item's id (tuned) or a per-snapshot number (naive).
    public var id: Int
    public var itemID: Int
    public var sectionHeader: String?
    public var title: String
    public var byline: String
    public var snippet: String
    public var tagLine: String
    public var thumbnailPNG: [UInt8]
    /// Which of the data's distinct pictures the thumbnail is (its preview in `ThumbnailArchive`).
    public var pictureIndex = -1

    /// Content follows from `itemID`; comparing the PNG bytes would cost more than the row.
    public static func == (a: FeedRowData, b: FeedRowData) -> Bool {
        a.id == b.id && a.itemID == b.itemID && a.sectionHeader == b.sectionHeader
    }
}

public struct FeedSnapshot: Sendable {
    public var query: String
    public var generation: UInt64
    public var rows: [FeedRowData]
    public var sectionCount: Int
    public static let empty = FeedSnapshot(query: "", generation: 0, rows: [], sectionCount: 0)
}

public enum FeedPipeline {
    /// How list identities are made: stable item ids, or fresh numbers for every snapshot.
    public enum Identity: Sendable { case stable, regeneratedPerSnapshot }

    /// Runs every stage for `query`. `isStale` is polled between stages (and inside the long
    /// ones) so a superseded request stops early; it returns nil then. Without an `index` every
    /// row is normalized again for this query (the naive way); with one, only the query is.
    public static func run(query: String, items: [FeedItem], index: SearchIndex? = nil, generation: UInt64,
                           identity: Identity, isStale: () -> Bool = { false }) -> FeedSnapshot? {
        let tokens = Trace.interval("normalize", category: .stage) {
            normalize(query).split(separator: UInt8(ascii: " ")).map(Array.init)
        }
        let documents: [SearchDocument] = index?.documents ?? SearchIndex(items: items).documents
        if isStale() { return nil }
        let matches: [(index: Int, score: Int)] = Trace.interval("filter", category: .stage) {
            var matches: [(Int, Int)] = []
            for (index, document) in documents.enumerated() {
                if let score = document.score(tokens) { matches.append((index, score)) }
            }
            return matches
        }
        if isStale() { return nil }
        let sorted = Trace.interval("sort", category: .stage) {
            matches.sorted { a, b in
                let x = items[a.index], y = items[b.index]
                if x.day != y.day { return x.day > y.day }
                if a.score != b.score { return a.score > b.score }
                if x.title != y.title { return x.title < y.title }
                return x.id < y.id
            }
        }
        if isStale() { return nil }
        let sections: [(title: String, members: [Int])] = Trace.interval("group", category: .stage) {
            var sections: [(String, [Int])] = []
            var currentMonth = -1
            for match in sorted {
                let date = CalendarDate(daysSince2020: items[match.index].day)
                let month = date.year * 12 + date.month
                if month != currentMonth {
                    sections.append((date.monthTitle, []))
                    currentMonth = month
                }
                sections[sections.count - 1].1.append(match.index)
            }
            return sections
        }
        if isStale() { return nil }
        return Trace.interval("snapshot", category: .stage) {
            var rows: [FeedRowData] = []
            rows.reserveCapacity(sorted.count)
            // Regenerated ids: numbers no earlier snapshot used, so no row keeps its identity.
            let idBase = Int(truncatingIfNeeded: generation) << 24
            for section in sections {
                for (position, index) in section.members.enumerated() {
                    let item = items[index]
                    let date = CalendarDate(daysSince2020: item.day)
                    let id = identity == .stable ? item.id : idBase + rows.count
                    rows.append(FeedRowData(id: id, itemID: item.id, sectionHeader: position == 0 ? section.title : nil,
                                            title: item.title, byline: "\(item.author) · \(date.shortTitle)",
                                            snippet: item.snippet, tagLine: item.tags.map { "#" + $0 }.joined(separator: " "),
                                            thumbnailPNG: item.thumbnailPNG, pictureIndex: item.pictureIndex))
                }
            }
            return FeedSnapshot(query: query, generation: generation, rows: rows, sectionCount: sections.count)
        }
    }

    /// Lowercases and folds Latin diacritics ("Résumé" -> "resume"), keeping ASCII letters,
    /// digits and single spaces.
    public static func normalize(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            var byte: UInt8
            switch scalar.value {
            case 0x41...0x5A: byte = UInt8(scalar.value) + 32
            case 0x61...0x7A, 0x30...0x39: byte = UInt8(scalar.value)
            case 0xC0...0x17F: byte = foldLatin(scalar)
            default: byte = UInt8(ascii: " ")
            }
            if byte == UInt8(ascii: " ") {
                if lastWasSpace { continue }
                lastWasSpace = true
            } else {
                lastWasSpace = false
            }
            out.append(byte)
        }
        if out.last == UInt8(ascii: " ") { out.removeLast() }
        return out
    }

    private static func foldLatin(_ scalar: Unicode.Scalar) -> UInt8 {
        switch scalar {
        case "à", "á", "â", "ã", "ä", "å", "À", "Á", "Â", "Ã", "Ä", "Å": UInt8(ascii: "a")
        case "ç", "Ç": UInt8(ascii: "c")
        case "è", "é", "ê", "ë", "È", "É", "Ê", "Ë": UInt8(ascii: "e")
        case "ì", "í", "î", "ï", "Ì", "Í", "Î", "Ï": UInt8(ascii: "i")
        case "ñ", "Ñ": UInt8(ascii: "n")
        case "ò", "ó", "ô", "õ", "ö", "Ò", "Ó", "Ô", "Õ", "Ö": UInt8(ascii: "o")
        case "ù", "ú", "û", "ü", "Ù", "Ú", "Û", "Ü": UInt8(ascii: "u")
        case "ý", "ÿ", "Ý": UInt8(ascii: "y")
        default: UInt8(ascii: " ")
        }
    }
}

/// Every row's searchable fields, normalized once (recorded as a `normalize` stage) and reused by
/// each search over the same items.
public struct SearchIndex: Sendable {
    let documents: [SearchDocument]

    public init(items: [FeedItem]) {
        documents = Trace.interval("normalize", category: .stage) { items.map(SearchDocument.init) }
    }
}

/// A row's searchable fields, normalized.
struct SearchDocument: Sendable {
    var title: [UInt8]
    var author: [UInt8]
    var tags: [UInt8]
    var snippet: [UInt8]

    init(_ item: FeedItem) {
        title = FeedPipeline.normalize(item.title)
        author = FeedPipeline.normalize(item.author)
        tags = FeedPipeline.normalize(item.tags.joined(separator: " "))
        snippet = FeedPipeline.normalize(item.snippet)
    }

    /// Every token must occur in some field; title hits weigh most. Nil: no match.
    func score(_ tokens: [[UInt8]]) -> Int? {
        var score = 0
        for token in tokens {
            if contains(title, token) { score += 10 }
            else if contains(author, token) { score += 5 }
            else if contains(tags, token) { score += 3 }
            else if contains(snippet, token) { score += 1 }
            else { return nil }
        }
        return score
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        let first = needle[0]
        for start in 0...(haystack.count - needle.count) where haystack[start] == first {
            var offset = 1
            while offset < needle.count, haystack[start + offset] == needle[offset] { offset += 1 }
            if offset == needle.count { return true }
        }
        return false
    }
}

/// A civil date from days since 2020-01-01 (proleptic Gregorian), formatted by hand.
struct CalendarDate {
    var year: Int
    var month: Int
    var day: Int

    static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August",
                             "September", "October", "November", "December"]

    init(daysSince2020: Int) {
        // Howard Hinnant's days_from_civil inverse; 2020-01-01 is day 18262 after 1970-01-01.
        let z = daysSince2020 + 18262 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    var monthTitle: String { "\(Self.monthNames[month - 1]) \(year)" }
    var shortTitle: String { "\(day) \(Self.monthNames[month - 1].prefix(3)) \(year)" }
}
