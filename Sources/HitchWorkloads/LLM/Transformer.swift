// The Llama-style decoder's weights: generated from a seed in one storage format (the synthetic model),
// or read from a GGUF file (GGUFModel.swift). The decode state lives in DecodeSession.

import Foundation
import HitchAlgorithms

/// A decoder's weights. Immutable once built; share one across sessions.
public final class TransformerWeights: @unchecked Sendable {
    // @unchecked: every field is written during init only.
    public let shape: ModelShape
    /// Which forward pass runs these weights (a GGUF file's general.architecture).
    public let architecture: Architecture
    /// Gemma 3's local attention (nil: every layer attends to every position).
    let slidingWindow: SlidingWindow?

    public enum Architecture: String, Sendable, CaseIterable {
        case llama
        case gemma3

        /// "llama, gemma3": the values of general.architecture this engine runs.
        public static var supportedNames: String { allCases.map(\.rawValue).joined(separator: ", ") }
    }

    /// Layers with `isLocal` attend to the last `positions` positions only, rotated with their own
    /// RoPE base.
    struct SlidingWindow {
        let positions: Int
        let ropeBase: Double
        let isLocal: [Bool]
    }
    /// The synthetic model's format and seed (nil for a model read from a file).
    public let format: WeightFormat?
    public let seed: UInt64?
    /// What the weights are, for reports: "q4_0", or a GGUF model's tensor types ("q4_1+q8_0+f32").
    public let formatName: String
    /// RoPE base frequency and RMSNorm epsilon (Llama's defaults for the synthetic model).
    public let ropeBase: Double
    public let normEpsilon: Float
    /// GGUF models compute as llama.cpp does: queries, keys and values rounded to f16 (its f16 KV
    /// cache), and the prompt run token by token through the int8-activation kernels.
    let ggmlNumerics: Bool
    let embedding: any DecodeMatrix
    let layers: [LayerWeights]
    let finalNorm: UnsafeMutablePointer<Float>
    let output: any DecodeMatrix
    /// Norm gains this object allocated (a GGUF model's gains point into the mapping).
    private let ownsGains: Bool

    struct LayerWeights {
        let attentionNorm: UnsafeMutablePointer<Float>
        let qkv: any DecodeMatrix
        let attentionOutput: any DecodeMatrix
        let ffnNorm: UnsafeMutablePointer<Float>
        /// Gate rows first, then up rows (one pass over the input for both).
        let gateUp: any DecodeMatrix
        let down: any DecodeMatrix
        /// Gemma 3: per-head gains of queries and keys, and the norms after attention and the feed-forward.
        var queryNorm: UnsafeMutablePointer<Float>? = nil
        var keyNorm: UnsafeMutablePointer<Float>? = nil
        var postAttentionNorm: UnsafeMutablePointer<Float>? = nil
        var postFFNNorm: UnsafeMutablePointer<Float>? = nil
    }

    /// A model read from a file: the matrices and gains point into its mapping.
    init(shape: ModelShape, architecture: Architecture, formatName: String, ropeBase: Double, normEpsilon: Float,
         embedding: any DecodeMatrix, layers: [LayerWeights], finalNorm: UnsafeMutablePointer<Float>, output: any DecodeMatrix,
         slidingWindow: SlidingWindow? = nil) {
        self.shape = shape; self.architecture = architecture; self.slidingWindow = slidingWindow
        format = nil; seed = nil; self.formatName = formatName
        self.ropeBase = ropeBase; self.normEpsilon = normEpsilon; ggmlNumerics = true
        self.embedding = embedding; self.layers = layers; self.finalNorm = finalNorm; self.output = output
        ownsGains = false
    }

    /// Generates every weight from `seed` (a matrix's values depend only on the seed, its index and the
    /// row, so the result is the same for any thread count). The same seed gives the same underlying
    /// f32 model in every format, and the same one `writeGGUF` writes.
    public init(shape: ModelShape, format: WeightFormat, seed: UInt64, pool: WorkerPool) {
        self.shape = shape; self.format = format; self.seed = seed; formatName = format.rawValue
        architecture = .llama; slidingWindow = nil
        ropeBase = Self.syntheticRopeBase; normEpsilon = Self.syntheticNormEpsilon; ggmlNumerics = false; ownsGains = true
        var plan = SyntheticTensor.plan(shape: shape, seed: seed).makeIterator()
        func matrix() -> WeightMatrix {
            let tensor = plan.next()!
            let m = WeightMatrix(format: format, rows: tensor.rows, columns: tensor.columns)
            let task = GenerateTask(matrix: m, tensor: tensor)
            pool.run(task, chunkCount: (tensor.rows + WeightMatrix.groupRows - 1) / WeightMatrix.groupRows)
            return m
        }
        func gains() -> UnsafeMutablePointer<Float> {
            let tensor = plan.next()!
            let g = UnsafeMutablePointer<Float>.allocate(capacity: tensor.columns)
            tensor.generateGains(into: g)
            return g
        }
        embedding = matrix()
        var layers: [LayerWeights] = []
        for _ in 0..<shape.layers {
            layers.append(LayerWeights(attentionNorm: gains(), qkv: matrix(), attentionOutput: matrix(),
                                       ffnNorm: gains(), gateUp: matrix(), down: matrix()))
        }
        self.layers = layers
        finalNorm = gains()
        output = matrix()
    }

    static let syntheticRopeBase = 10_000.0
    static let syntheticNormEpsilon: Float = 1e-5

    deinit {
        guard ownsGains else { return }
        finalNorm.deallocate()
        for layer in layers { layer.attentionNorm.deallocate(); layer.ffnNorm.deallocate() }
    }

    /// Bytes of all weights as stored (equals `shape.weightBytes(format)` for the synthetic model; a
    /// tied output head is counted once).
    public var byteCount: Int {
        var total = embedding.byteCount + (output === embedding ? 0 : output.byteCount) + shape.dim * 4
        for layer in layers {
            total += layer.qkv.byteCount + layer.attentionOutput.byteCount + layer.gateUp.byteCount + layer.down.byteCount
            total += 2 * shape.dim * 4
            if layer.postAttentionNorm != nil { total += 2 * shape.dim * 4 + 2 * shape.headDim * 4 }
        }
        return total
    }
}


/// One tensor of the synthetic model, in generation order (`plan`): its values follow from the model
/// seed and its place in that order only. A matrix may stack several of llama.cpp's tensors by rows
/// (the fused q|k|v and gate|up products); `parts` names them for `writeGGUF`.
struct SyntheticTensor {
    /// llama.cpp's tensor names and their rows, stacked in this order.
    let parts: [(name: String, rows: Int)]
    let rows: Int
    let columns: Int
    /// Matrices: values uniform in [-amplitude, amplitude]; nil for norm gains (1 ± 0.1).
    let amplitude: Float?
    let seed: UInt64

    static func plan(shape s: ModelShape, seed: UInt64) -> [SyntheticTensor] {
        var tensors: [SyntheticTensor] = []
        func add(_ parts: [(String, Int)], columns: Int, amplitude: Float?) {
            let index = UInt64(tensors.count + 1)
            tensors.append(SyntheticTensor(parts: parts, rows: parts.reduce(0) { $0 + $1.1 }, columns: columns,
                                           amplitude: amplitude, seed: seed &+ index &* 0x9E37_79B9_7F4A_7C15))
        }
        let dim = s.dim, inner = (3 / Float(dim)).squareRoot()
        add([("token_embd.weight", s.vocab)], columns: dim, amplitude: 1)
        for l in 0..<s.layers {
            let p = "blk.\(l)."
            add([(p + "attn_norm.weight", 1)], columns: dim, amplitude: nil)
            add([(p + "attn_q.weight", dim), (p + "attn_k.weight", s.kvDim), (p + "attn_v.weight", s.kvDim)], columns: dim, amplitude: inner)
            add([(p + "attn_output.weight", dim)], columns: dim, amplitude: inner)
            add([(p + "ffn_norm.weight", 1)], columns: dim, amplitude: nil)
            add([(p + "ffn_gate.weight", s.ffn), (p + "ffn_up.weight", s.ffn)], columns: dim, amplitude: inner)
            add([(p + "ffn_down.weight", dim)], columns: s.ffn, amplitude: (3 / Float(s.ffn)).squareRoot())
        }
        add([("output_norm.weight", 1)], columns: dim, amplitude: nil)
        add([("output.weight", s.vocab)], columns: dim, amplitude: inner)
        return tensors
    }

    func generateGains(into g: UnsafeMutablePointer<Float>) {
        var rng = SeededGenerator(seed: seed)
        for i in 0..<columns { g[i] = 1 + 0.1 * rng.nextSigned() }
    }

    /// Fills rows [group * groupRows, + count) (one row group) with the matrix's values.
    func generateGroup(_ group: Int, count: Int, into values: UnsafeMutablePointer<Float>) {
        var rng = SeededGenerator(seed: seed ^ (UInt64(group) &* 0xD1B5_4A32_D192_ED03))
        let scale = amplitude! * (1.0 / 2_147_483_648.0)
        var i = 0
        let total = count * columns
        while i < total {
            let r = rng.next()
            values[i] = Float(Int32(truncatingIfNeeded: r)) * scale
            values[i + 1] = Float(Int32(truncatingIfNeeded: r >> 32)) * scale
            i += 2
        }
    }
}

/// Fills one 16-row group of a matrix with its values, then encodes it.
final class GenerateTask: ParallelTask, @unchecked Sendable {
    // @unchecked: each chunk writes a disjoint row group of `matrix`.
    let matrix: WeightMatrix
    let tensor: SyntheticTensor
    init(matrix: WeightMatrix, tensor: SyntheticTensor) {
        self.matrix = matrix; self.tensor = tensor
    }
    func execute(chunk: Int) {
        let first = chunk * WeightMatrix.groupRows
        let count = min(WeightMatrix.groupRows, matrix.rows - first)
        let values = UnsafeMutablePointer<Float>.allocate(capacity: count * matrix.columns)
        defer { values.deallocate() }
        tensor.generateGroup(chunk, count: count, into: values)
        matrix.encodeGroup(firstRow: first, rowCount: count, source: values)
    }
}

extension TransformerWeights {
    /// Writes the synthetic model of `shape` and `seed` as a llama-architecture GGUF file with its
    /// matrices in `type` (norms in f32), so llama.cpp and `--model` run the same weights the
    /// generated model has. The vocabulary is byte-level: the 256 byte tokens, then placeholders.
    public static func writeGGUF(shape: ModelShape, type: GGMLType, seed: UInt64, to path: String) throws {
        var w = GGUFWriter()
        w.add("general.architecture", "llama")
        w.add("general.name", "hitch synthetic \(type.name) seed \(seed)")
        w.add("llama.context_length", uint32: UInt32(shape.context))
        w.add("llama.embedding_length", uint32: UInt32(shape.dim))
        w.add("llama.block_count", uint32: UInt32(shape.layers))
        w.add("llama.feed_forward_length", uint32: UInt32(shape.ffn))
        w.add("llama.attention.head_count", uint32: UInt32(shape.heads))
        w.add("llama.attention.head_count_kv", uint32: UInt32(shape.kvHeads))
        w.add("llama.rope.dimension_count", uint32: UInt32(shape.headDim))
        w.add("llama.rope.freq_base", float: Float(syntheticRopeBase))
        w.add("llama.attention.layer_norm_rms_epsilon", float: syntheticNormEpsilon)
        w.add("tokenizer.ggml.model", "gpt2")
        w.add("tokenizer.ggml.pre", "default")
        // Placeholders are printable ASCII without spaces: valid in the byte-level mapping.
        let tokens = GGUFTokenizer.byteEncoder.map(String.init) + (256..<shape.vocab).map { "<unused\($0)>" }
        w.add("tokenizer.ggml.tokens", strings: tokens)
        w.add("tokenizer.ggml.token_type", int32s: [Int32](repeating: 1, count: tokens.count))
        w.add("tokenizer.ggml.merges", strings: [])
        w.add("tokenizer.ggml.bos_token_id", uint32: 0)
        w.add("tokenizer.ggml.eos_token_id", uint32: 0)
        for tensor in SyntheticTensor.plan(shape: shape, seed: seed) {
            guard tensor.amplitude != nil else {
                var gains = [Float](repeating: 0, count: tensor.columns)
                gains.withUnsafeMutableBufferPointer { tensor.generateGains(into: $0.baseAddress!) }
                w.addTensor(tensor.parts[0].name, dimensions: [tensor.columns], type: .f32, bytes: GGMLType.f32.encode(gains))
                continue
            }
            var firstRow = 0
            for (name, rows) in tensor.parts {
                let start = firstRow
                precondition(start % WeightMatrix.groupRows == 0, "synthetic tensor parts start on a row group")
                w.tensors.append(GGUFWriter.Tensor(
                    name: name, dimensions: [tensor.columns, rows], type: type.rawValue,
                    data: .streamed(byteCount: rows * type.rowBytes(columns: tensor.columns)) { emit in
                        let groupRows = WeightMatrix.groupRows
                        let values = UnsafeMutablePointer<Float>.allocate(capacity: groupRows * tensor.columns)
                        defer { values.deallocate() }
                        var encoded: [UInt8] = []
                        var row = start
                        while row < start + rows {
                            let count = min(groupRows, start + rows - row)
                            tensor.generateGroup(row / groupRows, count: count, into: values)
                            encoded.removeAll(keepingCapacity: true)
                            type.encode(UnsafeBufferPointer(start: values, count: count * tensor.columns), into: &encoded)
                            try encoded.withUnsafeBytes { try emit($0) }
                            row += count
                        }
                    }))
                firstRow += rows
            }
        }
        try w.write(to: path)
    }
}
