// Pool tasks for the decode and prefill ops, and the small per-element kernels (RMSNorm, RoPE,
// softmax, SwiGLU). Task objects are created once per session and re-pointed at each op's buffers,
// so dispatching an op allocates nothing.

import CHitchKernels
import Foundation

/// Rows per chunk: a multiple of the pal4 group, about 32 chunks per matrix so a busy core only
/// delays the op by a chunk.
@inline(__always) func rowsPerChunk(_ rows: Int) -> Int {
    let target = (rows + 31) / 32
    return max(WeightMatrix.groupRows, (target + WeightMatrix.groupRows - 1) / WeightMatrix.groupRows * WeightMatrix.groupRows)
}

/// y = W x, rows split across the pool.
final class MatvecTask: ParallelTask, @unchecked Sendable {
    // @unchecked: fields are set by the dispatching thread before `WorkerPool.run` publishes the op;
    // chunks write disjoint rows of `y`.
    unowned(unsafe) var matrix: any DecodeMatrix
    var x: UnsafePointer<Float>
    var y: UnsafeMutablePointer<Float>
    var chunkRows = 16
    let quantizedX: QuantizedVector
    /// Set while a GGUF model runs a prompt token by token: this token's row of the prompt, so the
    /// K-quant kernels sum as llama.cpp's batched paths do for that row (`hitch_q8_activations`).
    var promptRow: (index: Int, count: Int)?

    init(placeholder: any DecodeMatrix, x: UnsafePointer<Float>, y: UnsafeMutablePointer<Float>, maxColumns: Int) {
        matrix = placeholder; self.x = x; self.y = y
        quantizedX = QuantizedVector(capacity: maxColumns)
    }

    func run(_ matrix: any DecodeMatrix, x: UnsafePointer<Float>, y: UnsafeMutablePointer<Float>, pool: WorkerPool) {
        self.matrix = matrix; self.x = x; self.y = y
        switch matrix.activationQuantization {
        case .none: break
        case .int16: quantizedX.quantize(x, count: matrix.columns)
        case .ggml8: quantizedX.quantize8(x, count: matrix.columns)
        case .ggmlK: quantizedX.quantizeK(x, count: matrix.columns)
        case .ggml8AndK:
            quantizedX.quantize8(x, count: matrix.columns)
            quantizedX.quantizeK(x, count: matrix.columns)
        }
        // llama.cpp multiplies a prompt's rows in groups of four by its repacked q4_K gemm (the
        // rest one by one), and q6_K by its tiled matmul once a batch has eight rows.
        let row = promptRow ?? (index: 0, count: 1)
        quantizedX.ggml.pointee.q4_K_gemm = row.index < row.count - row.count % 4 ? 1 : 0
        quantizedX.ggml.pointee.q6_K_tiled = row.count >= 8 ? 1 : 0
        chunkRows = rowsPerChunk(matrix.rows)
        pool.run(self, chunkCount: (matrix.rows + chunkRows - 1) / chunkRows)
    }

    func execute(chunk: Int) {
        let start = chunk * chunkRows
        matrix.multiply(rows: start..<min(matrix.rows, start + chunkRows), x: x, quantizedX: quantizedX, y: y)
    }
}

/// Y = X W^T for a batch of tokens (prefill): each weight row is dequantized once into a stack
/// buffer, then dotted with every token, so weights are read once per batch instead of once per token.
final class BatchMatmulTask: ParallelTask, @unchecked Sendable {
    // @unchecked: as MatvecTask; chunks write disjoint rows of every token's output.
    unowned(unsafe) var matrix: any DecodeMatrix
    var x: UnsafePointer<Float>
    var y: UnsafeMutablePointer<Float>
    var tokens = 0
    /// Distance between consecutive tokens' outputs in `y`.
    var outputStride = 0
    var chunkRows = 16

    init(placeholder: any DecodeMatrix, x: UnsafePointer<Float>, y: UnsafeMutablePointer<Float>) {
        matrix = placeholder; self.x = x; self.y = y
    }

    func run(_ matrix: any DecodeMatrix, x: UnsafePointer<Float>, tokens: Int, y: UnsafeMutablePointer<Float>, outputStride: Int, pool: WorkerPool) {
        self.matrix = matrix; self.x = x; self.y = y; self.tokens = tokens; self.outputStride = outputStride
        chunkRows = rowsPerChunk(matrix.rows)
        pool.run(self, chunkCount: (matrix.rows + chunkRows - 1) / chunkRows)
    }

    func execute(chunk: Int) {
        let start = chunk * chunkRows, end = min(matrix.rows, start + chunkRows)
        let columns = matrix.columns
        withUnsafeTemporaryAllocation(of: Float.self, capacity: columns) { row in
            let w = row.baseAddress!
            for r in start..<end {
                matrix.dequantizeRow(r, into: w)
                for t in 0..<tokens {
                    y[t * outputStride + r] = dotF32(w, x + t * columns, columns)
                }
            }
        }
    }
}

/// Causal attention of one query position over the KV cache, one chunk per query head.
final class AttentionTask: ParallelTask, @unchecked Sendable {
    // @unchecked: as MatvecTask; each head writes its own slice of `output` and `scores`.
    var query: UnsafePointer<Float>
    var keys: UnsafePointer<Float>
    var values: UnsafePointer<Float>
    var output: UnsafeMutablePointer<Float>
    let scores: UnsafeMutablePointer<Float>
    var positions = 0
    /// The first position attended to (a sliding window starts after 0).
    var firstPosition = 0
    /// What each query-key dot product is multiplied by (1 / sqrt(headDim) unless the queries come scaled).
    var scoreScale: Float
    let shape: ModelShape
    /// llama.cpp's flash-attention arithmetic (`attendHeadAsGGML`) instead of the two-pass softmax.
    let asGGML: Bool
    /// With `asGGML`: the query is a row of a prompt batch of `AttentionTask.tiledPromptRows` or
    /// more, which llama.cpp attends with its tiled kernel (`attendHeadAsGGMLTiled`).
    var tiledPrompt = false
    /// ggml's GGML_FA_TILE_Q: batches of this many queries or more take the tiled kernel.
    static let tiledPromptRows = 64

    init(shape: ModelShape, scores: UnsafeMutablePointer<Float>, placeholder: UnsafeMutablePointer<Float>, asGGML: Bool = false) {
        self.shape = shape; self.scores = scores; self.asGGML = asGGML
        scoreScale = 1 / Float(shape.headDim).squareRoot()
        query = UnsafePointer(placeholder); keys = UnsafePointer(placeholder); values = UnsafePointer(placeholder); output = placeholder
    }

    @_optimize(speed)   // as MappedMatrix.multiply: the real-model tests run in debug builds
    func execute(chunk head: Int) {
        if asGGML && tiledPrompt {
            attendHeadAsGGMLTiled(head: head, shape: shape, query: query, keys: keys, values: values, positions: firstPosition..<positions,
                                  scale: scoreScale, scores: scores + head * shape.context, output: output)
        } else if asGGML {
            attendHeadAsGGML(head: head, shape: shape, query: query, keys: keys, values: values, positions: firstPosition..<positions,
                             scale: scoreScale, output: output)
        } else {
            attendHead(head: head, shape: shape, query: query, keys: keys, values: values, positions: positions,
                       scores: scores + head * shape.context, output: output)
        }
    }
}

/// How many positions ahead the attention loops prefetch the KV cache rows they will read.
let attentionPrefetchPositions = 4

/// One head's attention computed as llama.cpp's CPU flash attention does for one query
/// (ggml_compute_forward_flash_attn_ext_f16_one_chunk, with its default f16 KV cache): query, keys
/// and values are f16 (the callers round them), each score is an f16 dot product summed as ggml's
/// AVX-512 build sums it (`dotAsGGML`), the softmax is online, and the weighted values accumulate in
/// f16, rounded after every position. That f16 accumulator moves logits by several hundredths, as
/// much as the near ties greedy decoding meets, so a runtime that sums in f32 picks other tokens.
@inline(__always)
func attendHeadAsGGML(head: Int, shape: ModelShape, query: UnsafePointer<Float>, keys: UnsafePointer<Float>,
                      values: UnsafePointer<Float>, positions: Range<Int>, scale: Float, output: UnsafeMutablePointer<Float>) {
    let headDim = shape.headDim, kvDim = shape.kvDim
    let kvHead = head / (shape.heads / shape.kvHeads)
    let q = query + head * headDim
    let out = output + head * headDim
    out.update(repeating: 0, count: headDim)   // the f16 accumulator (values exactly representable in f16)
    var largest = -Float.infinity, total: Float = 0
    for t in positions {
        let k = keys + t * kvDim + kvHead * headDim
        let v = values + t * kvDim + kvHead * headDim
        // The cache rows are far apart (kvDim floats) and this loop's chain is long, so on its own a
        // core has only a position or two of them in flight: ask for later positions' rows now.
        prefetch(k + attentionPrefetchPositions * kvDim, count: headDim)
        prefetch(v + attentionPrefetchPositions * kvDim, count: headDim)
        let score = dotAsGGML(q, k, count: headDim) * scale
        var rescale: Float = 1, weight: Float = 1
        if score > largest {
            rescale = expf(largest - score)
            largest = score
            for i in 0..<headDim { out[i] = Float(Float16(out[i] * rescale)) }
        } else {
            weight = expf(score - largest)
        }
        // V += v * weight, fused and rounded to f16 per element (ggml_vec_mad_f16).
        for i in 0..<headDim { out[i] = Float(Float16(out[i].addingProduct(v[i], weight))) }
        total = weight.addingProduct(total, rescale)   // S = S * ms + vs, fused as GCC contracts it
    }
    let inverse = total == 0 ? 0 : 1 / total
    for i in 0..<headDim { out[i] *= inverse }
}

/// One head's attention for one query of a prompt batch, as llama.cpp's tiled CPU flash attention
/// computes it (ggml_compute_forward_flash_attn_ext_tiled, GGML_FA_TILE_KV = 64): the query stays
/// f32 (keys and values are the f16 cache); per tile of 64 positions each score is a chain of fused
/// multiply-adds over the head's dimensions times `scale`, positions outside `positions` are -inf;
/// the running maximum rescales the f32 accumulator and sum (libm's expf), the tile's softmax is
/// ggml's (`hitch_softmax_ggml`, summed in double), and each output dimension adds the tile's
/// weighted values as one chain of fused multiply-adds; at the end it is scaled by 1 / sum.
/// `scores` holds 64 floats.
@inline(__always)
func attendHeadAsGGMLTiled(head: Int, shape: ModelShape, query: UnsafePointer<Float>, keys: UnsafePointer<Float>,
                           values: UnsafePointer<Float>, positions: Range<Int>, scale: Float,
                           scores: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>) {
    let headDim = shape.headDim, kvDim = shape.kvDim, tile = 64
    let kvHead = head / (shape.heads / shape.kvHeads)
    let q = query + head * headDim
    let out = output + head * headDim
    out.update(repeating: 0, count: headDim)
    var largest = -Float.infinity, total: Float = 0
    var start = 0
    while start < positions.upperBound {
        defer { start += tile }
        guard start + tile > positions.lowerBound else { continue }
        var tileLargest = -Float.infinity
        for t in 0..<tile {
            let position = start + t
            guard positions.contains(position) else { scores[t] = -.infinity; continue }
            let k = keys + position * kvDim + kvHead * headDim
            var score: Float = 0
            for i in 0..<headDim { score = score.addingProduct(q[i], k[i]) }
            scores[t] = score * scale
            tileLargest = max(tileLargest, scores[t])
        }
        guard tileLargest > -.infinity else { continue }   // nothing visible in this tile: skipped
        let newLargest = max(largest, tileLargest)
        if newLargest > largest {
            let rescale = expf(largest - newLargest)
            for i in 0..<headDim { out[i] *= rescale }
            total *= rescale
        }
        largest = newLargest
        total = Float(Double(total) + hitch_softmax_ggml(scores, tile, newLargest, scores))
        for t in 0..<tile where positions.contains(start + t) {
            let v = values + (start + t) * kvDim + kvHead * headDim
            let weight = scores[t]
            for i in 0..<headDim { out[i] = out[i].addingProduct(weight, v[i]) }
        }
    }
    let inverse = total == 0 ? 0 : 1 / total
    for i in 0..<headDim { out[i] *= inverse }
}

/// One head's attention: softmax(q . k_t / sqrt(d)) weighted sum of v_t over positions 0..<positions.
/// keys/values are the layer's cache rows (kvDim floats per position).
@inline(__always)
func attendHead(head: Int, shape: ModelShape, query: UnsafePointer<Float>, keys: UnsafePointer<Float>,
                values: UnsafePointer<Float>, positions: Int, scores: UnsafeMutablePointer<Float>,
                output: UnsafeMutablePointer<Float>) {
    let headDim = shape.headDim, kvDim = shape.kvDim
    let kvHead = head / (shape.heads / shape.kvHeads)
    let q = query + head * headDim
    let scale = 1 / Float(headDim).squareRoot()
    var largest = -Float.infinity
    for t in 0..<positions {
        let k = keys + t * kvDim + kvHead * headDim
        prefetch(k + attentionPrefetchPositions * kvDim, count: headDim)
        var sum: Float = 0
        var i = 0
        if headDim % 16 == 0 {
            var acc = SIMD16<Float>()
            while i < headDim { acc += load16(q + i) * load16(k + i); i &+= 16 }
            sum = acc.sum()
        } else {
            while i < headDim { sum += q[i] * k[i]; i += 1 }
        }
        let score = sum * scale
        scores[t] = score
        largest = max(largest, score)
    }
    var total: Float = 0
    for t in 0..<positions {
        let e = expf(scores[t] - largest)
        scores[t] = e
        total += e
    }
    let out = output + head * headDim
    out.update(repeating: 0, count: headDim)
    let inverse = 1 / total
    for t in 0..<positions {
        let weight = scores[t] * inverse
        let v = values + t * kvDim + kvHead * headDim
        prefetch(v + attentionPrefetchPositions * kvDim, count: headDim)
        if headDim % 16 == 0 {
            var i = 0
            while i < headDim {
                let o = UnsafeMutableRawPointer(out + i)
                o.storeBytes(of: o.loadUnaligned(as: SIMD16<Float>.self) + load16(v + i) * weight, as: SIMD16<Float>.self)
                i &+= 16
            }
        } else {
            for i in 0..<headDim { out[i] += weight * v[i] }
        }
    }
}

/// ggml_vec_dot_f16 of its AVX-512 build: four 16-lane fused accumulators over runs of 64, added
/// pairwise (0+2, 1+3, then the two), reduced lanes 8 apart, 4, 2, 1 (_mm512_reduce_add_ps); the
/// remainder added in double.
@inline(__always)
func dotAsGGML(_ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, count: Int) -> Float {
    var a0 = SIMD16<Float>(), a1 = SIMD16<Float>(), a2 = SIMD16<Float>(), a3 = SIMD16<Float>()
    let runs = count & ~63
    var i = 0
    while i < runs {
        a0 = a0.addingProduct(load16(x + i), load16(y + i))
        a1 = a1.addingProduct(load16(x + i + 16), load16(y + i + 16))
        a2 = a2.addingProduct(load16(x + i + 32), load16(y + i + 32))
        a3 = a3.addingProduct(load16(x + i + 48), load16(y + i + 48))
        i += 64
    }
    let a = (a0 + a2) + (a1 + a3)
    let h8 = a.lowHalf + a.highHalf, h4 = h8.lowHalf + h8.highHalf, h2 = h4.lowHalf + h4.highHalf
    var sum = Double(h2[0] + h2[1])
    while i < count { sum += Double(x[i] * y[i]); i += 1 }
    return Float(sum)
}

/// out = x / rms(x) * gain, the sum of squares in double and the scaling in the order ggml's
/// rms_norm and mul use (bit for bit: checked against llama.cpp's tensors).
@inline(__always)
func rmsNorm(_ x: UnsafePointer<Float>, gain: UnsafePointer<Float>, count: Int, epsilon: Float = 1e-5, into out: UnsafeMutablePointer<Float>) {
    // In order, as ggml's loop (a compiler may not reorder it): a few hundred dependent adds.
    var sum: Double = 0
    for i in 0..<count { sum += Double(x[i] * x[i]) }
    let mean = Float(sum / Double(count))
    let inverse = 1 / (mean + epsilon).squareRoot()
    var i = 0
    while i < count {
        UnsafeMutableRawPointer(out + i).storeBytes(of: load16(x + i) * inverse * load16(gain + i), as: SIMD16<Float>.self)
        i &+= 16
    }
}

/// Rotates consecutive pairs of each head's dimensions by position-dependent angles (Llama's RoPE).
/// `cosines`/`sines` hold headDim/2 entries for this position.
@inline(__always)
func applyRoPE(_ vector: UnsafeMutablePointer<Float>, heads: Int, headDim: Int,
               cosines: UnsafePointer<Float>, sines: UnsafePointer<Float>) {
    for head in 0..<heads {
        let v = vector + head * headDim
        for pair in 0..<(headDim / 2) {
            let a = v[2 * pair], b = v[2 * pair + 1], c = cosines[pair], s = sines[pair]
            // Fused as GCC contracts ggml's `x0*cos - x1*sin` and `x0*sin + x1*cos` (the first
            // product of each into the multiply-add), so the rotation is llama.cpp's to the bit.
            v[2 * pair] = (-(b * s)).addingProduct(a, c)
            v[2 * pair + 1] = (b * c).addingProduct(a, s)
        }
    }
}

/// out[i] = silu(gate[i]) * up[i], exp as ggml's AVX-512 build approximates it (CHitchKernels), so a
/// GGUF model's feed-forward is llama.cpp's to the bit.
@inline(__always)
func swiGLU(gate: UnsafePointer<Float>, up: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<Float>) {
    hitch_swiglu_ggml(gate, up, count, out)
}

@inline(__always)
func addInPlace(_ x: UnsafeMutablePointer<Float>, _ y: UnsafePointer<Float>, count: Int) {
    var i = 0
    while i < count {
        UnsafeMutableRawPointer(x + i).storeBytes(of: load16(x + i) + load16(y + i), as: SIMD16<Float>.self)
        i &+= 16
    }
}

/// RoPE in the NeoX arrangement (Gemma): dimension i of each head pairs with i + headDim/2, rather
/// than with its neighbour; the same per-pair angles and the same fused arithmetic as `applyRoPE`.
@inline(__always)
func applyRoPENeoX(_ vector: UnsafeMutablePointer<Float>, heads: Int, headDim: Int,
                   cosines: UnsafePointer<Float>, sines: UnsafePointer<Float>) {
    let half = headDim / 2
    for head in 0..<heads {
        let v = vector + head * headDim
        for pair in 0..<half {
            let a = v[pair], b = v[pair + half], c = cosines[pair], s = sines[pair]
            v[pair] = (-(b * s)).addingProduct(a, c)
            v[pair + half] = (b * c).addingProduct(a, s)
        }
    }
}

/// out[i] = gelu(gate[i]) * up[i] with GELU's tanh approximation, as ggml's geglu computes it: the
/// gate rounded to f16 and its GELU read from a table of f16 values (so rounded to f16 too), the
/// gate taken as is beyond ±10.
@_optimize(speed)
func geGLU(gate: UnsafePointer<Float>, up: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<Float>) {
    let root2OverPi: Float = 0.79788456080286535587989211986876, cubic: Float = 0.044715
    for i in 0..<count {
        let x = gate[i]
        if x <= -10 { out[i] = 0; continue }
        if x >= 10 { out[i] = x * up[i]; continue }
        let h = Float(Float16(x))
        let gelu = 0.5 * h * (1 + tanhf(root2OverPi * h * (1 + cubic * h * h)))
        out[i] = Float(Float16(gelu)) * up[i]
    }
}
