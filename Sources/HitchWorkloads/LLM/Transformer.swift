// The Llama-style decoder's weights: generated from a seed in one storage format (the synthetic model),
// or read from a GGUF file (GGUFModel.swift). The decode state lives in DecodeSession.

import Foundation

/// A decoder's weights. Immutable once built; share one across sessions.
public final class TransformerWeights: @unchecked Sendable {
    // @unchecked: every field is written during init only.
    public let shape: ModelShape
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
    }

    /// A model read from a file: the matrices and gains point into its mapping.
    init(shape: ModelShape, formatName: String, ropeBase: Double, normEpsilon: Float, embedding: any DecodeMatrix,
         layers: [LayerWeights], finalNorm: UnsafeMutablePointer<Float>, output: any DecodeMatrix) {
        self.shape = shape; format = nil; seed = nil; self.formatName = formatName
        self.ropeBase = ropeBase; self.normEpsilon = normEpsilon; ggmlNumerics = true
        self.embedding = embedding; self.layers = layers; self.finalNorm = finalNorm; self.output = output
        ownsGains = false
    }

    /// Generates every weight from `seed` (a matrix's values depend only on the seed, its index and the
    /// row, so the result is the same for any thread count). The same seed gives the same underlying
    /// f32 model in every format.
    public init(shape: ModelShape, format: WeightFormat, seed: UInt64, pool: WorkerPool) {
        self.shape = shape; self.format = format; self.seed = seed; formatName = format.rawValue
        ropeBase = 10_000; normEpsilon = 1e-5; ggmlNumerics = false; ownsGains = true
        var matrixIndex: UInt64 = 0
        func matrix(_ rows: Int, _ columns: Int, amplitude: Float) -> WeightMatrix {
            matrixIndex += 1
            let m = WeightMatrix(format: format, rows: rows, columns: columns)
            let task = GenerateTask(matrix: m, seed: seed &+ matrixIndex &* 0x9E37_79B9_7F4A_7C15, amplitude: amplitude)
            pool.run(task, chunkCount: (rows + WeightMatrix.groupRows - 1) / WeightMatrix.groupRows)
            return m
        }
        func gains() -> UnsafeMutablePointer<Float> {
            matrixIndex += 1
            let g = UnsafeMutablePointer<Float>.allocate(capacity: shape.dim)
            var rng = SeededGenerator(seed: seed &+ matrixIndex &* 0x9E37_79B9_7F4A_7C15)
            for i in 0..<shape.dim { g[i] = 1 + 0.1 * rng.nextSigned() }
            return g
        }
        let dim = shape.dim
        embedding = matrix(shape.vocab, dim, amplitude: 1)
        var layers: [LayerWeights] = []
        for _ in 0..<shape.layers {
            layers.append(LayerWeights(
                attentionNorm: gains(),
                qkv: matrix(shape.qkvRows, dim, amplitude: (3 / Float(dim)).squareRoot()),
                attentionOutput: matrix(dim, dim, amplitude: (3 / Float(dim)).squareRoot()),
                ffnNorm: gains(),
                gateUp: matrix(2 * shape.ffn, dim, amplitude: (3 / Float(dim)).squareRoot()),
                down: matrix(dim, shape.ffn, amplitude: (3 / Float(shape.ffn)).squareRoot())))
        }
        self.layers = layers
        finalNorm = gains()
        output = matrix(shape.vocab, dim, amplitude: (3 / Float(dim)).squareRoot())
    }

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
        }
        return total
    }
}


/// Fills one 16-row group of a matrix with uniform values in [-amplitude, amplitude], then encodes it.
final class GenerateTask: ParallelTask, @unchecked Sendable {
    // @unchecked: each chunk writes a disjoint row group of `matrix`.
    let matrix: WeightMatrix
    let seed: UInt64
    let amplitude: Float
    init(matrix: WeightMatrix, seed: UInt64, amplitude: Float) {
        self.matrix = matrix; self.seed = seed; self.amplitude = amplitude
    }
    func execute(chunk: Int) {
        let first = chunk * WeightMatrix.groupRows
        let count = min(WeightMatrix.groupRows, matrix.rows - first)
        let values = UnsafeMutablePointer<Float>.allocate(capacity: count * matrix.columns)
        defer { values.deallocate() }
        var rng = SeededGenerator(seed: seed ^ (UInt64(chunk) &* 0xD1B5_4A32_D192_ED03))
        let scale = amplitude * (1.0 / 2_147_483_648.0)
        var i = 0
        let total = count * matrix.columns
        while i < total {
            let r = rng.next()
            values[i] = Float(Int32(truncatingIfNeeded: r)) * scale
            values[i + 1] = Float(Int32(truncatingIfNeeded: r >> 32)) * scale
            i += 2
        }
        matrix.encodeGroup(firstRow: first, rowCount: count, source: values)
    }
}
