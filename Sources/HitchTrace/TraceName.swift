import Synchronization

/// A name for a trace event, category, argument or view type.
///
/// A string literal becomes a `TraceName` for free: it keeps the literal's address (literals are
/// NUL-terminated and live as long as the process), so the hot path stores one word and never
/// copies or hashes a string. The writer thread resolves the address to an FXT string ref once.
/// Runtime strings go through `TraceName.intern(_:)` once; keep and reuse the returned value.
public struct TraceName: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The address of a NUL-terminated UTF-8 string that is never freed.
    public let address: UInt64

    @inlinable
    public init(stringLiteral value: StaticString) {
        if value.hasPointerRepresentation {
            address = UInt64(UInt(bitPattern: value.utf8Start))
        } else {
            address = TraceName.intern(String(value.unicodeScalar)).address
        }
    }

    @usableFromInline
    init(address: UInt64) { self.address = address }

    /// Interns a runtime string: the first call for a given string copies it (once, forever);
    /// later calls return the same name. Not for the hot path: intern once and reuse the value.
    public static func intern(_ string: String) -> TraceName {
        TraceName(address: internedNames.withLock { table in
            if let address = table[string] { return address }
            let address = copyForever(string)
            table[string] = address
            return address
        })
    }

    /// The string this name stands for.
    public var string: String {
        String(cString: UnsafePointer<CChar>(bitPattern: UInt(address))!)
    }

    public var description: String { string }

    /// Names the project's own events use (see docs/FORMAT.md).
    public static let stage: TraceName = "stage"
    /// The category of intervals and instants recorded without one.
    public static let app: TraceName = "app"
    /// The category of counters recorded without one.
    public static let counter: TraceName = "counter"
}

private let internedNames = Locked<[String: UInt64]>([:])

/// Copies a string's UTF-8 bytes plus a NUL terminator into memory that is never freed.
private func copyForever(_ string: String) -> UInt64 {
    let utf8 = Array(string.utf8)
    let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: utf8.count + 1)
    memory.initialize(from: utf8, count: utf8.count)
    memory[utf8.count] = 0
    return UInt64(UInt(bitPattern: memory))
}
