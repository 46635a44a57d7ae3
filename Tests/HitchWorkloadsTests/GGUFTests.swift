import Foundation
import Testing
import HitchAlgorithms
@testable import HitchWorkloads

extension GGUFWriter {
    /// Writes the file in the temporary directory; returns its path.
    func write(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "hitch-gguf-\(getpid())-\(name).gguf"
        try write(to: path)
        return path
    }
}

/// Encodes f32 values in a ggml type (the writer's reference quantizers).
func ggmlEncode(_ values: [Float], type: GGMLType) -> [UInt8] { type.encode(values) }

private func values(_ count: Int, seed: UInt64, amplitude: Float = 1) -> [Float] {
    var rng = SeededGenerator(seed: seed)
    return (0..<count).map { _ in rng.nextSigned() * amplitude }
}

/// A tiny llama GGUF with random weights of `type` and a byte-level vocabulary (256 bytes + merges,
/// padded to `vocabulary`); without `byteTokens`, only a few letters (a smaller file, for fuzzing).
func tinyLlamaGGUF(type: GGMLType, seed: UInt64 = 3, layers: Int = 2, vocabulary: Int = 320, byteTokens: Bool = true) -> GGUFWriter {
    let dim = 64, ffn = 128, heads = 4, kvHeads = 2, kvDim = kvHeads * dim / heads
    var w = GGUFWriter()
    w.addShape("llama", dim: dim, layers: layers, ffn: ffn, heads: heads, kvHeads: kvHeads)
    w.add("llama.context_length", uint32: 64)
    w.add("llama.rope.freq_base", float: 10000)
    w.add("llama.attention.layer_norm_rms_epsilon", float: 1e-5)
    w.add("tokenizer.ggml.model", "gpt2")
    w.add("tokenizer.ggml.pre", "smollm")
    let bytes = byteTokens ? (0..<256).map { String(GGUFTokenizer.byteEncoder[$0]) } : ["Ġ", "t", "h", "e", "1", "2"]
    var tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + bytes + ["Ġt", "he", "Ġthe"]
    while tokens.count < vocabulary { tokens.append("<unused\(tokens.count)>") }
    var types = [Int32](repeating: 1, count: tokens.count)
    types[0] = 3; types[1] = 3; types[2] = 3
    w.add("tokenizer.ggml.tokens", strings: tokens)
    w.add("tokenizer.ggml.token_type", int32s: types)
    w.add("tokenizer.ggml.merges", strings: ["Ġ t", "h e", "Ġt he"])
    w.add("tokenizer.ggml.eos_token_id", uint32: 2)
    w.add("tokenizer.chat_template", "{{'<|im_start|>system\nBe brief.<|im_end|>'}}")
    var seedCounter = seed
    func tensor(_ name: String, _ columns: Int, _ rows: Int?, _ t: GGMLType, amplitude: Float) {
        seedCounter += 1
        let count = columns * (rows ?? 1)
        let data = rows == nil ? values(count, seed: seedCounter, amplitude: 0.1).map { 1 + $0 }
            : values(count, seed: seedCounter, amplitude: amplitude)
        w.addTensor(name, dimensions: rows.map { [columns, $0] } ?? [columns], type: rows == nil ? .f32 : t,
                    bytes: ggmlEncode(data, type: rows == nil ? .f32 : t))
    }
    let a = (3 / Float(dim)).squareRoot()
    tensor("token_embd.weight", dim, tokens.count, type, amplitude: 1)
    for l in 0..<layers {
        tensor("blk.\(l).attn_norm.weight", dim, nil, type, amplitude: 0)
        tensor("blk.\(l).attn_q.weight", dim, dim, type, amplitude: a)
        tensor("blk.\(l).attn_k.weight", dim, kvDim, type, amplitude: a)
        tensor("blk.\(l).attn_v.weight", dim, kvDim, type, amplitude: a)
        tensor("blk.\(l).attn_output.weight", dim, dim, type, amplitude: a)
        tensor("blk.\(l).ffn_norm.weight", dim, nil, type, amplitude: 0)
        tensor("blk.\(l).ffn_gate.weight", dim, ffn, type, amplitude: a)
        tensor("blk.\(l).ffn_up.weight", dim, ffn, type, amplitude: a)
        tensor("blk.\(l).ffn_down.weight", ffn, dim, type, amplitude: (3 / Float(ffn)).squareRoot())
    }
    tensor("output_norm.weight", dim, nil, type, amplitude: 0)
    return w
}

@Suite("GGUF reader and model", .serialized)
struct GGUFTests {
    @Test("metadata of every type, arrays, tensor infos and mapped data read back")
    func roundTrip() throws {
        var w = GGUFWriter()
        w.add("u8", type: 0, [200]); w.add("i8", type: 1, [0xFF]); w.add("u16", type: 2, GGUFWriter.le(UInt16(60000)))
        w.add("i16", type: 3, GGUFWriter.le(Int16(-300))); w.add("u32", uint32: 4_000_000_000); w.add("i32", type: 5, GGUFWriter.le(Int32(-7)))
        w.add("f32", float: 1.5); w.add("bool", type: 7, [1]); w.add("string", "héllo")
        w.add("u64", type: 10, GGUFWriter.le(UInt64(1) << 40)); w.add("i64", type: 11, GGUFWriter.le(Int64(-5)))
        w.add("f64", type: 12, GGUFWriter.le((2.25).bitPattern)); w.add("strings", strings: ["a", "bc"])
        w.add("nested", type: 9, GGUFWriter.le(UInt32(9)) + GGUFWriter.le(UInt64(1)) + GGUFWriter.le(UInt32(5)) + GGUFWriter.le(UInt64(2))
              + GGUFWriter.le(Int32(1)) + GGUFWriter.le(Int32(2)))
        let weights = values(64 * 3, seed: 1)
        w.addTensor("m", dimensions: [64, 3], type: .q4_1, bytes: ggmlEncode(weights, type: .q4_1))
        w.addTensor("v", dimensions: [32], type: .f32, bytes: ggmlEncode(Array(weights[0..<32]), type: .f32))
        let path = try w.write("roundtrip")
        defer { unlink(path) }
        let file = try GGUFFile(path: path)
        #expect(file.version == 3)
        #expect(file.metadata["u8"] == .uint8(200) && file.metadata["i8"] == .int8(-1) && file.metadata["u16"] == .uint16(60000))
        #expect(file.metadata["i16"] == .int16(-300) && file.metadata["u32"] == .uint32(4_000_000_000) && file.metadata["i32"] == .int32(-7))
        #expect(file.metadata["f32"] == .float32(1.5) && file.metadata["bool"] == .bool(true) && file.metadata["string"] == .string("héllo"))
        #expect(file.metadata["u64"] == .uint64(1 << 40) && file.metadata["i64"] == .int64(-5) && file.metadata["f64"] == .float64(2.25))
        #expect(file.metadata["strings"] == .array(8, [.string("a"), .string("bc")]))
        #expect(file.metadata["nested"] == .array(9, [.array(5, [.int32(1), .int32(2)])]))
        #expect(file.keys.first == "u8" && file.keys.count == 14)
        let m = try #require(file.tensor(named: "m"))
        #expect(m.dimensions == [64, 3] && m.type == .q4_1 && m.byteCount == 3 * 2 * 20)
        #expect(file.dataOffset % 32 == 0 && m.offset == 0)
        let v = try #require(file.tensor(named: "v"))
        #expect(v.offset == 128)    // 120 bytes of m, aligned to 32
        let first = file.data(of: v).loadUnaligned(as: Float.self)
        #expect(first == weights[0])
    }

    @Test("bad files are one-line typed errors, at every truncation")
    func badFiles() throws {
        var w = GGUFWriter()
        w.add("general.architecture", "llama")
        w.add("list", strings: ["x", "y"])
        w.addTensor("t", dimensions: [32, 2], type: .q8_0, bytes: [UInt8](repeating: 1, count: 68))
        let good = try w.bytes()
        func check(_ bytes: [UInt8], _ name: String) -> GGUFError? {
            let path = NSTemporaryDirectory() + "hitch-gguf-\(getpid())-\(name).gguf"
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            defer { unlink(path) }
            do { _ = try GGUFFile(path: path); return nil } catch let error as GGUFError { return error } catch { return nil }
        }
        #expect(check(good, "good") == nil)
        // Every truncation fails with an error (the last 68 + padding bytes are tensor data).
        for length in 0..<(good.count - 28) {   // the tensor data is 68 bytes padded to 96
            let error = check(Array(good[..<length]), "cut")
            #expect(error != nil, "truncated to \(length) bytes")
            #expect(error.map { !$0.description.contains("\n") } ?? true)
        }
        var magic = good; magic[0] = 0x47 ^ 0xFF
        #expect(check(magic, "magic").map { if case .notGGUF = $0 { true } else { false } } == true)
        // Absurd counts: 2^60 tensors, 2^60 metadata entries, a 2^60-byte key, a 2^60-element array.
        var tensors = good; tensors.replaceSubrange(8..<16, with: GGUFWriter.le(UInt64(1) << 60))
        #expect(check(tensors, "tensors") != nil)
        var keys = good; keys.replaceSubrange(16..<24, with: GGUFWriter.le(UInt64(1) << 60))
        #expect(check(keys, "keys") != nil)
        var key = good; key.replaceSubrange(24..<32, with: GGUFWriter.le(UInt64(1) << 60))
        #expect(check(key, "key") != nil)
        let arrayAt = good.indices.first { Array(good[$0..<($0 + 4)]) == Array("list".utf8) }! + 4 + 4 + 4
        var array = good; array.replaceSubrange(arrayAt..<(arrayAt + 8), with: GGUFWriter.le(UInt64(1) << 60))
        #expect(check(array, "array") != nil)
        // A tensor past the end of the file, and a row length that is not a whole number of blocks.
        var outside = w; outside.tensors[0].dimensions = [32, 20]
        #expect(check(try outside.bytes(), "outside").map { if case .tensorOutsideFile = $0 { true } else { false } } == true)
        var shape = w; shape.tensors[0].dimensions = [33, 2]
        #expect(check(try shape.bytes(), "shape") != nil)
        var type = w; type.tensors[0].type = 10   // q2_K
        #expect(check(try type.bytes(), "type").map { $0.description == "tensor t has type q2_K; supported: \(GGMLType.supportedNames)" } == true)
    }

    @Test("mapped products equal the dequantized reference within the int8 activation error", arguments: GGMLType.allCases)
    func mappedProducts(type: GGMLType) throws {
        let rows = 35, columns = 512
        let weights = values(rows * columns, seed: 9)
        var w = GGUFWriter()
        w.addTensor("a", dimensions: [columns, 20], type: type, bytes: ggmlEncode(Array(weights[..<(20 * columns)]), type: type))
        w.addTensor("b", dimensions: [columns, 15], type: type, bytes: ggmlEncode(Array(weights[(20 * columns)...]), type: type))
        let path = try w.write("products-\(type.name)")
        defer { unlink(path) }
        let file = try GGUFFile(path: path)
        let matrix = try MappedMatrix(file: file, tensors: [file.tensor(named: "a")!, file.tensor(named: "b")!])
        #expect(matrix.rows == rows && matrix.byteCount == rows * type.rowBytes(columns: columns))
        let x = values(columns, seed: 10)
        var y = [Float](repeating: 0, count: rows)
        let pool = WorkerPool(threadCount: 2)
        defer { pool.shutdown() }
        func product() -> [Float] {
            var y = [Float](repeating: 0, count: rows)
            x.withUnsafeBufferPointer { xb in
                y.withUnsafeMutableBufferPointer { yb in
                    let task = MatvecTask(placeholder: matrix, x: xb.baseAddress!, y: yb.baseAddress!, maxColumns: columns)
                    task.run(matrix, x: xb.baseAddress!, y: yb.baseAddress!, pool: pool)
                }
            }
            return y
        }
        // Every kernel version this CPU runs gives the portable version's products (up to the order
        // of the float additions), called directly: the one the products use is never switched.
        if !type.isFloat {
            let xq = QuantizedVector(capacity: columns)
            x.withUnsafeBufferPointer { xq.quantize8($0.baseAddress!, count: columns); xq.quantizeK($0.baseAddress!, count: columns) }
            func run(_ isa: String) -> [Float]? {
                guard let kernel = QuantizedKernels.kernel(isa, for: type) else { return nil }
                var out = [Float](repeating: 0, count: rows)
                out.withUnsafeMutableBufferPointer { o in
                    for segment in matrix.segments {
                        kernel(segment.base.assumingMemoryBound(to: UInt8.self), segment.rowBytes, segment.rows, columns / type.blockSize,
                               xq.ggml, o.baseAddress! + segment.firstRow)
                    }
                }
                return out
            }
            // Every version equals the portable one to the bit (QuantizedKernelsTests checks more
            // shapes); the K-quants in a single token's and (q4_K, q6_K) a prompt row's order.
            let batchedOrder = type == .q4_K || type == .q6_K
            var byOrder: [[Float]] = []
            for batched: Int32 in batchedOrder ? [0, 1] : [0] {
                xq.ggml.pointee.q4_K_gemm = batched
                xq.ggml.pointee.q6_K_tiled = batched
                let portable = try #require(run("portable"))
                byOrder.append(portable)
                for isa in QuantizedKernels.all {
                    guard let y = run(isa) else { continue }
                    #expect(y == portable, "\(isa), batched \(batched): \(y) vs \(portable)")
                }
            }
            // The two orders are the same sums rounded differently: close, and not all equal.
            if batchedOrder {
                #expect(zip(byOrder[0], byOrder[1]).allSatisfy { abs($0 - $1) <= 1e-4 * max(1, abs($1)) })
                #expect(byOrder[0] != byOrder[1], "the batched order changed no product")
            }
        }
        y = product()
        var row = [Float](repeating: 0, count: columns)
        for r in 0..<rows {
            row.withUnsafeMutableBufferPointer { matrix.dequantizeRow(r, into: $0.baseAddress!) }
            let reference = zip(row, x).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            // The dequantized row is the stored weights exactly; the products differ by the int8
            // activations (half a step of max|x|/127 per element) and the f16 scales.
            let bound: Float = type.isFloat ? 1e-4 * Float(columns).squareRoot() : 0.02 * Float(columns).squareRoot()
            #expect(abs(y[r] - reference) <= bound, "row \(r): \(y[r]) vs \(reference)")
            // And the stored weights are the written ones within the type's step.
            // Half a quantization step of the block's range (K-quants: plus the 6- or 8-bit rounding of
            // the sub-block scales).
            let step: Float = switch type {
            case .f32: 1e-6; case .f16: 1e-3; case .bf16: 1.0 / 128; case .q8_0: 1.0 / 127; case .q4_0: 1.0 / 7; case .q4_1: 2.0 / 15
            case .q5_0: 1.0 / 15; case .q5_1: 2.0 / 31; case .q4_K: 0.1; case .q5_K: 0.06; case .q6_K: 0.04
            }
            #expect(zip(row, weights[(r * columns)..<((r + 1) * columns)]).allSatisfy { abs($0 - $1) <= step })
        }
    }

    /// About 1e-40: a subnormal Float (a decimal literal that small draws an underflow warning).
    static let subnormalScale = Float(bitPattern: 0x0001_16C2)

    @Test("every version of the q8_K activation quantizer gives the portable one's bytes: NaN, infinity, ties, equal magnitudes, zero blocks")
    func quantizerVersions() throws {
        let versions = QuantizedKernels.all.compactMap { isa in QuantizedKernels.quantizerK(isa).map { (isa, $0) } }
        try QuantizedKernelsTests.expectVersionsAgree(try #require(QuantizedKernels.quantizerK("portable")), versions, seed: 0x5138_4B51) { kind, i, v, rng in
            switch kind {
            case 1: Float(Int(rng.next() % 255) - 127)   // integers: ties once scaled
            case 4: rng.next() % 2 == 0 ? 5 : -5         // equal magnitudes: the first one's sign wins
            default: (i / 256) % 2 == 0 ? 0 : v * Self.subnormalScale   // zero blocks, subnormals
            }
        } compare: { a, e, count, label in
            #expect(QuantizedKernelsTests.sameBytes(a.k_values, e.k_values, count), "\(label): values")
            #expect(QuantizedKernelsTests.sameBytes(a.k_sums, e.k_sums, count / 16), "\(label): sums")
            #expect(QuantizedKernelsTests.sameBytes(a.k_scales, e.k_scales, count / 256), "\(label): scales")
        }
    }

    @Test("a tiny llama GGUF loads, tokenizes with its merges and decodes", arguments: [GGMLType.q4_1, .q8_0, .q4_0, .f16])
    func tinyModel(type: GGMLType) throws {
        let path = try tinyLlamaGGUF(type: type).write("tiny-\(type.name)")
        defer { unlink(path) }
        let model = try GGUFModel(path: path, context: 32)
        #expect(model.weights.shape == ModelShape(dim: 64, layers: 2, heads: 4, kvHeads: 2, ffn: 128, vocab: 320, context: 32))
        #expect(model.weights.output === model.weights.embedding)
        let tokenizer = model.tokenizer
        // " the" merges Ġ t -> Ġt, h e -> he, Ġt he -> Ġthe (id 261); "1" is a byte token.
        #expect(tokenizer.encode(" the1") == [261, 3 + 0x31])   // ids: 3 specials, then the 256 bytes in order
        #expect(tokenizer.encode("<|im_start|>", parseSpecial: true) == [1])
        #expect(tokenizer.encode("<|im_start|>", parseSpecial: false).count > 1)
        #expect(tokenizer.chatPrompt(user: "hi") == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
        #expect(tokenizer.bytes(of: 261) == Array(" the".utf8) && tokenizer.bytes(of: 2).isEmpty)
        let pool = WorkerPool(threadCount: 2)
        defer { pool.shutdown() }
        let session = DecodeSession(weights: model.weights, pool: pool)
        try session.prefill(tokens: tokenizer.encode("the the"))
        var token = session.sample()
        for _ in 0..<6 {
            #expect(token >= 0 && token < 320)
            try session.step(token: token)
            #expect((0..<320).allSatisfy { session.logits[$0].isFinite })
            token = session.sample()
        }
        // Tensor bytes, not a format's nominal size: the accounting reads the real tensors.
        #expect(model.weights.byteCount == model.file.tensors.reduce(0) { $0 + $1.byteCount })
    }

    @Test("missing tensors and unsupported models are one-line errors")
    func modelErrors() throws {
        var w = tinyLlamaGGUF(type: .q4_1)
        w.tensors.removeAll { $0.name == "blk.1.ffn_up.weight" }
        let path = try w.write("missing")
        defer { unlink(path) }
        #expect(throws: GGUFError.missingTensor("blk.1.ffn_up.weight")) { try GGUFModel(path: path) }
        var wrong = tinyLlamaGGUF(type: .q4_1)
        wrong.metadata[0] = ("general.architecture", 8, GGUFWriter.string("gemma"))
        let other = try wrong.write("arch")
        defer { unlink(other) }
        #expect(throws: GGUFError.unsupportedModel("general.architecture is gemma (supported: llama, gemma3)")) { try GGUFModel(path: other) }
    }

    @Test("smollm pre-tokenization splits digits apart and keeps llama.cpp's whitespace rules")
    func preTokenizer() {
        func words(_ text: String) -> [String] {
            GGUFTokenizer.preTokenize(Array(text.unicodeScalars), digitsApart: true).map { String(String.UnicodeScalarView($0)) }
        }
        #expect(words("Hello world") == ["Hello", " world"])
        #expect(words("in 2024!") == ["in", " ", "2", "0", "2", "4", "!"])
        #expect(words("a   b") == ["a", "  ", " b"])
        #expect(words("it's ok\n\n") == ["it", "'s", " ok", "\n\n"])
        #expect(words("x = y;") == ["x", " =", " y", ";"])
        #expect(words("日本語 café") == ["日本語", " café"])
    }

    @Test("text streams as valid UTF-8: a token ending inside a character waits")
    func streamingUTF8() throws {
        let path = try tinyLlamaGGUF(type: .q8_0).write("utf8")
        defer { unlink(path) }
        let tokenizer = try GGUFModel(path: path).tokenizer
        var detokenizer = StreamingDetokenizer(tokenizer: tokenizer)
        let ids = tokenizer.encode("é!")   // three byte tokens: 0xC3, 0xA9, '!'
        #expect(ids.count == 3)
        #expect(detokenizer.append(ids[0]) == "")
        #expect(detokenizer.append(ids[1]) == "é")
        #expect(detokenizer.append(ids[2]) == "!")
    }

    @Test("top-k/top-p sampling is seeded, stays in the top k, and top-p 0 is greedy")
    func sampling() throws {
        let path = try tinyLlamaGGUF(type: .q8_0).write("sampling")
        defer { unlink(path) }
        let model = try GGUFModel(path: path, context: 32)
        let pool = WorkerPool(threadCount: 2)
        defer { pool.shutdown() }
        func draw(_ options: SamplingOptions) throws -> [Int] {
            let session = DecodeSession(weights: model.weights, pool: pool, sampling: options)
            try session.prefill(tokens: [10, 11, 12])
            let sorted = (0..<320).sorted { session.logits[$0] > session.logits[$1] }
            let draws = (0..<50).map { _ in session.sample() }
            #expect(draws.allSatisfy { sorted.prefix(options.topK).contains($0) })
            if options.topP == 0 { #expect(Set(draws) == [sorted[0]]) }
            return draws
        }
        let options = SamplingOptions(topK: 8, temperature: 1.5, seed: 4, topP: 0.9)
        #expect(try draw(options) == draw(options))
        #expect(Set(try draw(options)).count > 1)
        _ = try draw(SamplingOptions(topK: 8, temperature: 1, seed: 4, topP: 0))
    }
}
