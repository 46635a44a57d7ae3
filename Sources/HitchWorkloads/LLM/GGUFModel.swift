// A model read from a GGUF file: its architecture (general.architecture: llama or gemma3) chooses
// the loader and the forward pass; hyperparameters come from the metadata, matrices are mapped in
// place under llama.cpp's tensor names, and the tokenizer is the file's.

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
        let architectureName = try file.string("general.architecture")
        guard let architecture = TransformerWeights.Architecture(rawValue: architectureName) else {
            throw GGUFError.unsupportedModel("general.architecture is \(architectureName) (supported: \(TransformerWeights.Architecture.supportedNames))")
        }
        let loader = TensorLoader(file: file)
        switch architecture {
        case .llama: weights = try loader.llama(context: context)
        case .gemma3: weights = try loader.gemma3(context: context)
        }
        tokenizer = try GGUFTokenizer(file: file)
        guard tokenizer.vocabularySize >= weights.shape.vocab else {
            throw GGUFError.invalid("the tokenizer has \(tokenizer.vocabularySize) tokens, the embedding \(weights.shape.vocab)")
        }
    }
}

/// Reads one architecture's hyperparameters and tensors from a file, with one-line errors naming
/// the key or tensor a file lacks.
struct TensorLoader {
    let file: GGUFFile

    func bounded(_ key: String, _ range: ClosedRange<Int>, default fallback: Int? = nil) throws -> Int {
        let value: Int
        if let fallback, file.metadata[key] == nil { value = fallback } else { value = try file.integer(key) }
        guard range.contains(value) else { throw GGUFError.invalid("\(key) = \(value) is outside \(range)") }
        return value
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

    func gains(_ name: String, count: Int) throws -> UnsafeMutablePointer<Float> {
        let t = try tensor(name, columns: count, rows: nil)
        guard t.type == .f32 else { throw GGUFError.unsupportedModel("norm \(name) is \(t.type.name), not f32") }
        // Read-only in practice: norms only read their gains. Tensor data is aligned to ≥ 32 bytes.
        return UnsafeMutablePointer(mutating: file.data(of: t).assumingMemoryBound(to: Float.self))
    }

    func embedding() throws -> (matrix: MappedMatrix, vocab: Int, dim: Int) {
        guard let t = file.tensor(named: "token_embd.weight"), t.dimensions.count == 2 else {
            throw GGUFError.missingTensor("token_embd.weight")
        }
        return (try matrix([("token_embd.weight", t.dimensions[1])], columns: t.dimensions[0]), t.dimensions[1], t.dimensions[0])
    }

    /// The sizes every architecture names alike (`key` spells "ARCH.suffix"), each within its bounds.
    func sizes(_ key: (String) -> String) throws -> (dim: Int, layers: Int, ffn: Int, heads: Int, kvHeads: Int) {
        let dim = try bounded(key("embedding_length"), 32...65536)
        let layers = try bounded(key("block_count"), 1...1024)
        let ffn = try bounded(key("feed_forward_length"), 32...1 << 20)
        let heads = try bounded(key("attention.head_count"), 1...1024)
        let kvHeads = try bounded(key("attention.head_count_kv"), 1...heads, default: heads)
        return (dim, layers, ffn, heads, kvHeads)
    }

    /// Throws for a RoPE scaling (`key`, other than "none"): the decoder has none.
    func refuseRopeScaling(_ key: String) throws {
        if let scaling = file.metadata[key]?.string, scaling != "none" {
            throw GGUFError.unsupportedModel("RoPE scaling (\(scaling))")
        }
    }

    /// Block `l`'s attention and feed-forward tensors (llama.cpp's names): queries of `queryDim`,
    /// keys and values of `kvDim` each, over an embedding of `dim` and a feed-forward of `ffn`.
    func block(_ l: Int, dim: Int, queryDim: Int, kvDim: Int, ffn: Int) throws -> TransformerWeights.LayerWeights {
        let p = "blk.\(l)."
        return TransformerWeights.LayerWeights(
            attentionNorm: try gains(p + "attn_norm.weight", count: dim),
            qkv: try matrix([(p + "attn_q.weight", queryDim), (p + "attn_k.weight", kvDim), (p + "attn_v.weight", kvDim)], columns: dim),
            attentionOutput: try matrix([(p + "attn_output.weight", dim)], columns: queryDim),
            ffnNorm: try gains(p + "ffn_norm.weight", count: dim),
            gateUp: try matrix([(p + "ffn_gate.weight", ffn), (p + "ffn_up.weight", ffn)], columns: dim),
            down: try matrix([(p + "ffn_down.weight", dim)], columns: ffn))
    }

    /// The output head: output.weight, or the embedding when the two are tied (no output.weight).
    func outputHead(embedding: MappedMatrix, vocab: Int, dim: Int) throws -> any DecodeMatrix {
        file.tensor(named: "output.weight") == nil ? embedding : try matrix([("output.weight", vocab)], columns: dim)
    }

    /// The tensor types the file holds, largest id first ("q6_K+q5_0+f32").
    var typeNames: String { Set(file.tensors.map(\.type)).sorted { $0.rawValue > $1.rawValue }.map(\.name).joined(separator: "+") }

    func llama(context: Int) throws -> TransformerWeights {
        func key(_ suffix: String) -> String { "llama." + suffix }
        let (dim, layers, ffn, heads, kvHeads) = try sizes(key)
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
        try refuseRopeScaling(key("rope.scaling.type"))
        guard dim % 32 == 0, ffn % 32 == 0, headDim % 16 == 0 else {
            throw GGUFError.unsupportedModel("embedding \(dim), FFN \(ffn) and head dimension \(headDim) must be multiples of 32, 32 and 16")
        }
        let (embedding, vocab, _) = try embedding()
        let kvDim = kvHeads * headDim
        let layerWeights = try (0..<layers).map { try block($0, dim: dim, queryDim: dim, kvDim: kvDim, ffn: ffn) }
        let output = try outputHead(embedding: embedding, vocab: vocab, dim: dim)
        let shape = ModelShape(dim: dim, layers: layers, heads: heads, kvHeads: kvHeads, ffn: ffn, vocab: vocab,
                               context: max(16, min(context, fileContext)))
        return TransformerWeights(shape: shape, architecture: .llama, formatName: typeNames, ropeBase: ropeBase,
                                  normEpsilon: Float(epsilon), embedding: embedding, layers: layerWeights,
                                  finalNorm: try gains("output_norm.weight", count: dim), output: output)
    }

    /// Gemma 3: GeGLU feed-forward; RMSNorm before and after attention and the feed-forward (the
    /// files store Gemma's (1 + weight) gains with the 1 added, as llama.cpp's converter writes them);
    /// per-head RMSNorm of queries and keys; NeoX RoPE; embeddings scaled by sqrt(dim); the output head
    /// tied to the embedding unless output.weight exists; sliding-window attention with its own RoPE
    /// base on every layer but each `sliding_window_pattern`-th (default 6, as llama.cpp).
    func gemma3(context: Int) throws -> TransformerWeights {
        func key(_ suffix: String) -> String { "gemma3." + suffix }
        let (dim, layers, ffn, heads, kvHeads) = try sizes(key)
        let headDim = try bounded(key("attention.key_length"), 16...4096, default: dim / heads)
        let valueLength = try bounded(key("attention.value_length"), 16...4096, default: headDim)
        guard valueLength == headDim else {
            throw GGUFError.unsupportedModel("\(key("attention.value_length")) \(valueLength) differs from key_length \(headDim)")
        }
        guard heads % kvHeads == 0, headDim % 16 == 0, dim % 32 == 0, ffn % 32 == 0 else {
            throw GGUFError.unsupportedModel("\(heads) heads, \(kvHeads) KV heads, head dimension \(headDim), embedding \(dim), FFN \(ffn)")
        }
        try refuseRopeScaling(key("rope.scaling.type"))
        if let softcap = file.metadata[key("final_logit_softcapping")]?.number, softcap != 0 {
            throw GGUFError.unsupportedModel("\(key("final_logit_softcapping")) = \(softcap)")
        }
        let fileContext = (try? file.integer(key("context_length"))) ?? 2048
        let ropeBase = (try? file.number(key("rope.freq_base"))) ?? 1_000_000
        let localRopeBase = (try? file.number(key("rope.freq_base_swa"))) ?? 10_000
        let epsilon = (try? file.number(key("attention.layer_norm_rms_epsilon"))) ?? 1e-6
        let window = try bounded(key("attention.sliding_window"), 0...Int(Int32.max), default: 0)
        var isLocal = [Bool](repeating: false, count: layers)
        if window > 0 {
            if let flags = file.metadata[key("attention.sliding_window_pattern")]?.array {
                guard flags.count == layers else {
                    throw GGUFError.invalid("\(key("attention.sliding_window_pattern")) has \(flags.count) entries for \(layers) layers")
                }
                isLocal = flags.map { $0.bool ?? ($0.integer.map { $0 != 0 } ?? false) }
            } else {
                let period = try bounded(key("attention.sliding_window_pattern"), 0...1024, default: 6)
                isLocal = (0..<layers).map { period == 0 || $0 % period < period - 1 }
            }
        }
        let (embedding, vocab, embeddingColumns) = try embedding()
        guard embeddingColumns == dim else { throw GGUFError.invalid("token_embd.weight has rows of \(embeddingColumns), the embedding is \(dim)") }
        let queryDim = heads * headDim, kvDim = kvHeads * headDim
        let layerWeights = try (0..<layers).map { l in
            var weights = try block(l, dim: dim, queryDim: queryDim, kvDim: kvDim, ffn: ffn)
            let p = "blk.\(l)."
            weights.queryNorm = try gains(p + "attn_q_norm.weight", count: headDim)
            weights.keyNorm = try gains(p + "attn_k_norm.weight", count: headDim)
            weights.postAttentionNorm = try gains(p + "post_attention_norm.weight", count: dim)
            weights.postFFNNorm = try gains(p + "post_ffw_norm.weight", count: dim)
            return weights
        }
        let output = try outputHead(embedding: embedding, vocab: vocab, dim: dim)
        var shape = ModelShape(dim: dim, layers: layers, heads: heads, kvHeads: kvHeads, ffn: ffn, vocab: vocab,
                               context: max(16, min(context, fileContext)))
        shape.attentionHeadDim = headDim == dim / heads ? nil : headDim
        return TransformerWeights(shape: shape, architecture: .gemma3, formatName: typeNames, ropeBase: ropeBase,
                                  normEpsilon: Float(epsilon), embedding: embedding, layers: layerWeights,
                                  finalNorm: try gains("output_norm.weight", count: dim), output: output,
                                  slidingWindow: TransformerWeights.SlidingWindow(positions: window, ropeBase: localRopeBase, isLocal: isLocal))
    }
}

extension GGUFModel {
    /// The synthetic model of `shape` and `seed` with its matrices in `type`, written as GGUF to a
    /// temporary file in `directory` and mapped back (the file is unlinked once mapped).
    public static func synthetic(shape: ModelShape, type: GGMLType, seed: UInt64,
                                 directory: String = NSTemporaryDirectory()) throws -> GGUFModel {
        let path = (directory as NSString).appendingPathComponent("hitch-synthetic-\(getpid())-\(type.name)-\(seed).gguf")
        defer { unlink(path) }
        try TransformerWeights.writeGGUF(shape: shape, type: type, seed: seed, to: path)
        return try GGUFModel(path: path, context: shape.context)
    }
}
