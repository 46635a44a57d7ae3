import Synchronization

/// A name for a trace event, category, argument or view type.
///
/// A string literal becomes a `TraceName` for free: it keeps the literal's address (literals are
/// NUL-terminated and live as long as the process), so the hot path stores one word and never
/// copies or hashes a string. The writer thread resolves the address to an FXT string ref once.
/// Runtime strings have two ways in:
/// - an interpolated literal (`"row \(i)"`) or `TraceName.dynamic(_:)`: kept in a bounded table
///   (`dynamicNameCapacity` names, least recently used evicted and counted), for names that keep
///   changing. Costs a lock and a hash per call.
/// - `TraceName.intern(_:)`: copied once and kept for the life of the process, for a fixed set of
///   names known only at run time (view types). Intern once and reuse the value.
public struct TraceName: Hashable, Sendable, ExpressibleByStringLiteral, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The address of a NUL-terminated UTF-8 string that is never freed, or, with bit 55 set, the
    /// id of a dynamic name (`dynamicNameBit`).
    public let address: UInt64

    /// Set in `address` for dynamic names (user-space addresses fit in 47 bits).
    @usableFromInline static let dynamicNameBit: UInt64 = 1 << 55

    /// How many dynamic names are kept before the least recently used one is evicted.
    public static let dynamicNameCapacity = DynamicNames.capacity

    /// Dynamic names evicted from the bounded table since the process started.
    public static var dynamicNameEvictions: UInt64 { dynamicNames.withLock { $0.evictions } }

    /// A name for a string that keeps changing ("row 12", a URL path): kept in the bounded table.
    public static func dynamic(_ string: String) -> TraceName {
        TraceName(address: dynamicNameBit | dynamicNames.withLock { $0.id(for: string) })
    }

    public init(stringInterpolation: Interpolation) {
        self = TraceName.dynamic(stringInterpolation.text)
    }

    /// Builds the text of an interpolated name (`"row \(i)"`), which becomes a dynamic name.
    public struct Interpolation: StringInterpolationProtocol {
        public typealias StringLiteralType = StaticString
        var text = ""
        public init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + 8 * interpolationCount) }
        public mutating func appendLiteral(_ literal: StaticString) { text += literal.description }
        public mutating func appendInterpolation<T>(_ value: T) { text += String(describing: value) }
    }

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

    /// The string this name stands for ("(evicted name)" for a dynamic name no longer in the table).
    public var string: String {
        if address & TraceName.dynamicNameBit != 0 {
            return TraceName.resolveDynamic(id: address & ~TraceName.dynamicNameBit) ?? TraceName.evictedName
        }
        return String(cString: UnsafePointer<CChar>(bitPattern: UInt(address))!)
    }

    static let evictedName = "(evicted name)"

    /// A dynamic name's string while it is in the table or among the recently evicted ones.
    static func resolveDynamic(id: UInt64) -> String? { dynamicNames.withLock { $0.string(for: id) } }

    public var description: String { string }

    /// Names the project's own events use (see docs/FORMAT.md).
    public static let stage: TraceName = "stage"
    /// The category of intervals and instants recorded without one.
    public static let app: TraceName = "app"
    /// The category of counters recorded without one.
    public static let counter: TraceName = "counter"
}

private let internedNames = Locked<[String: UInt64]>([:])
private let dynamicNames = Locked(DynamicNames())

/// The bounded table of dynamic names: least recently used first out. An evicted name stays
/// resolvable among the last `capacity` evicted ones, so events recorded just before the eviction
/// still get their name when the writer reaches them; later, "(evicted name)".
struct DynamicNames {
    static let capacity = 4096
    private var slotOf: [String: Int] = [:]
    private var slotOfID: [UInt64: Int] = [:]
    private var strings: [String] = []
    private var ids: [UInt64] = []
    // Doubly linked recency list over slots: head is the most recent.
    private var previous: [Int] = []
    private var next: [Int] = []
    private var head = -1, tail = -1
    private var nextID: UInt64 = 1
    private var retired: [UInt64: String] = [:]
    private var retiredOrder: [UInt64] = []
    private var retiredHead = 0
    private(set) var evictions: UInt64 = 0

    mutating func id(for string: String) -> UInt64 {
        if let slot = slotOf[string] {
            moveToFront(slot)
            return ids[slot]
        }
        let id = nextID
        nextID += 1
        let slot: Int
        if strings.count < Self.capacity {
            slot = strings.count
            strings.append(string); ids.append(id); previous.append(-1); next.append(-1)
        } else {
            slot = tail
            unlink(slot)
            retire(id: ids[slot], string: strings[slot])
            slotOf[strings[slot]] = nil
            slotOfID[ids[slot]] = nil
            strings[slot] = string
            ids[slot] = id
        }
        slotOf[string] = slot
        slotOfID[id] = slot
        pushFront(slot)
        return id
    }

    func string(for id: UInt64) -> String? {
        if let slot = slotOfID[id] { return strings[slot] }
        return retired[id]
    }

    private mutating func retire(id: UInt64, string: String) {
        evictions += 1
        retired[id] = string
        retiredOrder.append(id)
        if retiredOrder.count - retiredHead > Self.capacity {
            retired[retiredOrder[retiredHead]] = nil
            retiredHead += 1
            if retiredHead >= Self.capacity { retiredOrder.removeFirst(retiredHead); retiredHead = 0 }
        }
    }

    private mutating func unlink(_ slot: Int) {
        if previous[slot] >= 0 { next[previous[slot]] = next[slot] } else { head = next[slot] }
        if next[slot] >= 0 { previous[next[slot]] = previous[slot] } else { tail = previous[slot] }
        previous[slot] = -1; next[slot] = -1
    }

    private mutating func pushFront(_ slot: Int) {
        previous[slot] = -1
        next[slot] = head
        if head >= 0 { previous[head] = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    private mutating func moveToFront(_ slot: Int) {
        guard head != slot else { return }
        unlink(slot)
        pushFront(slot)
    }
}

/// Copies a string's UTF-8 bytes plus a NUL terminator into memory that is never freed.
private func copyForever(_ string: String) -> UInt64 {
    let utf8 = Array(string.utf8)
    let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: utf8.count + 1)
    memory.initialize(from: utf8, count: utf8.count)
    memory[utf8.count] = 0
    return UInt64(UInt(bitPattern: memory))
}
