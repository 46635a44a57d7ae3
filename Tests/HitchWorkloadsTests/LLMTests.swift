import Foundation
import HitchAlgorithms
import HitchReader
import HitchTrace
import Testing

@testable import HitchWorkloads

/// A small shape that runs fast in debug builds.
let tinyShape = ModelShape(dim: 64, layers: 2, heads: 4, kvHeads: 2, ffn: 128, vocab: 300, context: 32)

private func seededValues(_ count: Int, seed: UInt64, amplitude: Float = 1) -> [Float] {
    var rng = SeededGenerator(seed: seed)
    return (0..<count).map { _ in rng.nextSigned() * amplitude }
}

@Suite("LLM engine", .serialized)
struct LLMEngineTests {
    let pool = WorkerPool(threadCount: 2)

    // 35 rows: the last chunk has an odd row count, so the two-row kernels' single-row tail runs;
    // 256 columns: several prefetch strides and both pal4 nibble halves per run of 32.
    @Test("each format's matvec matches the f32 reference within its quantization error",
          arguments: WeightFormat.allCases, [(48, 128), (35, 256)])
    func matvecMatchesReference(format: WeightFormat, size: (rows: Int, columns: Int)) {
        let (rows, columns) = size
        let w = seededValues(rows * columns, seed: 7)
        let x = seededValues(columns, seed: 8)
        let matrix = WeightMatrix(format: format, rows: rows, columns: columns, from: w)
        #expect(matrix.byteCount == format.bytes(rows: rows, columns: columns))
        var y = [Float](repeating: 0, count: rows)
        x.withUnsafeBufferPointer { xb in
            y.withUnsafeMutableBufferPointer { yb in
                let task = MatvecTask(placeholder: matrix, x: xb.baseAddress!, y: yb.baseAddress!, maxColumns: columns)
                task.run(matrix, x: xb.baseAddress!, y: yb.baseAddress!, pool: pool)
            }
        }
        // Per-weight error bound of each format (half a quantization step, relative to |w| <= 1).
        let weightError: Float = switch format {
        case .f32: 1e-6
        case .f16: 1e-3
        case .q8_0: 1.0 / 127
        case .pal4: 2.0 / 16
        }
        for r in 0..<rows {
            var reference: Float = 0, magnitude: Float = 0
            for c in 0..<columns { reference += w[r * columns + c] * x[c]; magnitude += abs(x[c]) }
            // Errors are independent, so the sum grows like sqrt(n); bound by the worst case / 4.
            #expect(abs(y[r] - reference) <= weightError * magnitude / 4 + 1e-4, "row \(r): \(y[r]) vs \(reference)")
        }
        // The dequantized row (embedding lookups, prefill) is the same matrix the kernel multiplied:
        // only the activation quantization of q8_0 (15 bits) separates the two dot products.
        var row = [Float](repeating: 0, count: columns)
        for r in 0..<rows {
            row.withUnsafeMutableBufferPointer { matrix.dequantizeRow(r, into: $0.baseAddress!) }
            var dequantized: Float = 0, magnitude: Float = 0
            for c in 0..<columns { dequantized += row[c] * x[c]; magnitude += abs(row[c] * x[c]) }
            #expect(abs(y[r] - dequantized) <= magnitude * 1e-4 + 1e-5, "row \(r): kernel \(y[r]) vs dequantized \(dequantized)")
        }
    }

    @Test("half conversion round-trips and matches Float16")
    func halfConversion() {
        for value: Float in [0, 1, -1, 0.5, 1e-3, -3.25, 65000, 1e-5, 6.1e-5] {
            let bits = floatToHalf(value)
            #expect(bits == Float16(value).bitPattern, "\(value)")
            #expect(halfToFloat(bits) == Float(Float16(bitPattern: bits)))
        }
    }

    @Test("RoPE rotates pairs by position-dependent angles")
    func rope() {
        var v: [Float] = [1, 0, 0, 1]
        let cosines: [Float] = [0, 1], sines: [Float] = [1, 0] // 90 degrees for pair 0, 0 for pair 1
        v.withUnsafeMutableBufferPointer { applyRoPE($0.baseAddress!, heads: 1, headDim: 4, cosines: cosines, sines: sines) }
        #expect(v == [0, 1, 0, 1])
    }

    @Test("attention over one position returns its value; equal scores average the values")
    func attention() {
        let shape = ModelShape(dim: 16, layers: 1, heads: 1, kvHeads: 1, ffn: 64, vocab: 256, context: 4)
        let q = [Float](repeating: 0, count: 16)
        let keys = [Float](repeating: 1, count: 32)
        let values: [Float] = (0..<16).map { Float($0) } + (0..<16).map { Float($0) + 2 }
        var out = [Float](repeating: 0, count: 16)
        var scores = [Float](repeating: 0, count: 4)
        attendHead(head: 0, shape: shape, query: q, keys: keys, values: values, positions: 1, scores: &scores, output: &out)
        #expect(out == (0..<16).map { Float($0) })
        attendHead(head: 0, shape: shape, query: q, keys: keys, values: values, positions: 2, scores: &scores, output: &out)
        #expect(out == (0..<16).map { Float($0) + 1 })
    }

    @Test("decoding token by token equals a batched recompute of the same prefix")
    func kvCacheMatchesRecompute() throws {
        let weights = TransformerWeights(shape: tinyShape, format: .f32, seed: 3, pool: pool)
        let tokens = [5, 17, 250, 3, 99, 42]
        let incremental = DecodeSession(weights: weights, pool: pool)
        for token in tokens { try incremental.step(token: token) }
        let batched = DecodeSession(weights: weights, pool: pool, prefillBatch: 4) // two batches: 4 + 2
        try batched.prefill(tokens: tokens)
        for i in 0..<tinyShape.vocab {
            #expect(abs(incremental.logits[i] - batched.logits[i]) < 1e-3, "logit \(i)")
        }
        #expect(incremental.position == tokens.count && batched.position == tokens.count)
    }

    @Test("the same seed gives the same tokens; the weights are the same f32 model in every format")
    func deterministic() throws {
        func generate(seed: UInt64, format: WeightFormat = .f32) throws -> [Int] {
            let weights = TransformerWeights(shape: tinyShape, format: format, seed: seed, pool: pool)
            let session = DecodeSession(weights: weights, pool: pool, sampling: SamplingOptions(topK: 8, seed: 11))
            try session.prefill(tokens: [1, 2, 3])
            var out: [Int] = []
            for _ in 0..<8 {
                let t = session.sample()
                out.append(t)
                try session.step(token: t)
            }
            return out
        }
        #expect(try generate(seed: 5) == generate(seed: 5))
        #expect(try generate(seed: 5) != generate(seed: 6))
        let thread1 = TransformerWeights(shape: tinyShape, format: .q8_0, seed: 5, pool: WorkerPool(threadCount: 1))
        let thread2 = TransformerWeights(shape: tinyShape, format: .q8_0, seed: 5, pool: pool)
        let output1 = try #require(thread1.output as? WeightMatrix), output2 = try #require(thread2.output as? WeightMatrix)
        #expect(memcmp(output1.values, output2.values, output1.byteCount / 2) == 0)
    }

    @Test("the context limit and bad tokens are typed errors")
    func errors() throws {
        let weights = TransformerWeights(shape: tinyShape, format: .q8_0, seed: 1, pool: pool)
        let session = DecodeSession(weights: weights, pool: pool)
        #expect(throws: DecodeError.self) { try session.step(token: tinyShape.vocab) }
        #expect(throws: DecodeError.self) { try session.prefill(tokens: Array(repeating: 1, count: tinyShape.context + 1)) }
    }

    @Test("weight bytes follow the format exactly")
    func byteAccounting() throws {
        #expect(WeightFormat.q8_0.bytes(rows: 1, columns: 32) == 34)
        #expect(SyntheticWeights.ggml(.q4_0).bytes(rows: 1, columns: 32) == 18)
        #expect(abs(WeightFormat.q8_0.bitsPerWeight - 8.5) < 1e-9)
        #expect(abs(SyntheticWeights.ggml(.q4_0).bitsPerWeight - 4.5) < 1e-9)
        #expect(SyntheticWeights(name: "q4_0") == .ggml(.q4_0) && SyntheticWeights(name: "q8_0") == .format(.q8_0))
        for format in WeightFormat.allCases {
            let weights = TransformerWeights(shape: tinyShape, format: format, seed: 1, pool: pool)
            #expect(weights.byteCount == tinyShape.weightBytes(.format(format)))
        }
        // A ggml type's synthetic model, written as GGUF and mapped: its tensors are the shape's bytes.
        let q4_0 = try GGUFModel.synthetic(shape: tinyShape, type: .q4_0, seed: 1)
        #expect(q4_0.weights.byteCount == tinyShape.weightBytes(.ggml(.q4_0)))
        #expect(tinyShape.blockingError(.ggml(.q4_K)) != nil && tinyShape.blockingError(.ggml(.q4_0)) == nil)
        let bundled = ModelShape.bundled
        #expect(bundled.parameterCount == 2 * 32000 * 1536 + 12 * (2560 * 1536 + 1536 * 1536 + 8192 * 1536 + 1536 * 4096 + 2 * 1536) + 1536)
    }
}

@Suite("LLM tokenizer and budget")
struct LLMTokenizerTests {
    @Test("BPE learns merges and round-trips any text")
    func roundTrip() {
        let tokenizer = BPETokenizer()
        #expect(tokenizer.vocabularySize > 256 + 100)
        for text in ["The quick brown fox jumps over the lazy dog.", "tokens per second", "héllo wörld ✓ 🚀", ""] {
            let ids = tokenizer.encode(text)
            #expect(tokenizer.decode(ids) == text)
        }
        #expect(tokenizer.encode("the model").count < "the model".utf8.count)
    }

    @Test("the streaming detokenizer holds back unfinished UTF-8")
    func streamingDetokenizer() {
        let tokenizer = BPETokenizer(mergeCount: 0)
        var detokenizer = StreamingDetokenizer(tokenizer: tokenizer)
        let bytes = Array("é!".utf8)
        #expect(detokenizer.append(Int(bytes[0])) == "")
        #expect(detokenizer.append(Int(bytes[1])) == "é")
        #expect(detokenizer.append(Int(bytes[2])) == "!")
    }

    @Test("memory budget adds weights, KV cache and runtime")
    func budget() {
        let shape = LLMMemoryBudget.llamaShape(parameters: 1e9, context: 512)
        #expect(shape.dim == 2048)
        let budget = LLMMemoryBudget(shape: shape, weights: .ggml(.q4_0), kvBytesPerElement: 2, deviceLimitBytes: 1_200_000_000)
        #expect(budget.kvCacheBytes == 16 * 512 * 512 * 2 * 2)
        #expect(budget.totalBytes == budget.weightsBytes + budget.kvCacheBytes + budget.runtimeOverheadBytes)
        #expect(budget.withinLimit)
        #expect(TokenBuffering("newest:4") == .newest(4) && TokenBuffering("newest:0") == nil && TokenBuffering("x") == nil)
    }
}

@Suite("LLM recording", .serialized)
struct LLMRecordingTests {
    @Test("bytes per token in the trace equal the session's accounting, and the tensor sizes of the model shape")
    func bytesPerTokenMatchesOpEvents() async {
        await #expect(processExitsWith: .success) { try Self.bytesPerTokenMatchesOpEventsRecorded() }
    }

    static func bytesPerTokenMatchesOpEventsRecorded() throws {
        let pool = WorkerPool(threadCount: 2)
        let weights = TransformerWeights(shape: tinyShape, format: .q8_0, seed: 2, pool: pool)
        let session = DecodeSession(weights: weights, pool: pool)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("llm-\(UUID().uuidString).fxt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try TraceRecorder.start(path: path)
        // Other suites may decode while this one records: count only this thread's ops.
        Trace.instant("llm-accounting-test")
        try session.prefill(tokens: [1, 2, 3])
        // The tensors one decode step reads, from the model shape alone: one embedding row, per layer
        // the fused q|k|v, attention-output, fused gate|up and down matrices and two f32 norm gains,
        // the final norm and the output head; and per layer the keys and values of every position so far.
        let s = tinyShape, format = WeightFormat.q8_0, f32 = 4
        let perLayerWeights = format.bytes(rows: s.dim + 2 * s.kvDim, columns: s.dim) + format.bytes(rows: s.dim, columns: s.dim)
            + format.bytes(rows: 2 * s.ffn, columns: s.dim) + format.bytes(rows: s.dim, columns: s.ffn) + 2 * s.dim * f32
        let weightBytesPerToken = format.bytes(rows: 1, columns: s.dim) + s.layers * perLayerWeights + s.dim * f32
            + format.bytes(rows: s.vocab, columns: s.dim)
        var expected: [Int32: UInt64] = [:]
        var expectedAttention: [Int32: UInt64] = [:]
        var token = session.sample()
        for _ in 0..<3 {
            let index = Int32(session.position)
            let kvBytes = s.layers * 2 * (session.position + 1) * s.kvDim * f32
            try session.step(token: token)
            #expect(session.lastStep.weightBytes == UInt64(weightBytesPerToken), "token \(index)")
            #expect(session.lastStep.kvCacheBytes == UInt64(kvBytes), "token \(index)")
            token = session.sample() // recorded under the same token index, added to lastStep
            expected[index] = session.lastStep.bytesRead + session.lastStep.bytesWritten
            // attention reads the query and the KV cache and writes its output (f32, dim each).
            expectedAttention[index] = UInt64(kvBytes + s.layers * 2 * s.dim * f32)
        }
        _ = try recorder.stop()
        var reader = try TraceReader(path: path)
        var recorded: [Int32: UInt64] = [:]
        var recordedAttention: [Int32: UInt64] = [:]
        var opNames = Set<String>()
        var testThread: ThreadID?
        while let event = try reader.next() {
            if case .instant(_, let name) = event.payload, reader.string(name) == "llm-accounting-test" { testThread = event.thread }
            if case .inferenceOp(let op) = event.payload, event.thread == testThread {
                recorded[op.tokenIndex, default: 0] += op.bytesRead + op.bytesWritten
                if reader.string(op.name) == "attention" { recordedAttention[op.tokenIndex, default: 0] += op.bytesRead + op.bytesWritten }
                opNames.insert(reader.string(op.name))
            }
        }
        for (index, bytes) in expected { #expect(recorded[index] == bytes, "token \(index)") }
        for (index, bytes) in expectedAttention { #expect(recordedAttention[index] == bytes, "token \(index)") }
        #expect(opNames.isSuperset(of: ["embed", "rmsnorm", "qkv", "rope", "attention", "attn-out", "gate/up", "down", "output head", "sample"]))
    }

    // Plumbing only, on small explicit arrays: the figures are cache figures and the result says so.
    @Test("an explicitly small probe records its size, the cache, and that the 4x rule is not met")
    func probePlumbing() {
        let pool = WorkerPool(threadCount: 2)
        let cache = LastLevelCache(bytes: 8 << 20, level: 3, source: "sysfs")
        let result = BandwidthProbe.measure(pool: pool, sizing: .explicit(arrayBytes: 4 << 20, cache: cache), repetitions: 1)
        #expect(result.arrayBytes == 4 << 20)
        #expect(!result.sizing.meetsCacheRule && result.sizing.shortfall != nil)
        // Finite and below any memory system's speed: a zero-length timing would give infinity.
        for figure in [result.triadGBps, result.readGBps, result.peakGFLOPS] { #expect(figure > 0 && figure < 100_000) }
        let metadata = Dictionary(uniqueKeysWithValues: result.metadata.map { ($0.key, $0.value) })
        #expect(metadata[.lastLevelCacheBytes] == String(8 << 20))
        #expect(metadata[.bandwidthProbeArrayBytes] == String(4 << 20))
        #expect(metadata[.bandwidthProbeMeetsCacheRule] == "false")
    }

    @Test("probe arrays are at least 4x the last-level cache when memory allows, and say so when it does not")
    func probeSizingRule() {
        let cache = LastLevelCache(bytes: 260 << 20, level: 3, source: "sysfs")
        let roomy = ProbeSizing.fromMachine(cache: cache, availableMemoryBytes: 24 << 30)
        #expect(roomy.arrayBytes >= 4 * cache.bytes && roomy.meetsCacheRule && roomy.shortfall == nil)
        let tight = ProbeSizing.fromMachine(cache: cache, availableMemoryBytes: 2 << 30)
        #expect(tight.arrayBytes < 4 * cache.bytes && !tight.meetsCacheRule)
        #expect(tight.shortfall?.contains("below 4x") == true)
        #expect(3 * tight.arrayBytes <= 1 << 30)   // three arrays within half the available memory
    }

    @Test("the last-level cache is the highest data or unified level in sysfs")
    func lastLevelCacheFromSysfs() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (index, level, type, size) in [(0, "1", "Data", "48K"), (1, "1", "Instruction", "32K"), (2, "2", "Unified", "2048K"),
                                           (3, "3", "Unified", "266240K")] {
            let directory = root + "/index\(index)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (name, value) in [("level", level), ("type", type), ("size", size)] {
                try (value + "\n").write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
            }
        }
        #expect(LastLevelCache.detect(sysfsDirectory: root) == LastLevelCache(bytes: 266240 << 10, level: 3, source: "sysfs"))
        // Without sysfs the fallback is labelled, never passed off as measured.
        #expect(LastLevelCache.detect(sysfsDirectory: root + "/missing").source != "sysfs")
    }
}
