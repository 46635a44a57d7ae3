// Views are value types with a `body`, as in SwiftUI. Primitive views (Text, Image, stacks,
// ForEach, LazyList, modifiers) have no body; the runtime turns them into nodes directly.

@MainActor
public protocol View {
    associatedtype Body: View
    @ViewBuilder var body: Body { get }
}

extension Never: View {
    public var body: Never { return fatalError("Never has no body") }
}

/// A view the runtime understands directly; its `body` is never called.
@MainActor
public protocol PrimitiveView: View where Body == Never {
    var primitive: Primitive { get }
}

extension PrimitiveView {
    public var body: Never { return fatalError("\(Self.self) is a primitive view and has no body") }
}

/// What a primitive view is, for the runtime's node tree, layout and display list.
@MainActor
public enum Primitive {
    case empty
    case text(Text)
    case image(Image)
    case color(Color, Size?)
    case spacer(minLength: Double)
    /// A sequence of children, flattened into the enclosing stack (ViewBuilder blocks, ForEach).
    case group(ChildList)
    case stack(StackLayout, ChildList)
    case padding(EdgeInsets, any View)
    case frame(width: Double?, height: Double?, any View)
    case background(Color, any View)
    case lazyList(LazyListContent)
}

/// Children with their identities: structural (position and type) or explicit (`id`).
@MainActor
public struct ChildList {
    public var children: [(key: ChildKey, view: any View)]
    public init(_ children: [(key: ChildKey, view: any View)]) { self.children = children }
}

/// A child's identity within its parent.
public enum ChildKey: Hashable {
    /// Structural identity: the position among siblings and the view's type.
    case structural(position: Int, type: ObjectIdentifier)
    /// Explicit identity from `ForEach` (the ForEach's own position keeps two ForEach apart).
    case explicit(group: Int, id: AnyHashable)

    var isExplicit: Bool { if case .explicit = self { true } else { false } }
}

@resultBuilder
@MainActor
public enum ViewBuilder {
    public static func buildExpression<V: View>(_ view: V) -> any View { view }
    public static func buildBlock(_ views: any View...) -> ViewGroup { ViewGroup(views) }
    public static func buildOptional(_ view: ViewGroup?) -> ViewGroup { view ?? ViewGroup([]) }
    public static func buildEither(first view: ViewGroup) -> ViewGroup { ViewGroup([ConditionalBranch(branch: 0, content: view)]) }
    public static func buildEither(second view: ViewGroup) -> ViewGroup { ViewGroup([ConditionalBranch(branch: 1, content: view)]) }
    public static func buildArray(_ views: [ViewGroup]) -> ViewGroup { ViewGroup(views) }
}

/// A ViewBuilder block: its children keep structural identity (position and type).
public struct ViewGroup: PrimitiveView {
    public var views: [any View]
    public init(_ views: [any View]) { self.views = views }
    public var primitive: Primitive {
        .group(ChildList(views.enumerated().map { (.structural(position: $0.offset, type: typeIdentity(of: $0.element)), $0.element) }))
    }
}

/// One side of an `if`/`else`: the branch number is part of the child's identity, so switching
/// branches tears down and builds, as SwiftUI's `_ConditionalContent` does.
public struct ConditionalBranch: PrimitiveView {
    var branch: Int
    var content: ViewGroup
    public var primitive: Primitive {
        .group(ChildList(content.views.enumerated().map {
            (.structural(position: branch << 16 | $0.offset, type: typeIdentity(of: $0.element)), $0.element)
        }))
    }
}

public struct EmptyView: PrimitiveView {
    public init() {}
    public var primitive: Primitive { .empty }
}

/// ForEach over an identified collection: each element's view is keyed by its `id`.
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View>: PrimitiveView where Data.Index == Int {
    public var data: Data
    public var id: KeyPath<Data.Element, ID>
    public var content: (Data.Element) -> Content

    public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content) {
        self.data = data
        self.id = id
        self.content = content
    }

    public var primitive: Primitive {
        .group(ChildList(data.map { (.explicit(group: 0, id: AnyHashable($0[keyPath: id])), content($0)) }))
    }
}

extension ForEach where Data.Element: Identifiable, ID == Data.Element.ID {
    public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content) {
        self.init(data, id: \.id, content: content)
    }
}

/// The type of a view as an identity component (for structural identity).
func typeIdentity(of view: any View) -> ObjectIdentifier {
    ObjectIdentifier(type(of: view))
}

extension View {
    public func padding(_ amount: Double = 8) -> Padding<Self> { Padding(insets: EdgeInsets(amount), content: self) }
    public func padding(_ insets: EdgeInsets) -> Padding<Self> { Padding(insets: insets, content: self) }
    public func frame(width: Double? = nil, height: Double? = nil) -> Frame<Self> { Frame(width: width, height: height, content: self) }
    public func background(_ color: Color) -> Background<Self> { Background(color: color, content: self) }
}

public struct Padding<Content: View>: PrimitiveView {
    public var insets: EdgeInsets
    public var content: Content
    public var primitive: Primitive { .padding(insets, content) }
}

public struct Frame<Content: View>: PrimitiveView {
    public var width: Double?
    public var height: Double?
    public var content: Content
    public var primitive: Primitive { .frame(width: width, height: height, content) }
}

public struct Background<Content: View>: PrimitiveView {
    public var color: Color
    public var content: Content
    public var primitive: Primitive { .background(color, content) }
}
