// The feed's views. One row view serves both variants; what differs is what it reads: naive rows
// read the broad model and decode their thumbnail in the body, tuned rows read only their own
// thumbnail slot.
import HeadlessUI
import HitchTrace

/// Where a row's thumbnail comes from.
@MainActor
public enum RowThumbnail {
    /// Decode the PNG at full size and resize it, inside the body, on every evaluation (naive).
    case decodeInBody
    /// Read the display-size image from the off-main cache (tuned).
    case cache(ThumbnailCache)
}

public struct FeedRow: View, Equatable {
    public var row: FeedRowData
    public var highlight: Bool
    public var thumbnail: RowThumbnail
    /// Naive rows read the whole broad model (for the query highlight), so every write reaches them.
    public var broadModel: NaiveFeedModel?

    public nonisolated static func == (a: FeedRow, b: FeedRow) -> Bool {
        MainActor.assumeIsolated {
            let sameSource = switch (a.thumbnail, b.thumbnail) {
            case (.decodeInBody, .decodeInBody): true
            case let (.cache(x), .cache(y)): x === y
            default: false
            }
            return a.row == b.row && a.highlight == b.highlight && sameSource && a.broadModel === b.broadModel
        }
    }

    public var body: some View {
        Trace.interval("row body", category: .stage) { content }
    }

    @ViewBuilder private var content: some View {
        let highlighted = broadModel.map { !$0.state.query.isEmpty } ?? highlight
        let pixels: ImagePixels? = switch thumbnail {
        case .decodeInBody: ThumbnailDecoder.decodeForDisplay(row.thumbnailPNG)
        case .cache(let cache): cache.slot(for: row.itemID, png: row.thumbnailPNG).pixels
        }
        let side = Double(ThumbnailDecoder.displaySide)
        VStack(spacing: 4) {
            if let header = row.sectionHeader {
                Text(header, fontSize: 13, color: .gray, lineLimit: 1)
            }
            HStack(spacing: 10) {
                Image(pixels, size: Size(width: side, height: side))
                VStack(spacing: 3) {
                    Text(row.title, fontSize: 16, color: highlighted ? .accent : .black, lineLimit: 2)
                    Text(row.byline, fontSize: 12, color: .gray, lineLimit: 1)
                    Text(row.snippet, fontSize: 14, lineLimit: 3)
                    Text(row.tagLine, fontSize: 12, color: .accent, lineLimit: 1)
                }
            }
        }
        .padding(10)
    }
}

// MARK: Naive screen: everything reads `model.state`.

public struct NaiveFeedScreen: View {
    let model: NaiveFeedModel
    let position: ScrollPosition

    public var body: some View {
        VStack(spacing: 0) {
            NaiveSearchBar(model: model)
            NaiveFeedList(model: model, position: position)
        }
    }
}

struct NaiveSearchBar: View {
    let model: NaiveFeedModel
    var body: some View {
        let state = model.state
        SearchBarContent(query: state.query, resultCount: state.snapshot.rows.count, isSearching: false,
                         preview: state.query.isEmpty ? nil : state.previews?.preview(for: state.snapshot.rows.first))
    }
}

struct NaiveFeedList: View {
    let model: NaiveFeedModel
    let position: ScrollPosition
    var body: some View {
        let state = model.state
        LazyList(position: position, offset: state.scrollOffset, rows: ForEach(state.snapshot.rows, id: \.id) { row in
            FeedRow(row: row, highlight: false, thumbnail: .decodeInBody, broadModel: model)
        })
    }
}

// MARK: Tuned screen: each view reads only what it shows.

public struct TunedFeedScreen: View {
    let model: TunedFeedModel
    let thumbnails: ThumbnailCache
    let position: ScrollPosition

    public var body: some View {
        VStack(spacing: 0) {
            TunedSearchBar(model: model)
            TunedFeedList(model: model, thumbnails: thumbnails, position: position)
        }
    }
}

struct TunedSearchBar: View {
    let model: TunedFeedModel
    var body: some View {
        SearchBarContent(query: model.query, resultCount: model.snapshot.rows.count, isSearching: model.isSearching,
                         preview: model.query.isEmpty ? nil : model.previews?.preview(for: model.snapshot.rows.first))
    }
}

struct TunedFeedList: View {
    let model: TunedFeedModel
    let thumbnails: ThumbnailCache
    let position: ScrollPosition
    var body: some View {
        let snapshot = model.snapshot
        let highlight = !snapshot.query.isEmpty
        LazyList(position: position, rows: ForEach(snapshot.rows, id: \.id) { row in
            FeedRow(row: row, highlight: highlight, thumbnail: .cache(thumbnails), broadModel: nil)
        })
    }
}

struct SearchBarContent: View, Equatable {
    var query: String
    var resultCount: Int
    var isSearching: Bool
    /// The top result's preview from the thumbnail archive, once it is open.
    var preview: ImagePixels?

    nonisolated static func == (a: SearchBarContent, b: SearchBarContent) -> Bool {
        a.query == b.query && a.resultCount == b.resultCount && a.isSearching == b.isSearching && a.preview === b.preview
    }

    var body: some View {
        HStack(spacing: 10) {
            VStack(spacing: 2) {
                Text(query.isEmpty ? "Search" : query, fontSize: 17, color: query.isEmpty ? .gray : .black, lineLimit: 1)
                Text(isSearching ? "Searching…" : "\(resultCount) results", fontSize: 12, color: .gray, lineLimit: 1)
            }
            if let preview {
                Image(preview, size: Size(width: Double(ThumbnailArchive.headerSide), height: Double(ThumbnailArchive.headerSide)))
            }
        }
        .padding(10)
        .background(Color(red: 240, green: 240, blue: 245))
    }
}
