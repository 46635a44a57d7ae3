// One decoding context: activation buffers, the KV cache and the op tasks, all allocated in init and
// reused by every step. Each op is recorded (Trace.inferenceOp) with the bytes it reads and writes as
// they follow from the weight format, and its FLOPs.

import Foundation
import HitchAlgorithms
import HitchTrace

/// How the next token is picked: greedy (top-k 1 or temperature 0), or, as llama.cpp's sampler chain
/// orders them, the k best logits, then the smallest prefix of those whose probability (softmax of
/// the logits) reaches top-p, then a draw at `temperature` from a generator seeded with `seed`.
public struct SamplingOptions: Sendable, Equatable {
    /// 1 = greedy (argmax).
    public var topK: Int
    public var temperature: Float
    public var seed: UInt64
    /// 1 = off.
    public var topP: Float
    public init(topK: Int = 1, temperature: Float = 0.8, seed: UInt64 = 1, topP: Float = 1) {
        self.topK = topK; self.temperature = temperature; self.seed = seed; self.topP = topP
    }
    public var isGreedy: Bool { topK <= 1 || temperature <= 0 }
    public static let greedy = SamplingOptions()
    public static let maxTopK = 64
}

/// Bytes and FLOPs one decode step's ops accounted for (the same figures its op events carry).
public struct StepAccounting: Sendable, Equatable {
    public var bytesRead: UInt64 = 0
    public var bytesWritten: UInt64 = 0
    public var flops: UInt64 = 0
    /// Of `bytesRead`: weights (matrices, norm gains, the embedding row).
    public var weightBytes: UInt64 = 0
    /// Of `bytesRead`: keys and values read from the KV cache.
    public var kvCacheBytes: UInt64 = 0
    public var opCount = 0
}

public enum DecodeError: Error, CustomStringConvertible {
    case contextFull(context: Int)
    case tokenOutOfRange(token: Int, vocab: Int)
    public var description: String {
        switch self {
        case .contextFull(let context): return "the KV cache is full (--context \(context) positions)"
        case .tokenOutOfRange(let token, let vocab): return "token \(token) is outside the vocabulary (0..<\(vocab))"
        }
    }
}

public final class DecodeSession {
    public let weights: TransformerWeights
    public let shape: ModelShape
    let pool: WorkerPool
    /// The next position to fill (tokens in the KV cache).
    public internal(set) var position = 0
    /// Accounting of the most recent `step` (or prefill), plus any `sample` since.
    public internal(set) var lastStep = StepAccounting()
    /// Logits of the last token run (vocab floats).
    public let logits: UnsafeMutablePointer<Float>
    /// Tokens batched per prefill matrix product.
    public let prefillBatch: Int

    let x, normed, projected, qkv, hidden, gated: UnsafeMutablePointer<Float>
    let keyCache, valueCache, scores, cosines, sines: UnsafeMutablePointer<Float>
    /// RoPE tables of a sliding window's own base (the same as `cosines`/`sines` without one).
    let localCosines, localSines: UnsafeMutablePointer<Float>
    private let batchX, batchNormed, batchQKV, batchAttention, batchProjected, batchHidden, batchGated: UnsafeMutablePointer<Float>
    private let topIndices: UnsafeMutablePointer<Int>
    private let topValues: UnsafeMutablePointer<Float>
    private var allocations: [UnsafeMutablePointer<Float>] = []
    let matvec: MatvecTask
    private let batchMatmul: BatchMatmulTask
    let attention: AttentionTask
    private var rng: SeededGenerator
    private var sampling: SamplingOptions
    var recordingToken: Int32 = 0

    private static let cpu: TraceName = "cpu"

    public init(weights: TransformerWeights, pool: WorkerPool, sampling: SamplingOptions = .greedy, prefillBatch: Int = 32) {
        self.weights = weights; self.shape = weights.shape; self.pool = pool
        self.sampling = sampling; rng = SeededGenerator(seed: sampling.seed)
        let s = weights.shape
        self.prefillBatch = max(1, min(prefillBatch, s.context))
        var allocations: [UnsafeMutablePointer<Float>] = []
        func buffer(_ count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(count, 16))
            p.initialize(repeating: 0, count: max(count, 16))
            allocations.append(p)
            return p
        }
        logits = buffer(s.vocab)
        // `normed` also takes the attention output (queryDim wide).
        x = buffer(s.dim); normed = buffer(max(s.dim, s.queryDim)); projected = buffer(s.dim)
        qkv = buffer(s.qkvRows); hidden = buffer(2 * s.ffn); gated = buffer(s.ffn)
        keyCache = buffer(s.layers * s.context * s.kvDim)
        valueCache = buffer(s.layers * s.context * s.kvDim)
        scores = buffer(s.heads * s.context)
        cosines = buffer(s.context * s.headDim / 2); sines = buffer(s.context * s.headDim / 2)
        localCosines = buffer(s.context * s.headDim / 2); localSines = buffer(s.context * s.headDim / 2)
        let b = self.prefillBatch
        batchX = buffer(b * s.dim); batchNormed = buffer(b * s.dim); batchQKV = buffer(b * s.qkvRows)
        batchAttention = buffer(b * max(s.dim, s.queryDim)); batchProjected = buffer(b * s.dim)
        batchHidden = buffer(b * 2 * s.ffn); batchGated = buffer(b * s.ffn)
        topIndices = .allocate(capacity: SamplingOptions.maxTopK + 1)
        topValues = .allocate(capacity: SamplingOptions.maxTopK + 1)
        self.allocations = allocations
        for (base, cosines, sines) in [(weights.ropeBase, cosines, sines),
                                       (weights.slidingWindow?.ropeBase ?? weights.ropeBase, localCosines, localSines)] {
            Self.fillRoPETables(base: base, shape: s, asGGML: weights.ggmlNumerics, cosines: cosines, sines: sines)
        }
        matvec = MatvecTask(placeholder: weights.output, x: x, y: logits, maxColumns: max(s.dim, s.ffn, s.queryDim))
        batchMatmul = BatchMatmulTask(placeholder: weights.output, x: x, y: logits)
        attention = AttentionTask(shape: s, scores: scores, placeholder: x, asGGML: weights.ggmlNumerics)
    }

    /// cos and sin of every position's angle per dimension pair, for RoPE of base `base`.
    private static func fillRoPETables(base: Double, shape s: ModelShape, asGGML: Bool,
                                       cosines: UnsafeMutablePointer<Float>, sines: UnsafeMutablePointer<Float>) {
        for position in 0..<s.context {
            if asGGML {
                // As ggml's rope cache: the angle multiplied along in float, cosf/sinf of it.
                let step = powf(Float(base), -2 / Float(s.headDim))
                var angle = Float(position)
                for pair in 0..<(s.headDim / 2) {
                    cosines[position * s.headDim / 2 + pair] = cosf(angle)
                    sines[position * s.headDim / 2 + pair] = sinf(angle)
                    angle *= step
                }
                continue
            }
            for pair in 0..<(s.headDim / 2) {
                let frequency = pow(base, -2 * Double(pair) / Double(s.headDim))
                let angle = Double(position) * frequency
                cosines[position * s.headDim / 2 + pair] = Float(cos(angle))
                sines[position * s.headDim / 2 + pair] = Float(sin(angle))
            }
        }
    }

    deinit {
        for p in allocations { p.deallocate() }
        topIndices.deallocate(); topValues.deallocate()
    }

    /// Empties the KV cache (buffers are kept).
    public func reset(sampling: SamplingOptions? = nil) {
        position = 0
        if let sampling { self.sampling = sampling }
        rng = SeededGenerator(seed: self.sampling.seed)
    }

    /// Bytes of the KV cache as allocated (every position of the context).
    public var kvCacheCapacityBytes: Int { shape.kvCacheBytes(positions: shape.context) }

    // MARK: Recording

    /// False: ops are counted in `lastStep` but record no events (a measurement before a recording's
    /// decode, `DecodeThreadChoice`).
    var recordsOps = true

    @inline(__always)
    func op<R>(_ name: TraceName, layer: Int, read: Int, written: Int, flops: Int,
                       weightBytes: Int = 0, kvBytes: Int = 0, _ body: () -> R) -> R {
        lastStep.bytesRead &+= UInt64(read)
        lastStep.bytesWritten &+= UInt64(written)
        lastStep.flops &+= UInt64(flops)
        lastStep.weightBytes &+= UInt64(weightBytes)
        lastStep.kvCacheBytes &+= UInt64(kvBytes)
        lastStep.opCount += 1
        guard recordsOps else { return body() }
        // What the op's reads are, as the op itself says (the analyzer trusts this over op names).
        let reads: InferenceByteKind = kvBytes > 0 ? .kvCache : weightBytes > 0 ? .weights : .activations
        return Trace.inferenceOp(name, layer: Int32(layer), computeUnit: Self.cpu, tokenIndex: recordingToken,
                                 bytesRead: UInt64(read), bytesWritten: UInt64(written), flops: UInt64(flops), reads: reads, body)
    }

    func kvRow(_ cache: UnsafeMutablePointer<Float>, layer: Int, position: Int) -> UnsafeMutablePointer<Float> {
        cache + (layer * shape.context + position) * shape.kvDim
    }

    // MARK: Decode

    /// Runs `token` at the next position; the logits are left in `logits` (unless `computeLogits` is
    /// false: a prompt token whose successor is known needs no output head).
    public func step(token: Int, computeLogits: Bool = true) throws {
        let s = shape
        guard position < s.context else { throw DecodeError.contextFull(context: s.context) }
        guard token >= 0 && token < s.vocab else { throw DecodeError.tokenOutOfRange(token: token, vocab: s.vocab) }
        lastStep = StepAccounting()
        recordingToken = Int32(truncatingIfNeeded: position)
        switch weights.architecture {
        case .llama: stepLlama(token: token, computeLogits: computeLogits)
        case .gemma3: stepGemma3(token: token, computeLogits: computeLogits)
        }
    }

    /// The llama forward pass of one token (the position and token are checked).
    private func stepLlama(token: Int, computeLogits: Bool) {
        let s = shape
        let dim = s.dim, f = 4
        let w = weights
        let rowBytes = w.embedding.rowByteCount
        op("embed", layer: -1, read: rowBytes, written: dim * f, flops: 0, weightBytes: rowBytes) {
            w.embedding.dequantizeRow(token, into: x)
        }
        let positions = position + 1
        let ropeTable = position * s.headDim / 2
        for (l, layer) in w.layers.enumerated() {
            op("rmsnorm", layer: l, read: 2 * dim * f, written: dim * f, flops: 4 * dim, weightBytes: dim * f) {
                rmsNorm(x, gain: layer.attentionNorm, count: dim, epsilon: w.normEpsilon, into: normed)
            }
            op("qkv", layer: l, read: layer.qkv.byteCount + dim * f, written: s.qkvRows * f,
               flops: 2 * s.qkvRows * dim, weightBytes: layer.qkv.byteCount) {
                matvec.run(layer.qkv, x: normed, y: qkv, pool: pool)
            }
            op("rope", layer: l, read: (dim + 2 * s.kvDim + s.headDim) * f, written: (dim + 3 * s.kvDim) * f,
               flops: 3 * (dim + s.kvDim)) {
                applyRoPE(qkv, heads: s.heads, headDim: s.headDim, cosines: cosines + ropeTable, sines: sines + ropeTable)
                applyRoPE(qkv + dim, heads: s.kvHeads, headDim: s.headDim, cosines: cosines + ropeTable, sines: sines + ropeTable)
                if w.ggmlNumerics {
                    // llama.cpp's f16 KV cache; its one-query attention rounds the query too, its
                    // tiled prompt attention keeps it f32.
                    let queries = attention.tiledPrompt ? dim : 0
                    roundToHalf(qkv + queries, count: s.qkvRows - queries)
                }
                kvRow(keyCache, layer: l, position: position).update(from: qkv + dim, count: s.kvDim)
                kvRow(valueCache, layer: l, position: position).update(from: qkv + dim + s.kvDim, count: s.kvDim)
            }
            let kvBytes = 2 * positions * s.kvDim * f
            op("attention", layer: l, read: dim * f + kvBytes, written: dim * f,
               flops: 4 * s.heads * positions * s.headDim + 5 * s.heads * positions, kvBytes: kvBytes) {
                attention.query = UnsafePointer(qkv)
                attention.keys = UnsafePointer(kvRow(keyCache, layer: l, position: 0))
                attention.values = UnsafePointer(kvRow(valueCache, layer: l, position: 0))
                attention.output = normed
                attention.positions = positions
                pool.run(attention, chunkCount: s.heads)
            }
            op("attn-out", layer: l, read: layer.attentionOutput.byteCount + 2 * dim * f, written: dim * f,
               flops: 2 * dim * dim + dim, weightBytes: layer.attentionOutput.byteCount) {
                matvec.run(layer.attentionOutput, x: normed, y: projected, pool: pool)
                addInPlace(x, projected, count: dim)
            }
            op("rmsnorm", layer: l, read: 2 * dim * f, written: dim * f, flops: 4 * dim, weightBytes: dim * f) {
                rmsNorm(x, gain: layer.ffnNorm, count: dim, epsilon: w.normEpsilon, into: normed)
            }
            // llama.cpp runs the last layer's feed-forward on the output row only: one row, summed
            // as a single token's.
            if l == w.layers.count - 1 { matvec.promptRow = nil }
            op("gate/up", layer: l, read: layer.gateUp.byteCount + dim * f, written: s.ffn * f,
               flops: 4 * s.ffn * dim + 6 * s.ffn, weightBytes: layer.gateUp.byteCount) {
                matvec.run(layer.gateUp, x: normed, y: hidden, pool: pool)
                swiGLU(gate: hidden, up: hidden + s.ffn, count: s.ffn, into: gated)
            }
            op("down", layer: l, read: layer.down.byteCount + (s.ffn + dim) * f, written: dim * f,
               flops: 2 * dim * s.ffn + dim, weightBytes: layer.down.byteCount) {
                matvec.run(layer.down, x: gated, y: projected, pool: pool)
                addInPlace(x, projected, count: dim)
            }
        }
        position += 1
        guard computeLogits else { return }
        computeLogitsOfX()
    }

    /// The final norm of the residual stream `x` and the output head: the logits of the last token.
    func computeLogitsOfX() {
        let s = shape, w = weights, dim = s.dim, f = 4
        op("rmsnorm", layer: -1, read: 2 * dim * f, written: dim * f, flops: 4 * dim, weightBytes: dim * f) {
            rmsNorm(x, gain: w.finalNorm, count: dim, epsilon: w.normEpsilon, into: normed)
        }
        op("output head", layer: -1, read: w.output.byteCount + dim * f, written: s.vocab * f,
           flops: 2 * s.vocab * dim, weightBytes: w.output.byteCount) {
            matvec.run(w.output, x: normed, y: logits, pool: pool)
        }
    }

    /// Picks the next token from `logits` (greedy, or top-k with temperature), recorded as the `sample` op.
    public func sample() -> Int {
        let vocab = shape.vocab
        let k = sampling.isGreedy ? 1 : min(max(1, sampling.topK), SamplingOptions.maxTopK, vocab)
        return op("sample", layer: -1, read: vocab * 4, written: 4, flops: vocab * (k == 1 ? 1 : 2)) {
            if k == 1 { return argmax(logits, count: vocab) }
            return sampleTopK(k)
        }
    }

    private func sampleTopK(_ k: Int) -> Int {
        // Keep the k largest in a small sorted array (descending); most logits fail the first compare.
        var filled = 0
        for i in 0..<shape.vocab {
            let v = logits[i]
            if filled == k && v <= topValues[k - 1] { continue }
            var j = min(filled, k - 1)
            while j > 0 && topValues[j - 1] < v {
                topValues[j] = topValues[j - 1]; topIndices[j] = topIndices[j - 1]; j -= 1
            }
            topValues[j] = v; topIndices[j] = i
            if filled < k { filled += 1 }
        }
        if sampling.topP < 1 {
            // Keep the smallest prefix (by descending logit) whose probability reaches top-p.
            var mass: Float = 0
            for j in 0..<filled { mass += expf(topValues[j] - topValues[0]) }
            var kept: Float = 0
            for j in 0..<filled {
                kept += expf(topValues[j] - topValues[0]) / mass
                if kept >= sampling.topP { filled = j + 1; break }
            }
        }
        let temperature = max(sampling.temperature, 1e-3)
        var total: Float = 0
        for j in 0..<filled {
            topValues[j] = expf((topValues[j] - topValues[0]) / temperature)
            total += topValues[j]
        }
        var threshold = rng.nextUnit() * total
        for j in 0..<filled {
            threshold -= topValues[j]
            if threshold < 0 { return topIndices[j] }
        }
        return topIndices[filled - 1]
    }

    // MARK: Prefill

    /// Runs every prompt token through the model as batched matrix products (weights read once per
    /// batch); the logits of the last token are left in `logits`.
    public func prefill(tokens: [Int]) throws {
        guard !tokens.isEmpty else { return }
        let s = shape
        guard position + tokens.count <= s.context else { throw DecodeError.contextFull(context: s.context) }
        if let bad = tokens.first(where: { $0 < 0 || $0 >= s.vocab }) {
            throw DecodeError.tokenOutOfRange(token: bad, vocab: s.vocab)
        }
        if weights.ggmlNumerics {
            // As llama.cpp computes the prompt, one batch: every product through the int8-activation
            // kernels, each row summed as its batched paths sum it (the repacked q4_K gemm, the tiled
            // q6_K matmul and, from 64 tokens, the tiled attention).
            attention.tiledPrompt = tokens.count >= AttentionTask.tiledPromptRows
            defer { matvec.promptRow = nil; attention.tiledPrompt = false }
            for (index, token) in tokens.enumerated() {
                matvec.promptRow = (index, tokens.count)
                try step(token: token, computeLogits: index == tokens.count - 1)
            }
            return
        }
        var start = 0
        lastStep = StepAccounting()
        while start < tokens.count {
            let count = min(prefillBatch, tokens.count - start)
            prefillBatch(Array(tokens[start..<(start + count)]), isLast: start + count == tokens.count)
            start += count
        }
    }

    private func prefillBatch(_ tokens: [Int], isLast: Bool) {
        let s = shape, dim = s.dim, f = 4, n = tokens.count
        let w = weights
        let first = position
        recordingToken = Int32(truncatingIfNeeded: first + n - 1)
        let rowBytes = w.embedding.rowByteCount
        op("embed", layer: -1, read: n * rowBytes, written: n * dim * f, flops: 0, weightBytes: n * rowBytes) {
            for (t, token) in tokens.enumerated() { w.embedding.dequantizeRow(token, into: batchX + t * dim) }
        }
        for (l, layer) in w.layers.enumerated() {
            op("rmsnorm", layer: l, read: (n + 1) * dim * f, written: n * dim * f, flops: 4 * n * dim, weightBytes: dim * f) {
                for t in 0..<n { rmsNorm(batchX + t * dim, gain: layer.attentionNorm, count: dim, epsilon: w.normEpsilon, into: batchNormed + t * dim) }
            }
            op("qkv", layer: l, read: layer.qkv.byteCount + n * dim * f, written: n * s.qkvRows * f,
               flops: 2 * n * s.qkvRows * dim, weightBytes: layer.qkv.byteCount) {
                batchMatmul.run(layer.qkv, x: batchNormed, tokens: n, y: batchQKV, outputStride: s.qkvRows, pool: pool)
            }
            op("rope", layer: l, read: n * (dim + 2 * s.kvDim + s.headDim) * f, written: n * (dim + 3 * s.kvDim) * f,
               flops: 3 * n * (dim + s.kvDim)) {
                for t in 0..<n {
                    let row = batchQKV + t * s.qkvRows, table = (first + t) * s.headDim / 2
                    applyRoPE(row, heads: s.heads, headDim: s.headDim, cosines: cosines + table, sines: sines + table)
                    applyRoPE(row + dim, heads: s.kvHeads, headDim: s.headDim, cosines: cosines + table, sines: sines + table)
                    kvRow(keyCache, layer: l, position: first + t).update(from: row + dim, count: s.kvDim)
                    kvRow(valueCache, layer: l, position: first + t).update(from: row + dim + s.kvDim, count: s.kvDim)
                }
            }
            // Token t attends to positions 0...first+t; the cache holds each layer's K/V once.
            let kvBytes = 2 * (first + n) * s.kvDim * f
            let pairs = n * first + n * (n + 1) / 2
            op("attention", layer: l, read: n * dim * f + kvBytes, written: n * dim * f,
               flops: 4 * s.heads * pairs * s.headDim + 5 * s.heads * pairs, kvBytes: kvBytes) {
                attention.keys = UnsafePointer(kvRow(keyCache, layer: l, position: 0))
                attention.values = UnsafePointer(kvRow(valueCache, layer: l, position: 0))
                for t in 0..<n {
                    attention.query = UnsafePointer(batchQKV + t * s.qkvRows)
                    attention.output = batchAttention + t * dim
                    attention.positions = first + t + 1
                    pool.run(attention, chunkCount: s.heads)
                }
            }
            op("attn-out", layer: l, read: layer.attentionOutput.byteCount + 2 * n * dim * f, written: n * dim * f,
               flops: n * (2 * dim * dim + dim), weightBytes: layer.attentionOutput.byteCount) {
                batchMatmul.run(layer.attentionOutput, x: batchAttention, tokens: n, y: batchProjected, outputStride: dim, pool: pool)
                addInPlace(batchX, batchProjected, count: n * dim)
            }
            op("rmsnorm", layer: l, read: (n + 1) * dim * f, written: n * dim * f, flops: 4 * n * dim, weightBytes: dim * f) {
                for t in 0..<n { rmsNorm(batchX + t * dim, gain: layer.ffnNorm, count: dim, epsilon: w.normEpsilon, into: batchNormed + t * dim) }
            }
            op("gate/up", layer: l, read: layer.gateUp.byteCount + n * dim * f, written: n * s.ffn * f,
               flops: n * (4 * s.ffn * dim + 6 * s.ffn), weightBytes: layer.gateUp.byteCount) {
                batchMatmul.run(layer.gateUp, x: batchNormed, tokens: n, y: batchHidden, outputStride: 2 * s.ffn, pool: pool)
                for t in 0..<n {
                    let h = batchHidden + t * 2 * s.ffn
                    swiGLU(gate: h, up: h + s.ffn, count: s.ffn, into: batchGated + t * s.ffn)
                }
            }
            op("down", layer: l, read: layer.down.byteCount + n * (s.ffn + dim) * f, written: n * dim * f,
               flops: n * (2 * dim * s.ffn + dim), weightBytes: layer.down.byteCount) {
                batchMatmul.run(layer.down, x: batchGated, tokens: n, y: batchProjected, outputStride: dim, pool: pool)
                addInPlace(batchX, batchProjected, count: n * dim)
            }
        }
        position += n
        guard isLast else { return }
        // Only the last prompt token's logits are needed to pick the first generated token.
        x.update(from: batchX + (n - 1) * dim, count: dim)
        computeLogitsOfX()
    }
}

/// Rounds each value to the nearest f16 (llama.cpp keeps the KV cache, and the queries it multiplies,
/// in f16).
@_optimize(speed)
func roundToHalf(_ values: UnsafeMutablePointer<Float>, count: Int) {
    for i in 0..<count { values[i] = Float(Float16(values[i])) }
}

@_optimize(speed)   // 49152 logits per token; the real-model tests run in debug builds
func argmax(_ values: UnsafePointer<Float>, count: Int) -> Int {
    var best = 0
    var bestValue = values[0]
    for i in 1..<count where values[i] > bestValue { best = i; bestValue = values[i] }
    return best
}
