import Foundation
import Testing
@testable import HitchWorkloads

/// The real model (scripts/fetch-model.sh): $HITCH_MODEL, or the fetch script's cache.
let realModelPath: String = {
    if let path = ProcessInfo.processInfo.environment["HITCH_MODEL"] { return path }
    let cache = ProcessInfo.processInfo.environment["HITCH_MODEL_CACHE"] ?? (NSHomeDirectory() + "/.cache/hitch")
    return cache + "/SmolLM2-135M-Instruct.Q4_1.gguf"
}()
let realModelPresent = FileManager.default.fileExists(atPath: realModelPath)

struct ReferenceCase: Decodable {
    var prompt: String
    var parseSpecial: Bool
    var tokens: [Int]
    var greedy: [Int]
}
struct ReferenceFile: Decodable { var cases: [ReferenceCase] }

/// llama.cpp's ids for the real model (scripts/dev/llama-reference.sh).
let referenceCases: [ReferenceCase] = {
    let file: ReferenceFile? = try? llmFixture("smollm2-reference.json")
    return file?.cases ?? []
}()

@Suite("SmolLM2 against llama.cpp", .serialized,
       .enabled(if: realModelPresent, "the model is not fetched (run scripts/fetch-model.sh)"))
struct RealModelTests {
    static let model: GGUFModel? = try? GGUFModel(path: realModelPath, context: 512)

    @Test("the file's hyperparameters and tensors are read")
    func hyperparameters() throws {
        let model = try #require(Self.model)
        let s = model.weights.shape
        #expect(s.dim == 576 && s.layers == 30 && s.heads == 9 && s.kvHeads == 3 && s.ffn == 1536 && s.vocab == 49152)
        #expect(model.weights.ropeBase == 100_000)
        #expect(model.tokenizer.preTokenizer == "smollm")
        #expect(model.weights.output === model.weights.embedding)
    }

    @Test("tokenization equals llama-tokenize's", .enabled(if: !referenceCases.isEmpty, "no reference fixture"))
    func tokenization() throws {
        let model = try #require(Self.model)
        for reference in referenceCases {
            #expect(model.tokenizer.encode(reference.prompt, parseSpecial: reference.parseSpecial) == reference.tokens,
                    "prompt \(reference.prompt.debugDescription)")
        }
    }

    // Unoptimized, one token of the real model takes tens of seconds.
    @Test("greedy continuations equal llama.cpp's", .enabled(if: !referenceCases.isEmpty, "no reference fixture"),
          .enabled(if: !_isDebugAssertConfiguration(), "needs an optimized build: swift test -c release --filter RealModelTests"))
    func greedy() throws {
        let model = try #require(Self.model)
        let pool = WorkerPool(threadCount: 2)
        defer { pool.shutdown() }
        let session = DecodeSession(weights: model.weights, pool: pool)
        var matching = 0
        for reference in referenceCases {
            session.reset()
            try session.prefill(tokens: reference.tokens)
            var out: [Int] = []
            for index in 0..<reference.greedy.count {
                let token = session.sample()
                out.append(token)
                if index + 1 < reference.greedy.count { try session.step(token: token) }
            }
            let firstDifference = out.indices.first { out[$0] != reference.greedy[$0] }
            if let firstDifference {
                print("greedy differs at token \(firstDifference) for \(reference.prompt.debugDescription): \(out) vs \(reference.greedy)")
            } else {
                matching += 1
            }
            // A difference must come late (a near tie after many equal tokens), never at the start.
            #expect((firstDifference ?? 32) >= 16, "prompt \(reference.prompt.debugDescription)")
        }
        #expect(matching >= referenceCases.count - 1)
    }
}
