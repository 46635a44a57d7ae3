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

    // Accumulated over runs (each run's figures are judged at its end, then summed).
    private var prefillTokens = 0
    private var prefillNs: Int64 = 0
    private var ttftNs: [Int64] = []
    private var decodeTokens = 0
    // Integer sums: the groups are visited in hash order, and the total must not depend on it.
    private var decodeWeightBytes: UInt64 = 0
    private var decodeKVBytes: UInt64 = 0
    private var decodeOtherBytes: UInt64 = 0
    private var decodeFlops: UInt64 = 0
    private var maxKVBytesOneToken: UInt64 = 0
    private var maxWeightBytesOneToken: UInt64 = 0
    private var steps = QuantileSketch()
    private var generatedTokens = 0
    /// The resident-memory counter's maximum (docs/METRICS.md "Memory").
    private var peakResidentBytes: UInt64 = 0
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
                decodeTokens += 1
                decodeWeightBytes &+= group.weightBytes
                decodeKVBytes &+= group.kvBytes
                decodeOtherBytes &+= group.otherBytes
                decodeFlops &+= group.flops
                maxKVBytesOneToken = max(maxKVBytesOneToken, group.kvBytes)
                maxWeightBytesOneToken = max(maxWeightBytesOneToken, group.weightBytes)
                decodeEnds.append(group.endNs)
            }
        }
        if prefillEnd > prefillStart {
            prefillTokens +|= max(0, promptTokensFromMetadata ?? Int(lastPrefillIndex) + 1)
            prefillNs +|= prefillEnd - prefillStart
        }
        if let first = firstProduced, firstOpNs != .max { ttftNs.append(first - firstOpNs) }
        // Steady-state steps: between consecutive produced tokens after the first; without token
        // events, between consecutive decode groups' ends.
        let times = producedNs.isEmpty ? decodeEnds.sorted() : producedNs
        generatedTokens += producedNs.isEmpty ? decodeEnds.count : producedNs.count
        if times.count >= 2 {
            for i in 1..<times.count where times[i] > times[i - 1] { steps.add(times[i] - times[i - 1]) }
        }
    }

    func figures(names: NameTable, metadata: [String: String], peakResidentBytes: UInt64, deviceBudgetBytes: UInt64) -> DecodeFigures? {
        guard opCount > 0 else { return nil }
        var d = DecodeFigures()
        d.tokens = generatedTokens
        d.promptTokens = prefillTokens
        if !ttftNs.isEmpty { d.timeToFirstTokenMs = milliseconds(ttftNs.reduce(0.0) { $0 + Double($1) } / Double(ttftNs.count)) }
        d.prefillTokensPerSecond = prefillNs > 0 ? Double(prefillTokens) / (Double(prefillNs) / 1e9) : 0
        let medianStepNs = steps.quantile(0.5)
        if medianStepNs > 0 {
            d.tokensPerSecond = 1e9 / medianStepNs
            d.msPerToken = medianStepNs / 1e6
        }
        let fastest = steps.count > 0 ? steps.quantile(0) : 0
        d.bestTokensPerSecond = fastest > 0 ? 1e9 / fastest : 0
        if decodeTokens > 0 {
            let n = Double(decodeTokens)
            d.weightBytesPerToken = Double(decodeWeightBytes) / n
            d.kvCacheBytesPerToken = Double(decodeKVBytes) / n
            d.otherBytesPerToken = Double(decodeOtherBytes) / n
            d.bytesPerToken = d.weightBytesPerToken + d.kvCacheBytesPerToken + d.otherBytesPerToken
            d.flopsPerToken = Double(decodeFlops) / n
        }
        if medianStepNs > 0 { d.bandwidthGBps = d.bytesPerToken / (medianStepNs / 1e9) / 1e9 }
        d.peakBandwidthGBps = Double(metadata[MetadataKey.peakBandwidthGBps] ?? "") ?? 0
        d.peakBandwidthMayBeCacheBound = metadata[MetadataKey.bandwidthProbeMeetsCacheRule] == "false"
        d.peakGFLOPS = Double(metadata[MetadataKey.peakGFLOPS] ?? "") ?? 0
        if d.peakBandwidthGBps > 0 {
            d.utilization = d.bandwidthGBps / d.peakBandwidthGBps
            d.notBandwidthBound = d.utilization < AnalysisThresholds.notBandwidthBoundUtilization
        }
        if d.peakBandwidthGBps > 0 && d.peakGFLOPS > 0 { d.ridgeFlopsPerByte = d.peakGFLOPS / d.peakBandwidthGBps }
        d.threads = DecodeThreadFigures(threads: metadata[MetadataKey.decodeThreads], rates: metadata[MetadataKey.decodeTokensPerSecondByThreads])
        let totalOpNs = ops.reduce(Int64(0)) { $0.addingSaturated($1.totalNs) }
        for (index, t) in ops.enumerated() where t.count > 0 {
            var o = OpFigures()
            o.name = names[Int32(index)]
            o.computeUnit = t.computeUnit >= 0 ? names[t.computeUnit] : ""
            o.count = t.count
            o.totalMs = milliseconds(t.totalNs)
            o.timeShare = totalOpNs > 0 ? Double(t.totalNs) / Double(totalOpNs) : 0
            o.bytes = t.bytes
            o.flops = t.flops
            let seconds = Double(t.totalNs) / 1e9
            o.bandwidthGBps = seconds > 0 ? Double(t.bytes) / seconds / 1e9 : 0
            o.gflops = seconds > 0 ? Double(t.flops) / seconds / 1e9 : 0
            o.flopsPerByte = t.bytes > 0 ? Double(t.flops) / Double(t.bytes) : 0
            if d.ridgeFlopsPerByte > 0 {
                o.bound = o.flopsPerByte < d.ridgeFlopsPerByte ? .bandwidth : .compute
                let attainableGFLOPS = min(d.peakGFLOPS, o.flopsPerByte * d.peakBandwidthGBps)
                // A zero-FLOP op is judged on bandwidth alone.
                o.rooflineEfficiency = attainableGFLOPS > 0 ? o.gflops / attainableGFLOPS
                    : (d.peakBandwidthGBps > 0 ? o.bandwidthGBps / d.peakBandwidthGBps : 0)
            } else if d.peakBandwidthGBps > 0 {
                o.rooflineEfficiency = o.bandwidthGBps / d.peakBandwidthGBps
            }
            d.ops.append(o)
        }
        d.ops.sort { ($0.totalMs, $1.name) > ($1.totalMs, $0.name) }
        var m = MemoryBudget()
        let recordedWeights = UInt64(metadata[MetadataKey.weightsBytes] ?? ""), recordedKV = UInt64(metadata[MetadataKey.kvCacheBytes] ?? "")
        m.weightsBytes = recordedWeights ?? maxWeightBytesOneToken
        m.kvCacheBytes = recordedKV ?? maxKVBytesOneToken
        m.weightsBytesEstimated = recordedWeights == nil
        m.kvCacheBytesEstimated = recordedKV == nil
        m.peakResidentBytes = peakResidentBytes
        m.totalBytes = max(m.weightsBytes &+ m.kvCacheBytes, peakResidentBytes)
        m.deviceBudgetBytes = deviceBudgetBytes
        m.withinBudget = m.totalBytes <= deviceBudgetBytes
        d.memory = m
        return d
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
                peakResidentBytes = max(peakResidentBytes, UInt64(value))
            }
        default:
            break
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        endRun(promptTokensFromMetadata: context.runMetadata[MetadataKey.promptTokens].flatMap { Int($0) })
    }

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        a.decode = figures(names: context.names, metadata: a.metadata, peakResidentBytes: peakResidentBytes,
                           deviceBudgetBytes: context.options.deviceBudgetBytes)
    }
}
