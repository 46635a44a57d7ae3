import HitchReader
import HitchTrace

/// Main-thread samples: the folded profile of all samples (those in hitching frames: `HitchAttributionPass`,
/// which reads the samples this pass publishes).
struct SampleProfilePass: Sendable {
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

extension SampleProfilePass: AnalysisPass {
    static var reads: PayloadKinds { .sample }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        if resolved.role == .main, case .sample(let stack) = event.payload {
            sample(stack: stack, atNs: resolved.startNs)
            context.mainThreadSamples.append(SampleInstance(atNs: resolved.startNs, stack: stack.rawValue))
        }
    }

    mutating func endRun(_ context: inout PassContext) { endRun(stacks: context.stacks, names: context.names) }

    func contribute(to a: inout Analysis, _ context: inout PassContext) { a.samples = figures() }
}
