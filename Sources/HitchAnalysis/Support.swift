import HitchTrace

/// Maps one run's dense ids (StringID, ThreadID raw values) to analyzer-wide indexes, so the per-event
/// path is an array load. Ids beyond `denseLimit` (a hostile or odd trace) fall back to a dictionary.
struct DenseIndex: Sendable {
    static let denseLimit: UInt32 = 1 << 22
    private var table: [Int32] = []
    private var overflow: [UInt32: Int32] = [:]

    @inline(__always)
    func lookup(_ raw: UInt32) -> Int32 {
        if raw < UInt32(table.count) { return table[Int(raw)] }
        if raw < Self.denseLimit { return -1 }
        return overflow[raw] ?? -1
    }

    mutating func set(_ raw: UInt32, _ value: Int32) {
        if raw < Self.denseLimit {
            if raw >= UInt32(table.count) {
                table.append(contentsOf: repeatElement(-1, count: Int(raw) + 1 - table.count))
            }
            table[Int(raw)] = value
        } else {
            overflow[raw] = value
        }
    }

    mutating func removeAll() { table.removeAll(keepingCapacity: true); overflow.removeAll() }
}

/// Strings interned across runs: one index per distinct text.
struct NameTable: Sendable {
    private(set) var names: [String] = []
    private var indexByName: [String: Int32] = [:]

    mutating func index(of name: String) -> Int32 {
        if let index = indexByName[name] { return index }
        let index = Int32(names.count)
        names.append(name)
        indexByName[name] = index
        return index
    }

    subscript(index: Int32) -> String { names[Int(index)] }
    var count: Int { names.count }
}

/// A fixed-capacity ring that overwrites its oldest element (bounded attribution history).
struct Ring<Element: Sendable>: Sendable {
    private var storage: [Element] = []
    private var next = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity; storage.reserveCapacity(Swift.min(capacity, 1024)) }

    mutating func append(_ element: Element) {
        if storage.count < capacity { storage.append(element) } else { storage[next] = element }
        next = (next + 1) % capacity
    }

    mutating func removeAll() { storage.removeAll(keepingCapacity: true); next = 0 }

    /// Every element, in no particular order.
    func forEach(_ body: (Element) -> Void) { for element in storage { body(element) } }

    /// Elements newest first, while `body` returns true.
    func forEachNewestFirst(_ body: (Element) -> Bool) {
        guard !storage.isEmpty else { return }
        var index = (next - 1 + storage.count) % storage.count
        for _ in 0..<storage.count {
            if !body(storage[index]) { return }
            index = index == 0 ? storage.count - 1 : index - 1
        }
    }
}

extension Double {
    /// Rounds to a fixed number of decimals, so JSON output is stable and readable.
    func rounded(decimals: Int) -> Double {
        guard isFinite else { return 0 }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

@inline(__always) func milliseconds(_ ns: Int64) -> Double { Double(ns) / 1e6 }
@inline(__always) func milliseconds(_ ns: Double) -> Double { ns / 1e6 }
