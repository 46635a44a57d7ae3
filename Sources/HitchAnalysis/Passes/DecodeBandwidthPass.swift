import HitchReader
import HitchTrace

// Decode memory bandwidth from inference-op events (docs/METRICS.md "Decode bandwidth").
// Ops are grouped by token index (a handful per token; tokens are few), and the groups are judged
// at the end of a run: groups that start before the first produced token are prefill, the rest decode.

/// What an op's bytes are, from its name (the op event carries one byte count).
enum OpByteKind: Sendable {
    case weights, kvCache, other

    /// What the producer recorded on the op (`byteKind`), nil when it did not say.
    init?(_ recorded: InferenceByteKind) {
        switch recorded {
        case .unspecified: return nil
        case .weights: self = .weights
        case .kvCache: self = .kvCache
        case .activations: self = .other
        }
    }

    /// The fallback for ops without a recorded `byteKind` (older traces, other producers):
    /// `attention` (and ops named `kv...` or `...kv-cache`/`kv_cache`) reads the KV cache; `sample`,
    /// `rope`, `softmax` and `detokenize` move activations; every other op streams weights.
    static func of(_ name: String) -> OpByteKind {
        let lower = name.lowercased()
        if lower == "attention" || lower.hasPrefix("attention ") || lower.hasPrefix("kv") || lower.contains("kv-cache")
            || lower.contains("kv_cache") || lower.contains("kvcache") { return .kvCache }
        if lower == "sample" || lower == "rope" || lower == "softmax" || lower == "detokenize" { return .other }
        return .weights
    }
}

struct DecodeBandwidthPass: Sendable {
    struct OpTotals: Sendable {
        var count = 0
        var totalNs: Int64 = 0
        var bytes: UInt64 = 0
        var flops: UInt64 = 0
        var computeUnit: Int32 = -1
        var kind: OpByteKind = .weights
        var kindKnown = false
    }
    struct TokenGroup: Sendable {
        var startNs: Int64 = .max
        var endNs: Int64 = .min
        var weightBytes: UInt64 = 0
        var kvBytes: UInt64 = 0
        var otherBytes: UInt64 = 0
        var flops: UInt64 = 0
    }
    static let tokenLimit = 1 << 20

    private(set) var ops: [OpTotals] = []
    private var groups: [Int32: TokenGroup] = [:]
    private var producedNs: [Int64] = []
    private var firstOpNs: Int64 = .max
    private(set) var opCount = 0
    private(set) var runsWithOps = 0

    /// Accumulated over runs (each run's token groups are judged at its end, then summed); the ops
    /// are added by name when the figures are made.
    private var totals = DecodeTotals()
    private var residentCounter: Int32 = -1

    mutating func op(_ op: InferenceOp, name: Int32, computeUnit: Int32, startNs: Int64, kindOf: (Int32) -> OpByteKind) {
        opCount += 1
        let index = Int(name)
        if index >= ops.count { ops.append(contentsOf: repeatElement(OpTotals(), count: index + 1 - ops.count)) }
        // The op's own word when recorded; else the name rule, judged once per op name.
        let kind: OpByteKind
        if let recorded = OpByteKind(op.byteKind) {
            kind = recorded
        } else {
            if !ops[index].kindKnown { ops[index].kind = kindOf(name); ops[index].kindKnown = true }
            kind = ops[index].kind
        }
        let duration = max(0, op.endNs - startNs)
        let bytes = op.bytesRead &+ op.bytesWritten
        ops[index].count += 1
        ops[index].totalNs +|= duration
        ops[index].bytes &+= bytes
        ops[index].flops &+= op.flops
        ops[index].computeUnit = computeUnit
        firstOpNs = min(firstOpNs, startNs)
        if groups[op.tokenIndex] == nil && groups.count >= Self.tokenLimit { return }
        var group = groups[op.tokenIndex] ?? TokenGroup()
        group.startNs = min(group.startNs, startNs)
        group.endNs = max(group.endNs, op.endNs)
        switch kind {
        case .weights: group.weightBytes &+= bytes
        case .kvCache: group.kvBytes &+= bytes
        case .other: group.otherBytes &+= bytes
        }
        group.flops &+= op.flops
        groups[op.tokenIndex] = group
    }

    mutating func tokenProduced(atNs: Int64) {
        if producedNs.count < Self.tokenLimit { producedNs.append(atNs) }
    }

    /// Judges this run's token groups (prefill vs decode) and decode steps.
    mutating func endRun(promptTokensFromMetadata: Int?) {
        defer { groups.removeAll(); producedNs.removeAll(); firstOpNs = .max }
        guard !groups.isEmpty else { return }
        runsWithOps += 1
        producedNs.sort()
        let firstProduced = producedNs.first
        var prefillStart = Int64.max, prefillEnd = Int64.min, lastPrefillIndex: Int32 = -1
        var decodeEnds: [Int64] = []
        for (index, group) in groups {
            let isPrefill = firstProduced.map { group.startNs < $0 } ?? false
            if isPrefill {
                prefillStart = min(prefillStart, group.startNs)
                prefillEnd = max(prefillEnd, group.endNs)
                lastPrefillIndex = max(lastPrefillIndex, index)
            } else {
                totals.decodeTokens += 1
                totals.decodeWeightBytes &+= group.weightBytes
                totals.decodeKVBytes &+= group.kvBytes
                totals.decodeOtherBytes &+= group.otherBytes
                totals.decodeFlops &+= group.flops
                totals.maxKVBytesOneToken = max(totals.maxKVBytesOneToken, group.kvBytes)
                totals.maxWeightBytesOneToken = max(totals.maxWeightBytesOneToken, group.weightBytes)
                decodeEnds.append(group.endNs)
            }
        }
        if prefillEnd > prefillStart {
            totals.prefillTokens +|= max(0, promptTokensFromMetadata ?? Int(lastPrefillIndex) + 1)
            totals.prefillNs +|= prefillEnd - prefillStart
        }
        if let first = firstProduced, firstOpNs != .max {
            totals.timeToFirstTokenSumNs +|= first - firstOpNs
            totals.timeToFirstTokenCount += 1
        }
        // Steady-state steps: between consecutive produced tokens after the first; without token
        // events, between consecutive decode groups' ends.
        let times = producedNs.isEmpty ? decodeEnds.sorted() : producedNs
        totals.tokens += producedNs.isEmpty ? decodeEnds.count : producedNs.count
        if times.count >= 2 {
            for i in 1..<times.count where times[i] > times[i - 1] { totals.steps.add(times[i] - times[i - 1]) }
        }
    }

    /// Every run's totals, the ops named; nil without inference ops.
    func totals(names: NameTable) -> DecodeTotals? {
        guard opCount > 0 else { return nil }
        var t = totals
        t.opCount = opCount
        for (index, op) in ops.enumerated() where op.count > 0 {
            t.ops[names[Int32(index)], default: DecodeOpTotals()].merge(
                DecodeOpTotals(count: op.count, totalNs: op.totalNs, bytes: op.bytes, flops: op.flops,
                               computeUnit: op.computeUnit >= 0 ? names[op.computeUnit] : ""))
        }
        return t
    }
}

extension DecodeBandwidthPass: AnalysisPass {
    static var reads: PayloadKinds { [.inferenceOp, .token, .counter] }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        switch event.payload {
        case .inferenceOp(var inference):
            inference.endNs = resolved.endNs
            let names = context.names
            op(inference, name: resolved.name, computeUnit: resolved.secondName, startNs: resolved.startNs) { OpByteKind.of(names[$0]) }
        case .token(let token):
            if token.stage == .produced { tokenProduced(atNs: resolved.startNs) }
        case .counter(_, let value):
            if residentCounter < 0 { residentCounter = context.names.index(of: ProcessMemory.residentCounterName.string) }
            if resolved.name == residentCounter, value.isFinite, value > 0, value < 1.8e19 {
                totals.peakResidentBytes = max(totals.peakResidentBytes, UInt64(value))
            }
        default:
            break
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        endRun(promptTokensFromMetadata: context.runMetadata[MetadataKey.promptTokens].flatMap { Int($0) })
    }

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        let totals = totals(names: context.names)
        context.mergeable.decode = totals
        a.decode = totals?.figures(metadata: a.metadata, deviceBudgetBytes: context.options.deviceBudgetBytes)
    }
}
