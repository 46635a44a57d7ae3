import Foundation
import Testing
import HitchAlgorithms
@testable import HitchWorkloads

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
        // A reply ends at <end_of_turn> as at <eos> (a Gemma turn never emits <eos> itself).
        #expect(tokenizer.endOfGeneration == [1, 5])
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
        let fixture: Fixture = try llmFixture("ggml-blocks.json")
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
