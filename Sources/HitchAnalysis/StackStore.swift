import HitchReader
import HitchTrace

// Stacks, symbols and main-thread samples: the "what was the main thread doing" half of hitch
// attribution, and the writer half of the invalidation graph.

/// One run's stack definitions and symbol table (bounded), resolving stacks to function names.
struct StackStore: Sendable {
    static let stackLimit = 200_000
    static let symbolLimit = 1_000_000
    private var stacks: [UInt32: [UInt64]] = [:]
    private var symbols = SymbolTable<Int32>()

    mutating func removeAll() { stacks.removeAll(); symbols.removeAll() }

    mutating func define(_ stack: StackID, addresses: [UInt64]) {
        if stacks.count < Self.stackLimit || stacks[stack.rawValue] != nil { stacks[stack.rawValue] = addresses }
    }

    mutating func symbol(address: UInt64, size: UInt64, function: Int32) {
        guard symbols.count < Self.symbolLimit else { return }
        symbols.add(address: address, size: size, name: function)
    }

    mutating func prepare() { symbols.prepare() }

    /// The function containing `address` (NameTable index); call `prepare` first.
    func function(at address: UInt64) -> Int32? { symbols.name(at: address) }

    /// Function names of a stack, innermost first (unsymbolized frames as hex addresses).
    func frames(_ stack: UInt32, names: NameTable) -> [String] {
        guard let addresses = stacks[stack] else { return ["<stack \(stack)>"] }
        return addresses.enumerated().map { position, address in
            // Return addresses point after the call: look up address - 1 for outer frames.
            let lookup = position == 0 ? address : address &- 1
            if let function = function(at: lookup) { return names[function] }
            return "0x" + String(address, radix: 16)
        }
    }

    /// The writer of an invalidation: the innermost frame outside the recorder and Observation.
    func writer(_ stack: UInt32, names: NameTable) -> String? {
        let frames = frames(stack, names: names)
        let machinery = ["HitchTrace.", "hitch_", "unw_", "backtrace", "Observation.", "ObservationRegistrar", "withMutation", "HeadlessUI.Tracked"]
        return frames.first { frame in !machinery.contains { frame.contains($0) } } ?? frames.first
    }
}
