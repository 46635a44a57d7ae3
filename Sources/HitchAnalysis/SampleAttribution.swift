import HitchTrace

// Stacks, symbols and main-thread samples: the "what was the main thread doing" half of hitch
// attribution, and the writer half of the invalidation graph.

/// One run's stack definitions and symbol table (bounded), resolving stacks to function names.
struct StackStore: Sendable {
    static let stackLimit = 200_000
    static let symbolLimit = 1_000_000
    private var stacks: [UInt32: [UInt64]] = [:]
    private var symbols: [(address: UInt64, size: UInt64, function: Int32)] = []
    private var sorted = true

    mutating func removeAll() { stacks.removeAll(); symbols.removeAll(); sorted = true }

    mutating func define(_ stack: StackID, addresses: [UInt64]) {
        if stacks.count < Self.stackLimit || stacks[stack.rawValue] != nil { stacks[stack.rawValue] = addresses }
    }

    mutating func symbol(address: UInt64, size: UInt64, function: Int32) {
        guard symbols.count < Self.symbolLimit else { return }
        if let last = symbols.last, last.address > address { sorted = false }
        symbols.append((address, max(1, size), function))
    }

    mutating func prepare() {
        if !sorted { symbols.sort { $0.address < $1.address }; sorted = true }
    }

    /// The function containing `address` (NameTable index), via binary search; call `prepare` first.
    func function(at address: UInt64) -> Int32? {
        var low = 0, high = symbols.count
        while low < high {
            let mid = (low + high) / 2
            if symbols[mid].address <= address { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let candidate = symbols[low - 1]
        return address &- candidate.address < candidate.size ? candidate.function : nil
    }

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

/// Main-thread samples: the folded profile of all samples (those in hitching frames: `HitchAttributionPass`,
/// which reads the samples this pass publishes).
struct SampleProfile: Sendable {
    static let foldedLimit = 500
    /// Samples per stack id this run: dense below `denseStacks`, a dictionary above (odd ids).
    private var runAllDense: [Int] = []
    private var runAll: [UInt32: Int] = [:]
    static let denseStacks: UInt32 = 1 << 20
    private var folded: [String: Int] = [:]
    private(set) var mainThreadSamples = 0

    mutating func sample(stack: StackID, atNs: Int64) {
        mainThreadSamples += 1
        let raw = stack.rawValue
        if raw < Self.denseStacks {
            if Int(raw) >= runAllDense.count { runAllDense.append(contentsOf: repeatElement(0, count: Int(raw) + 1 - runAllDense.count)) }
            runAllDense[Int(raw)] += 1
        } else {
            runAll[raw, default: 0] += 1
        }
    }

    /// Symbolizes this run's counts and merges them by function names.
    mutating func endRun(stacks: StackStore, names: NameTable) {
        for (raw, count) in runAllDense.enumerated() where count > 0 { runAll[UInt32(raw), default: 0] += count }
        runAllDense.removeAll(keepingCapacity: true)
        for (stack, count) in runAll {
            folded[stacks.frames(stack, names: names).reversed().joined(separator: ";"), default: 0] += count
        }
        runAll.removeAll()
        // Bound the merged profile: keep the heaviest stacks.
        if folded.count > 20_000 { folded = Self.top(folded, 10_000) }
    }

    static func top(_ counts: [String: Int], _ k: Int) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(k).map { ($0.key, $0.value) })
    }

    static func list(_ counts: [String: Int]) -> [FoldedStack] {
        counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(foldedLimit).map {
            var f = FoldedStack(); f.stack = $0.key; f.count = $0.value; return f
        }
    }

    /// The profile of every main-thread sample (the in-hitch half is filled by hitch attribution).
    func figures() -> SampleFigures {
        var s = SampleFigures()
        s.mainThreadSamples = mainThreadSamples
        s.folded = Self.list(folded)
        return s
    }
}

extension SampleProfile: AnalysisPass {
    static var reads: PayloadKinds { .sample }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        if resolved.role == .main, case .sample(let stack) = event.payload {
            sample(stack: stack, atNs: resolved.startNs)
            context.mainThreadSamples.append(SampleInstance(atNs: resolved.startNs, stack: stack.rawValue))
        }
    }

    mutating func endRun(_ context: inout PassContext) { endRun(stacks: context.stacks, names: context.names) }

    func contribute(to a: inout Analysis, _ context: PassContext) { a.samples = figures() }
}
