// The tiny gemma3 model file of the Gemma 3 tests, K-quant fuzzing and the GGUF fuzz target's
// seeds (scripts/dev/fuzz.sh compiles this file into it): no Testing import.

import Foundation
import HitchAlgorithms
@testable import HitchWorkloads

/// A tiny gemma3 GGUF: dim 256 (so rows take 256-weight K-quant blocks), 2 heads of 64 (the head
/// dimension is not dim / heads), 1 KV head, a sliding window of 3 positions on every layer but
/// each second, K-quant and q5_0 matrices mixed as llama-quantize mixes them, and a SentencePiece
/// vocabulary (specials, the 256 byte tokens, a few pieces with scores).
func tinyGemma3GGUF(seed: UInt64 = 5, layers: Int = 2) -> GGUFWriter {
    let dim = 256, ffn = 512, heads = 2, kvHeads = 1, headDim = 64
    var w = GGUFWriter()
    w.addShape("gemma3", dim: dim, layers: layers, ffn: ffn, heads: heads, kvHeads: kvHeads)
    w.add("gemma3.attention.key_length", uint32: UInt32(headDim))
    w.add("gemma3.attention.value_length", uint32: UInt32(headDim))
    w.add("gemma3.context_length", uint32: 64)
    w.add("gemma3.rope.freq_base", float: 1_000_000)
    w.add("gemma3.attention.sliding_window", uint32: 3)
    w.add("gemma3.attention.sliding_window_pattern", uint32: 2)
    w.add("gemma3.attention.layer_norm_rms_epsilon", float: 1e-6)
    w.add("tokenizer.ggml.model", "llama")
    let specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "  "]
    let pieces = ["▁", "t", "h", "e", "▁t", "he", "▁the", "th", "é"]
    let bytes = (0..<256).map { String(format: "<0x%02X>", $0) }
    let tokens = specials + bytes + pieces
    var types = [Int32](repeating: 3, count: specials.count) + [Int32](repeating: 6, count: 256) + [Int32](repeating: 1, count: pieces.count)
    types[6] = 4   // "  " is user-defined, as Gemma's whitespace runs
    // "▁the" scores highest, then "he", "▁t", "th": " the" merges h+e, ▁+t, then ▁t+he.
    let scores: [Float] = [Float](repeating: -1000, count: specials.count + 256) + [-1, -2, -2, -2, -4, -3, -1, -5, -2]
    w.add("tokenizer.ggml.tokens", strings: tokens)
    w.add("tokenizer.ggml.token_type", int32s: types)
    w.add("tokenizer.ggml.scores", .array(6, scores.map(GGUFValue.float32)))
    w.add("tokenizer.ggml.bos_token_id", uint32: 2)
    w.add("tokenizer.ggml.eos_token_id", uint32: 1)
    w.add("tokenizer.ggml.add_bos_token", .bool(true))
    w.add("tokenizer.ggml.add_space_prefix", .bool(false))
    var rng = SeededGenerator(seed: seed)
    func tensor(_ name: String, _ columns: Int, _ rows: Int?, _ type: GGMLType, amplitude: Float = 0.1) {
        let count = columns * (rows ?? 1)
        let values = (0..<count).map { _ in rows == nil ? 1 + 0.1 * rng.nextSigned() : amplitude * rng.nextSigned() }
        let t: GGMLType = rows == nil ? .f32 : type
        w.addTensor(name, dimensions: rows.map { [columns, $0] } ?? [columns], type: t, bytes: t.encode(values))
    }
    tensor("token_embd.weight", dim, tokens.count, .q8_0, amplitude: 1)
    for l in 0..<layers {
        let p = "blk.\(l)."
        tensor(p + "attn_norm.weight", dim, nil, .f32)
        tensor(p + "attn_q.weight", dim, heads * headDim, .q5_0)
        tensor(p + "attn_k.weight", dim, kvHeads * headDim, .q5_1)
        tensor(p + "attn_v.weight", dim, kvHeads * headDim, .q6_K)
        tensor(p + "attn_q_norm.weight", headDim, nil, .f32)
        tensor(p + "attn_k_norm.weight", headDim, nil, .f32)
        tensor(p + "attn_output.weight", heads * headDim, dim, .q5_0)
        tensor(p + "post_attention_norm.weight", dim, nil, .f32)
        tensor(p + "ffn_norm.weight", dim, nil, .f32)
        tensor(p + "ffn_gate.weight", dim, ffn, .q4_K)
        tensor(p + "ffn_up.weight", dim, ffn, .q5_K)
        tensor(p + "ffn_down.weight", ffn, dim, .q6_K)
        tensor(p + "post_ffw_norm.weight", dim, nil, .f32)
    }
    tensor("output_norm.weight", dim, nil, .f32)
    return w
}

extension GGUFWriter {
    /// The architecture and the shape keys every model's metadata starts with (`ARCH.embedding_length`,
    /// `ARCH.block_count`, ...).
    mutating func addShape(_ architecture: String, dim: Int, layers: Int, ffn: Int, heads: Int, kvHeads: Int) {
        add("general.architecture", architecture)
        add("\(architecture).embedding_length", uint32: UInt32(dim))
        add("\(architecture).block_count", uint32: UInt32(layers))
        add("\(architecture).feed_forward_length", uint32: UInt32(ffn))
        add("\(architecture).attention.head_count", uint32: UInt32(heads))
        add("\(architecture).attention.head_count_kv", uint32: UInt32(kvHeads))
    }
}
