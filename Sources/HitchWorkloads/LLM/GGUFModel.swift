// A llama-architecture model read from a GGUF file: hyperparameters from the metadata, matrices
// mapped in place under llama.cpp's tensor names, and the file's tokenizer.

import Foundation

public final class GGUFModel: @unchecked Sendable {
    // @unchecked: immutable after init.
    public let file: GGUFFile
    public let weights: TransformerWeights
    public let tokenizer: GGUFTokenizer
    /// general.name, or the file name.
    public let name: String

    /// Reads the model at `path`; `context` caps the KV cache's positions (the file's own
    /// context length is the upper bound).
    public convenience init(path: String, context: Int = 2048) throws {
        try self.init(file: try GGUFFile(path: path), context: context)
    }

    public init(file: GGUFFile, context: Int = 2048) throws {
        self.file = file
        name = file.metadata["general.name"]?.string ?? (file.path as NSString).lastPathComponent
        let architecture = try file.string("general.architecture")
        guard architecture == "llama" else { throw GGUFError.unsupportedModel("architecture \(architecture) (only llama is run)") }
        func key(_ suffix: String) -> String { "llama." + suffix }
        func bounded(_ name: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
            guard range.contains(value) else { throw GGUFError.invalid("\(name) = \(value) is outside \(range)") }
            return value
        }
        let dim = try bounded(key("embedding_length"), try file.integer(key("embedding_length")), 32...65536)
        let layers = try bounded(key("block_count"), try file.integer(key("block_count")), 1...1024)
        let ffn = try bounded(key("feed_forward_length"), try file.integer(key("feed_forward_length")), 32...1 << 20)
        let heads = try bounded(key("attention.head_count"), try file.integer(key("attention.head_count")), 1...1024)
        let kvHeads = try bounded(key("attention.head_count_kv"),
                                  (try? file.integer(key("attention.head_count_kv"))) ?? heads, 1...heads)
        let fileContext = (try? file.integer(key("context_length"))) ?? 2048
        let ropeBase = (try? file.number(key("rope.freq_base"))) ?? 10_000
        let epsilon = (try? file.number(key("attention.layer_norm_rms_epsilon"))) ?? 1e-5
        guard dim % heads == 0, heads % kvHeads == 0 else {
            throw GGUFError.unsupportedModel("\(heads) heads and \(kvHeads) KV heads do not divide an embedding of \(dim)")
        }
        let headDim = dim / heads
        if let ropeDimensions = try? file.integer(key("rope.dimension_count")), ropeDimensions != headDim {
            throw GGUFError.unsupportedModel("RoPE over \(ropeDimensions) of \(headDim) head dimensions")
        }
        if file.metadata[key("rope.scaling.type")]?.string.map({ $0 != "none" }) ?? false {
            throw GGUFError.unsupportedModel("RoPE scaling (\(file.metadata[key("rope.scaling.type")]!.string!))")
        }
        guard dim % 32 == 0, ffn % 32 == 0, headDim % 16 == 0 else {
            throw GGUFError.unsupportedModel("embedding \(dim), FFN \(ffn) and head dimension \(headDim) must be multiples of 32, 32 and 16")
        }
        func tensor(_ name: String, columns: Int, rows: Int?) throws -> GGUFTensor {
            guard let t = file.tensor(named: name) else { throw GGUFError.missingTensor(name) }
            let expected = rows.map { [columns, $0] } ?? [columns]
            guard t.dimensions == expected else {
                throw GGUFError.invalid("tensor \(name) has shape \(t.dimensions), the metadata implies \(expected)")
            }
            return t
        }
        func matrix(_ names: [(String, Int)], columns: Int) throws -> MappedMatrix {
            try MappedMatrix(file: file, tensors: names.map { try tensor($0.0, columns: columns, rows: $0.1) })
        }
        func gains(_ name: String) throws -> UnsafeMutablePointer<Float> {
            let t = try tensor(name, columns: dim, rows: nil)
            guard t.type == .f32 else { throw GGUFError.unsupportedModel("norm \(name) is \(t.type.name), not f32") }
            // Read-only in practice: norms only read their gains. Tensor data is aligned to ≥ 32 bytes.
            return UnsafeMutablePointer(mutating: file.data(of: t).assumingMemoryBound(to: Float.self))
        }
        guard let embeddingTensor = file.tensor(named: "token_embd.weight"), embeddingTensor.dimensions.count == 2 else {
            throw GGUFError.missingTensor("token_embd.weight")
        }
        let vocab = embeddingTensor.dimensions[1]
        let embedding = try matrix([("token_embd.weight", vocab)], columns: dim)
        let kvDim = kvHeads * headDim
        var layerWeights: [TransformerWeights.LayerWeights] = []
        for l in 0..<layers {
            let p = "blk.\(l)."
            layerWeights.append(TransformerWeights.LayerWeights(
                attentionNorm: try gains(p + "attn_norm.weight"),
                qkv: try matrix([(p + "attn_q.weight", dim), (p + "attn_k.weight", kvDim), (p + "attn_v.weight", kvDim)], columns: dim),
                attentionOutput: try matrix([(p + "attn_output.weight", dim)], columns: dim),
                ffnNorm: try gains(p + "ffn_norm.weight"),
                gateUp: try matrix([(p + "ffn_gate.weight", ffn), (p + "ffn_up.weight", ffn)], columns: dim),
                down: try matrix([(p + "ffn_down.weight", dim)], columns: ffn)))
        }
        // The output head is output.weight, or the embedding when the two are tied (no output.weight).
        let output: any DecodeMatrix = file.tensor(named: "output.weight") == nil
            ? embedding : try matrix([("output.weight", vocab)], columns: dim)
        let typeNames = Set(file.tensors.map(\.type)).sorted { $0.rawValue > $1.rawValue }.map(\.name)
        let shape = ModelShape(dim: dim, layers: layers, heads: heads, kvHeads: kvHeads, ffn: ffn, vocab: vocab,
                               context: max(16, min(context, fileContext)))
        weights = TransformerWeights(shape: shape, formatName: typeNames.joined(separator: "+"), ropeBase: ropeBase,
                                     normEpsilon: Float(epsilon), embedding: embedding, layers: layerWeights,
                                     finalNorm: try gains("output_norm.weight"), output: output)
        tokenizer = try GGUFTokenizer(file: file)
        guard tokenizer.vocabularySize >= vocab else {
            throw GGUFError.invalid("the tokenizer has \(tokenizer.vocabularySize) tokens, the embedding \(vocab)")
        }
    }
}
