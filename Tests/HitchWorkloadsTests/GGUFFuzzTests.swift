import Foundation
import Testing
import HitchAlgorithms
@testable import HitchWorkloads

/// Seeded mutations of a small valid model file: each is either a clean `GGUFError` (or tokenizer
/// error) or a model that loads, tokenizes and decodes a step. A crash, a trap or a hang fails the
/// suite; the loop is bounded in iterations and in time, and prints the seed of every case, so a
/// failure is replayed by its iteration number.
@Suite("GGUF reader fuzzing")
struct GGUFFuzzTests {
    @Test("truncations, bit flips and overwritten fields are clean errors or valid models")
    func mutations() throws {
        let good = try tinyLlamaGGUF(type: .q4_1, layers: 1, vocabulary: 32, byteTokens: false).bytes()
        let (iterations, errors, models) = try fuzzModelFile(good, seed: 0x6767_7566, maxIterations: 4000, dataOneIn: 5,
                                                             prompt: "<|im_start|>the 12 é")
        print("GGUF fuzzing: \(iterations) cases, \(errors) errors, \(models) models loaded")
        #expect(iterations >= 500, "too few cases ran in the time bound")
        #expect(errors > 0 && models > 0)
    }

    /// Truncated and corrupted K-quant files: a gemma3 file mixing q4_K, q5_K, q6_K, q5_0, q5_1 and
    /// q8_0 matrices, half its mutations in the blocks (scales, fifth bits, nibbles).
    @Test("truncated and corrupted K-quant files are clean errors or valid models")
    func kQuantMutations() throws {
        let good = try tinyGemma3GGUF(layers: 1).bytes()
        let (iterations, errors, models) = try fuzzModelFile(good, seed: 0x4B51_7561, maxIterations: 1500, dataOneIn: 2,
                                                             prompt: "<start_of_turn>the  é ü")
        print("K-quant fuzzing: \(iterations) cases, \(errors) errors, \(models) models loaded")
        #expect(iterations >= 200 && errors > 0 && models > 0)
    }
}

/// Seeded mutations of `good` for at most 8 s: each must be a one-line error or a model that loads,
/// tokenizes `prompt` into its vocabulary and decodes a step. One mutation in `dataOneIn` lands
/// anywhere in the file, the others in the header, metadata and tensor infos.
func fuzzModelFile(_ good: [UInt8], seed: UInt64, maxIterations: Int, dataOneIn: UInt64,
                   prompt: String) throws -> (iterations: Int, errors: Int, models: Int) {
    let headerEnd = try GGUFFile(bytes: good).dataOffset
    let pool = WorkerPool(threadCount: 1)
    defer { pool.shutdown() }
    var rng = SeededGenerator(seed: seed)
    let deadline = DispatchTime.now().uptimeNanoseconds + 8_000_000_000
    var iterations = 0, errors = 0, models = 0
    while iterations < maxIterations && DispatchTime.now().uptimeNanoseconds < deadline {
        iterations += 1
        var bytes = good
        // Mostly the header, metadata and tensor infos (where the reader's decisions are), some data.
        func position() -> Int {
            Int(rng.next() % UInt64(rng.next() % dataOneIn == 0 ? bytes.count : min(headerEnd, bytes.count)))
        }
        for _ in 0..<(1 + Int(rng.next() % 3)) {
            switch rng.next() % 5 {
            case 0: bytes.removeLast(Int(rng.next() % UInt64(bytes.count)))          // truncate
            case 1: let p = position(); bytes[p] ^= UInt8(1) << (rng.next() % 8)      // flip a bit
            case 2: bytes[position()] = rng.next() % 2 == 0 ? 0xFF : 0x00
            case 3:   // a count, length or offset replaced by a huge or small value
                let p = position(), value = [UInt64(1) << 62, UInt64.max, 0, UInt64(rng.next() % 1000)][Int(rng.next() % 4)]
                for k in 0..<8 where p + k < bytes.count { bytes[p + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
            default:  // a stretch of random bytes
                let p = position()
                for k in 0..<Int(rng.next() % 16) where p + k < bytes.count { bytes[p + k] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            if bytes.isEmpty { break }
        }
        do {
            let model = try GGUFModel(file: try GGUFFile(bytes: bytes), context: 16)
            let tokens = model.tokenizer.encode(prompt, parseSpecial: true)
            #expect(tokens.allSatisfy { $0 >= 0 && $0 < model.tokenizer.vocabularySize }, "iteration \(iterations)")
            let session = DecodeSession(weights: model.weights, pool: pool)
            try session.step(token: min(tokens.first ?? 0, model.weights.shape.vocab - 1))
            _ = session.sample()
            models += 1
        } catch let error as GGUFError {
            #expect(!error.description.contains("\n"), "iteration \(iterations)")
            errors += 1
        } catch let error as GGUFTokenizerError {
            #expect(!error.description.contains("\n"), "iteration \(iterations)")
            errors += 1
        }
    }
    return (iterations, errors, models)
}
