import Foundation
import Testing
@testable import HitchWorkloads

/// A tiny gemma3 GGUF: dim 256 (so rows take 256-weight K-quant blocks), 2 heads of 64 (the head
/// dimension is not dim / heads), 1 KV head, a sliding window of 3 positions on every layer but
/// each second, K-quant and q5_0 matrices mixed as llama-quantize mixes them, and a SentencePiece
/// vocabulary (specials, the 256 byte tokens, a few pieces with scores).
func tinyGemma3GGUF(seed: UInt64 = 5, layers: Int = 2) -> GGUFWriter {
    let dim = 256, ffn = 512, heads = 2, kvHeads = 1, headDim = 64
    var w = GGUFWriter()
    w.add("general.architecture", "gemma3")
    w.add("gemma3.embedding_length", uint32: UInt32(dim))
    w.add("gemma3.block_count", uint32: UInt32(layers))
    w.add("gemma3.feed_forward_length", uint32: UInt32(ffn))
    w.add("gemma3.attention.head_count", uint32: UInt32(heads))
    w.add("gemma3.attention.head_count_kv", uint32: UInt32(kvHeads))
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

@Suite("Gemma 3 and K-quant models")
struct Gemma3Tests {
    @Test("a tiny gemma3 file loads its shape, window and mixed K-quant matrices, and decodes past the window")
    func tinyModel() throws {
        let path = try tinyGemma3GGUF().write("tiny-gemma3")
        defer { unlink(path) }
        let model = try GGUFModel(path: path, context: 32)
        let weights = model.weights
        #expect(weights.architecture == .gemma3)
        #expect(weights.shape.headDim == 64 && weights.shape.queryDim == 128 && weights.shape.qkvRows == 256)
        #expect(weights.slidingWindow?.isLocal == [true, false] && weights.slidingWindow?.positions == 3)
        #expect(weights.output === weights.embedding)
        #expect(weights.formatName == "q6_K+q5_K+q4_K+q8_0+q5_1+q5_0+f32")
        let pool = WorkerPool(threadCount: 2)
        defer { pool.shutdown() }
        let session = DecodeSession(weights: weights, pool: pool)
        var token = 2
        for _ in 0..<8 {   // beyond the 3-position window on the local layer
            try session.step(token: token)
            #expect((0..<weights.shape.vocab).allSatisfy { session.logits[$0].isFinite })
            token = session.sample()
        }
        #expect(session.position == 8)
        #expect(weights.byteCount == model.file.tensors.reduce(0) { $0 + $1.byteCount })
    }

    @Test("SentencePiece: highest-scoring merges, ▁ for spaces, byte fallback, user-defined runs, Gemma's turns")
    func sentencePiece() throws {
        let path = try tinyGemma3GGUF(layers: 1).write("tiny-gemma3-tokenizer")
        defer { unlink(path) }
        let tokenizer = try GGUFModel(path: path, context: 16).tokenizer
        let first = 7 + 256   // ids of the pieces: after the specials and the byte tokens
        func piece(_ text: String) -> Int { first + ["▁", "t", "h", "e", "▁t", "he", "▁the", "th", "é"].firstIndex(of: text)! }
        func byte(_ value: UInt8) -> Int { 7 + Int(value) }
        // BOS, then " the" as one piece; "x" has no piece: its byte token.
        #expect(tokenizer.encode(" the") == [2, piece("▁the")])
        // h+e (score -3) merges before t+h (-5), and "the" is no piece.
        #expect(tokenizer.encode("thex") == [2, piece("t"), piece("he"), byte(0x78)])
        // A run of two spaces is the user-defined token, split out before merging.
        #expect(tokenizer.encode("t  é") == [2, piece("t"), 6, piece("é")])
        // A character without a piece falls back to its UTF-8 bytes.
        #expect(tokenizer.encode("ü") == [2, byte(0xC3), byte(0xBC)])
        #expect(tokenizer.bytes(of: piece("▁the")) == Array(" the".utf8) && tokenizer.bytes(of: byte(0xC3)) == [0xC3])
        #expect(tokenizer.encode("<start_of_turn>", parseSpecial: true) == [2, 4])
        #expect(tokenizer.chatPrompt(user: "hi") == "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n")
    }

    @Test("files gemma3 needs but lacks are one-line errors naming the key or tensor")
    func missing() throws {
        var noNorm = tinyGemma3GGUF(layers: 1)
        noNorm.tensors.removeAll { $0.name == "blk.0.attn_q_norm.weight" }
        let path = try noNorm.write("gemma3-missing")
        defer { unlink(path) }
        #expect(throws: GGUFError.missingTensor("blk.0.attn_q_norm.weight")) { try GGUFModel(path: path) }
        var noWidth = tinyGemma3GGUF(layers: 1)
        noWidth.metadata.removeAll { $0.0 == "gemma3.embedding_length" }
        let other = try noWidth.write("gemma3-key")
        defer { unlink(other) }
        #expect(throws: GGUFError.missingKey("gemma3.embedding_length")) { try GGUFModel(path: other) }
    }
}

@Suite("ggml block layouts against gguf-py")
struct GGMLBlockTests {
    struct Fixture: Decodable {
        struct Block: Decodable { let type: String; let tensor: String; let bytes: String; let values: [Float] }
        let blocks: [Block]
    }

    /// Two blocks of a real tensor per type (SmolLM2 requantized by llama-quantize) and the values
    /// gguf-py's reference dequantizer gives them: our dequantizer reads the same numbers, and every
    /// kernel version's product with quantized activations equals the product with those numbers
    /// within the activations' rounding.
    @Test("real blocks of every quantized type dequantize as gguf-py and multiply as their values")
    func realBlocks() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/llm/ggml-blocks.json")
        let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
        #expect(Set(fixture.blocks.map(\.type)) == ["q8_0", "q5_0", "q5_1", "q4_K", "q5_K", "q6_K"])
        for block in fixture.blocks {
            let type = try #require(GGMLType(name: block.type))
            let bytes = [UInt8](try #require(Data(base64Encoded: block.bytes)))
            let columns = block.values.count
            #expect(bytes.count == type.rowBytes(columns: columns))
            var ours = [Float](repeating: 0, count: columns)
            bytes.withUnsafeBytes { raw in ours.withUnsafeMutableBufferPointer { type.dequantizeRow(raw.baseAddress!, columns: columns, into: $0.baseAddress!) } }
            let worst = zip(ours, block.values).map { abs($0 - $1) / max(1e-3, abs($1)) }.max()!
            #expect(worst <= 1e-5, "\(block.type) \(block.tensor): relative difference \(worst)")
            var rng = SeededGenerator(seed: 17)
            let x = (0..<columns).map { _ in rng.nextSigned() }
            let reference = zip(block.values, x).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            let magnitude = zip(block.values, x).reduce(Float(0)) { $0 + abs($1.0 * $1.1) }
            let xq = QuantizedVector(capacity: columns)
            x.withUnsafeBufferPointer { xq.quantize8($0.baseAddress!, count: columns); if columns % 256 == 0 { xq.quantizeK($0.baseAddress!, count: columns) } }
            for isa in QuantizedKernels.all {
                guard let kernel = QuantizedKernels.kernel(isa, for: type) else { continue }
                var y: Float = 0
                bytes.withUnsafeBytes { raw in
                    kernel(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, 1, columns / type.blockSize, xq.ggml, &y)
                }
                // int8 activations: each product off by at most half a step (max|x| / 254) times the weight.
                #expect(abs(y - reference) <= 0.01 * magnitude + 1e-6, "\(isa) \(block.type): \(y) vs \(reference)")
            }
        }
    }
}
