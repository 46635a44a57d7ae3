// The leaf and container primitives: Text, Image, Color, Spacer, HStack, VStack and LazyList.

/// Text measured from its string: per-character advance widths scaled by the font size, greedy
/// word wrapping to the proposed width, 1.2 x font size line height.
public struct Text: PrimitiveView, Equatable {
    public var string: String
    public var fontSize: Double
    public var color: Color
    public var lineLimit: Int?

    public init(_ string: String, fontSize: Double = 15, color: Color = .black, lineLimit: Int? = nil) {
        self.string = string
        self.fontSize = fontSize
        self.color = color
        self.lineLimit = lineLimit
    }

    public var primitive: Primitive { .text(self) }
}

/// A bitmap shown at a fixed size (the image is scaled to it when drawn).
public struct Image: PrimitiveView {
    public var pixels: ImagePixels?
    public var size: Size

    public init(_ pixels: ImagePixels?, size: Size) {
        self.pixels = pixels
        self.size = size
    }

    public var primitive: Primitive { .image(self) }
}

/// Decoded RGBA pixels shared by reference between the view tree and the render thread.
public final class ImagePixels: Sendable {
    public let width: Int
    public let height: Int
    public let rgba: [UInt8]
    public init(width: Int, height: Int, rgba: [UInt8]) {
        precondition(rgba.count == width * height * 4, "RGBA buffer size must be width * height * 4")
        self.width = width
        self.height = height
        self.rgba = rgba
    }
}

/// A solid color; fills what it is offered unless given a size.
public struct ColorView: PrimitiveView {
    public var color: Color
    public var size: Size?
    public init(_ color: Color, size: Size? = nil) { self.color = color; self.size = size }
    public var primitive: Primitive { .color(color, size) }
}

public struct Spacer: PrimitiveView {
    public var minLength: Double
    public init(minLength: Double = 0) { self.minLength = minLength }
    public var primitive: Primitive { .spacer(minLength: minLength) }
}

public enum Axis: Sendable { case horizontal, vertical }

public struct StackLayout: Sendable, Equatable {
    public var axis: Axis
    public var spacing: Double
}

public struct VStack<Content: View>: PrimitiveView {
    public var spacing: Double
    public var content: Content
    public init(spacing: Double = 4, @ViewBuilder content: () -> Content) {
        self.spacing = spacing
        self.content = content()
    }
    public var primitive: Primitive { .stack(StackLayout(axis: .vertical, spacing: spacing), flattenChildren(content)) }
}

public struct HStack<Content: View>: PrimitiveView {
    public var spacing: Double
    public var content: Content
    public init(spacing: Double = 8, @ViewBuilder content: () -> Content) {
        self.spacing = spacing
        self.content = content()
    }
    public var primitive: Primitive { .stack(StackLayout(axis: .horizontal, spacing: spacing), flattenChildren(content)) }
}

/// A scrolling vertical list that materializes only the rows in (and just around) the viewport,
/// like `ScrollView { LazyVStack { ForEach … } }`. The scroll offset lives in a `ScrollPosition`
/// that layout reads, so scrolling moves rows without re-evaluating any body (as in SwiftUI).
public struct LazyList<Data: RandomAccessCollection, ID: Hashable, Row: View>: PrimitiveView where Data.Index == Int {
    public var rows: ForEach<Data, ID, Row>
    public var position: ScrollPosition
    public var spacing: Double
    /// Extra points materialized above and below the viewport.
    public var overscan: Double
    /// An offset from app state (a model property) that replaces `position.offset` when given.
    public var offset: Double?

    public init(position: ScrollPosition, offset: Double? = nil, spacing: Double = 0, overscan: Double = 120,
                rows: ForEach<Data, ID, Row>) {
        self.rows = rows
        self.position = position
        self.offset = offset
        self.spacing = spacing
        self.overscan = overscan
    }

    public var primitive: Primitive {
        var content = LazyListContent(rows: ForEachRows(data: rows.data, id: rows.id, content: rows.content))
        content.position = position
        content.offsetOverride = offset
        content.spacing = spacing
        content.overscan = overscan
        return .lazyList(content)
    }
}

/// A lazy list's rows, erased to what the runtime asks of them: the count, a row's view, and
/// ids compared in their own type (only for the rows that are materialized).
@MainActor
public struct LazyListContent {
    let rows: any LazyRowSource
    public var count: Int { rows.count }
    public var position = ScrollPosition()
    public var offsetOverride: Double?
    public var spacing: Double = 0
    public var overscan: Double = 120
}

/// A lazy list's data, typed: the runtime reaches ids through these methods, so no row's id is
/// boxed unless its row is built.
@MainActor
protocol LazyRowSource {
    var count: Int { get }
    func view(at index: Int) -> any View
    /// The row's id as a child key, for a node being built.
    func key(at index: Int) -> ChildKey
    /// For each row of `range`, the position in `previousRange` of the row of `previous` with the
    /// same id, or nil (also when `previous` holds another type of data).
    func matchRows(_ range: Range<Int>, previous: any LazyRowSource, previousRange: Range<Int>) -> [Int?]
}

/// `ForEach` as a lazy list's rows.
struct ForEachRows<Data: RandomAccessCollection, ID: Hashable, Content: View>: LazyRowSource where Data.Index == Int {
    let data: Data
    let id: KeyPath<Data.Element, ID>
    let content: (Data.Element) -> Content

    var count: Int { data.count }

    func id(at index: Int) -> ID { data[data.startIndex + index][keyPath: id] }

    func view(at index: Int) -> any View { unwrapSingle(content(data[data.startIndex + index])) }

    func key(at index: Int) -> ChildKey { .explicit(group: 0, id: AnyHashable(id(at: index))) }

    func matchRows(_ range: Range<Int>, previous: any LazyRowSource, previousRange: Range<Int>) -> [Int?] {
        guard let previous = previous as? Self else { return Array(repeating: nil, count: range.count) }
        let oldIDs = previousRange.map(previous.id(at:))
        var used = [Bool](repeating: false, count: oldIDs.count)
        // Rows usually keep their order: look right after the last match first.
        var next = 0
        return range.map { index in
            let id = self.id(at: index)
            if next < oldIDs.count, !used[next], oldIDs[next] == id {
                used[next] = true
                next += 1
                return next - 1
            }
            guard let found = oldIDs.indices.first(where: { !used[$0] && oldIDs[$0] == id }) else { return nil }
            used[found] = true
            next = found + 1
            return found
        }
    }
}

/// Flattens a stack's content into keyed children: ViewBuilder groups keep positions, ForEach
/// contributes explicit ids, nested groups are spliced in.
@MainActor
func flattenChildren(_ content: any View) -> ChildList {
    var result: [(key: ChildKey, view: any View)] = []
    var groupIndex = 0
    // `path` encodes where a view sits in the tree of groups, so a structural child keeps its
    // identity when a ForEach or an `if` before it changes how many children it contributes.
    func visit(_ view: any View, key: ChildKey, path: Int) {
        if let primitive = ViewTypeNames.info(of: view).primitive?(view), case .group(let list) = primitive {
            let group = groupIndex
            groupIndex += 1
            for child in list.children {
                switch child.key {
                case .explicit(_, let id):
                    // A ForEach element is its content closure's builder block: one view keeps the
                    // element's id; several get the id plus their position.
                    let element = unwrapSingle(child.view)
                    if let block = element as? ViewGroup {
                        for (position, view) in block.views.enumerated() {
                            visit(view, key: .explicit(group: group, id: AnyHashable([id, AnyHashable(position)])), path: path)
                        }
                    } else {
                        visit(element, key: .explicit(group: group, id: id), path: path)
                    }
                case .structural(let position, let type):
                    let childPath = path &* 1_000_003 &+ position &+ 1
                    visit(child.view, key: .structural(position: childPath, type: type), path: childPath)
                }
            }
        } else {
            result.append((key, view))
        }
    }
    visit(content, key: .structural(position: 0, type: typeIdentity(of: content)), path: 0)
    return ChildList(result)
}
