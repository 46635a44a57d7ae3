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

/// A main-thread sample, kept briefly for hitch attribution.
struct SampleInstance: Sendable {
    var atNs: Int64
    var stack: UInt32
}

/// Main-thread samples: folded profiles of all samples and of those in hitching frames.
struct SampleProfile: Sendable {
    static let foldedLimit = 500
    var recent = Ring<SampleInstance>(capacity: 65_536)
    /// Samples per stack id this run: dense below `denseStacks`, a dictionary above (odd ids).
    private var runAllDense: [Int] = []
    private var runAll: [UInt32: Int] = [:]
    static let denseStacks: UInt32 = 1 << 20
    private var runInHitches: [UInt32: Int] = [:]
    private var runOffenders: [UInt32: (ms: Double, frames: Int)] = [:]
    private var folded: [String: Int] = [:]
    private var foldedInHitches: [String: Int] = [:]
    private(set) var functionOffenders: [String: (ms: Double, frames: Int)] = [:]
    private(set) var mainThreadSamples = 0
    private(set) var samplesInHitches = 0

    mutating func beginRun() { recent.removeAll() }

    mutating func sample(stack: StackID, atNs: Int64) {
        mainThreadSamples += 1
        let raw = stack.rawValue
        if raw < Self.denseStacks {
            if Int(raw) >= runAllDense.count { runAllDense.append(contentsOf: repeatElement(0, count: Int(raw) + 1 - runAllDense.count)) }
            runAllDense[Int(raw)] += 1
        } else {
            runAll[raw, default: 0] += 1
        }
        recent.append(SampleInstance(atNs: atNs, stack: stack.rawValue))
    }

    /// The samples already seen inside a hitching frame's window, per stack.
    func countInWindow(startNs: Int64, endNs: Int64) -> [UInt32: Int] {
        var counts: [UInt32: Int] = [:]
        var before = 0
        recent.forEachNewestFirst { sample in
            if sample.atNs < startNs { before += 1; return before < Analyzer.scanSlack }
            before = 0
            if sample.atNs < endNs { counts[sample.stack, default: 0] += 1 }
            return true
        }
        return counts
    }

    /// Adds a closed hitch window's samples (per stack) to the in-hitch profile and the offenders.
    mutating func addHitchWindow(_ counts: [UInt32: Int], hitchMs: Double) {
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return }
        samplesInHitches += total
        for (stack, count) in counts {
            runInHitches[stack, default: 0] += count
            let share = Double(count) / Double(total)
            runOffenders[stack, default: (0, 0)].ms += hitchMs * share
            runOffenders[stack, default: (0, 0)].frames += 1
        }
    }

    /// Symbolizes this run's counts and merges them by function names.
    mutating func endRun(stacks: StackStore, names: NameTable) {
        for (raw, count) in runAllDense.enumerated() where count > 0 { runAll[UInt32(raw), default: 0] += count }
        runAllDense.removeAll(keepingCapacity: true)
        for (stack, count) in runAll {
            folded[stacks.frames(stack, names: names).reversed().joined(separator: ";"), default: 0] += count
        }
        for (stack, count) in runInHitches {
            foldedInHitches[stacks.frames(stack, names: names).reversed().joined(separator: ";"), default: 0] += count
        }
        for (stack, value) in runOffenders {
            let leaf = stacks.frames(stack, names: names).first ?? "?"
            functionOffenders[leaf, default: (0, 0)].ms += value.ms
            functionOffenders[leaf, default: (0, 0)].frames += value.frames
        }
        runAll.removeAll(); runInHitches.removeAll(); runOffenders.removeAll()
        // Bound the merged profiles: keep the heaviest stacks.
        if folded.count > 20_000 { folded = Self.top(folded, 10_000) }
        if foldedInHitches.count > 20_000 { foldedInHitches = Self.top(foldedInHitches, 10_000) }
    }

    private static func top(_ counts: [String: Int], _ k: Int) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(k).map { ($0.key, $0.value) })
    }

    func figures() -> SampleFigures {
        func list(_ counts: [String: Int]) -> [FoldedStack] {
            counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(Self.foldedLimit).map {
                var f = FoldedStack(); f.stack = $0.key; f.count = $0.value; return f
            }
        }
        var s = SampleFigures()
        s.mainThreadSamples = mainThreadSamples
        s.samplesInHitches = samplesInHitches
        s.folded = list(folded)
        s.foldedInHitches = list(foldedInHitches)
        return s
    }
}
