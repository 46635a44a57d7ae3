// Points and sizes for layout (in points; the renderer maps one point to one pixel).

public struct Size: Equatable, Sendable, CustomStringConvertible {
    public var width: Double
    public var height: Double
    public init(width: Double, height: Double) { self.width = width; self.height = height }
    public static let zero = Size(width: 0, height: 0)
    public var description: String { "\(width)x\(height)" }
}

public struct Point: Equatable, Sendable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    public static let zero = Point(x: 0, y: 0)
}

public struct Rect: Equatable, Sendable {
    public var origin: Point
    public var size: Size
    public init(origin: Point, size: Size) { self.origin = origin; self.size = size }
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.init(origin: Point(x: x, y: y), size: Size(width: width, height: height))
    }
    public var minX: Double { origin.x }
    public var minY: Double { origin.y }
    public var maxX: Double { origin.x + size.width }
    public var maxY: Double { origin.y + size.height }
    public var isEmpty: Bool { size.width <= 0 || size.height <= 0 }

    public func intersection(_ other: Rect) -> Rect {
        let x0 = max(minX, other.minX), y0 = max(minY, other.minY)
        let x1 = min(maxX, other.maxX), y1 = min(maxY, other.maxY)
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    public func union(_ other: Rect) -> Rect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let x0 = min(minX, other.minX), y0 = min(minY, other.minY)
        return Rect(x: x0, y: y0, width: max(maxX, other.maxX) - x0, height: max(maxY, other.maxY) - y0)
    }
}

/// A parent's size proposal: nil in a dimension means "your ideal size".
public struct ProposedSize: Equatable, Sendable {
    public var width: Double?
    public var height: Double?
    public init(width: Double?, height: Double?) { self.width = width; self.height = height }
    public static let unspecified = ProposedSize(width: nil, height: nil)
}

public struct EdgeInsets: Equatable, Sendable {
    public var top, leading, bottom, trailing: Double
    public init(top: Double, leading: Double, bottom: Double, trailing: Double) {
        self.top = top; self.leading = leading; self.bottom = bottom; self.trailing = trailing
    }
    public init(_ all: Double) { self.init(top: all, leading: all, bottom: all, trailing: all) }
}

/// An opaque 8-bit RGBA color.
public struct Color: Equatable, Hashable, Sendable {
    public var red, green, blue: UInt8
    public init(red: UInt8, green: UInt8, blue: UInt8) { self.red = red; self.green = green; self.blue = blue }
    public static let white = Color(red: 255, green: 255, blue: 255)
    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let gray = Color(red: 128, green: 128, blue: 128)
    public static let accent = Color(red: 10, green: 100, blue: 220)
}
