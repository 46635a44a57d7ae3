/// A trace's symbols (its `.symbol` events) by address, naming the frames of its stacks: the last
/// symbol starting at or below an address names it when the address falls inside it (a symbol of
/// size 0 covers its own address). `Name` is what a user of the table keeps per symbol (a display
/// name, an interned index).
public struct SymbolTable<Name> {
    @usableFromInline var entries: [(address: UInt64, size: UInt64, name: Name)] = []
    @usableFromInline var sorted = true

    public init() {}

    public var count: Int { entries.count }

    public mutating func add(address: UInt64, size: UInt64, name: Name) {
        if let last = entries.last, last.address > address { sorted = false }
        entries.append((address, max(size, 1), name))
    }

    public mutating func removeAll() {
        entries.removeAll()
        sorted = true
    }

    /// Orders the symbols by address (of two at one address, the later added wins); call after
    /// adding and before `name(at:)`.
    public mutating func prepare() {
        if !sorted { entries.sort { $0.address < $1.address }; sorted = true }
    }

    /// The name of the symbol holding `address`, if one does.
    @inlinable
    public func name(at address: UInt64) -> Name? {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].address <= address { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let symbol = entries[low - 1]
        return address &- symbol.address < symbol.size ? symbol.name : nil
    }
}

extension SymbolTable: Sendable where Name: Sendable {}
