// The memory an on-device model needs: weights, KV cache and runtime buffers, against a device limit.

import Foundation

/// A memory budget line by line (bytes).
public struct LLMMemoryBudget: Sendable, Codable, Equatable {
    public var parameterCount: Int
    public var weights: String
    public var context: Int
    public var weightsBytes: Int
    public var kvCacheBytes: Int
    /// Activation buffers, logits, prefill batch buffers and a fixed runtime allowance.
    public var runtimeOverheadBytes: Int
    public var totalBytes: Int
    public var deviceLimitBytes: Int
    public var headroomBytes: Int
    public var withinLimit: Bool
    public var shape: ModelShape
    /// Bytes per KV cache element (4 for the bundled engine's f32 cache, 2 for an f16 cache).
    public var kvBytesPerElement: Int

    /// A fixed allowance for code, the runtime and allocator slack.
    public static let runtimeAllowanceBytes = 32 << 20

    public init(shape: ModelShape, weights: SyntheticWeights, kvBytesPerElement: Int, deviceLimitBytes: Int, prefillBatch: Int = 32) {
        self.shape = shape
        self.kvBytesPerElement = kvBytesPerElement
        parameterCount = shape.parameterCount
        self.weights = weights.name
        context = shape.context
        weightsBytes = shape.weightBytes(weights)
        kvCacheBytes = shape.layers * shape.context * shape.kvDim * 2 * kvBytesPerElement
        let activations = shape.vocab + 3 * shape.dim + shape.qkvRows + 3 * shape.ffn + shape.heads * shape.context
            + shape.context * shape.headDim
        let batch = prefillBatch * (4 * shape.dim + shape.qkvRows + 3 * shape.ffn)
        runtimeOverheadBytes = (activations + batch) * 4 + Self.runtimeAllowanceBytes
        totalBytes = weightsBytes + kvCacheBytes + runtimeOverheadBytes
        self.deviceLimitBytes = deviceLimitBytes
        headroomBytes = deviceLimitBytes - totalBytes
        withinLimit = totalBytes <= deviceLimitBytes
    }

    /// A model read from a file: its real weight bytes, tensor types and parameter count replace the
    /// ones the shape and a single weight type imply.
    public mutating func useFileWeights(bytes: Int, types: String, parameters: Int) {
        weightsBytes = bytes
        weights = types
        parameterCount = parameters
        totalBytes = weightsBytes + kvCacheBytes + runtimeOverheadBytes
        headroomBytes = deviceLimitBytes - totalBytes
        withinLimit = totalBytes <= deviceLimitBytes
    }

    /// A Llama-family shape for a parameter count: published shapes (Llama 3.2 1B/3B, Llama 2 7B,
    /// Llama 3 8B, Llama 2 13B) picked by nearest size, with the bundled shape below 0.7 B.
    public static func llamaShape(parameters: Double, context: Int) -> ModelShape {
        // Llama 3.2 1B and 3B share the embedding with the output head; that is what makes them 1.24 B and 3.2 B.
        var llama1B = ModelShape(dim: 2048, layers: 16, heads: 32, kvHeads: 8, ffn: 8192, vocab: 128_256, context: context)
        llama1B.tiedEmbeddings = true
        var llama3B = ModelShape(dim: 3072, layers: 28, heads: 24, kvHeads: 8, ffn: 8192, vocab: 128_256, context: context)
        llama3B.tiedEmbeddings = true
        let known: [(Double, ModelShape)] = [
            (Double(ModelShape.bundled.parameterCount), ModelShape(context: context)),   // 0.40 B
            (1.24e9, llama1B),
            (3.2e9, llama3B),
            (6.7e9, ModelShape(dim: 4096, layers: 32, heads: 32, kvHeads: 32, ffn: 11008, vocab: 32000, context: context)),
            (8.0e9, ModelShape(dim: 4096, layers: 32, heads: 32, kvHeads: 8, ffn: 14336, vocab: 128_256, context: context)),
            (13e9, ModelShape(dim: 5120, layers: 40, heads: 40, kvHeads: 40, ffn: 13824, vocab: 32000, context: context)),
        ]
        return known.min { abs(log($0.0 / parameters)) < abs(log($1.0 / parameters)) }!.1
    }
}
