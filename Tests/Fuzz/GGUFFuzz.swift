import Foundation
@testable import HitchWorkloads

// libFuzzer target: GGUF model files over arbitrary bytes (`hitch generate --model`, `record llm
// --model`). Each input is read, its model and tokenizer built, a prompt tokenized and run through
// the model (prefill, then a sampled step); every rejection must be one of the model reader's typed
// errors in one line. A crash, trap, hang or an error of another kind is a finding.
// Seeds (Tests/Fuzz/corpus/gguf): a one-layer gemma3 file mixing q4_K, q5_K, q6_K, q5_0, q5_1 and
// q8_0 matrices (Tests/HitchWorkloadsTests/TinyGemma3.swift), written by
// `HITCH_FUZZ_WRITE_SEEDS=DIR fuzz-gguf` (scripts/dev/fuzz.sh seeds).

private let pool = WorkerPool(threadCount: 1)

@_cdecl("LLVMFuzzerInitialize")
public func initializeGGUFFuzz(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard let directory = ProcessInfo.processInfo.environment["HITCH_FUZZ_WRITE_SEEDS"] else { return 0 }
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(tinyGemma3GGUF(layers: 1).bytes()).write(to: URL(fileURLWithPath: directory + "/tiny-gemma3-kquants.gguf"))
    } catch {
        fatalError("cannot write the GGUF seeds to \(directory): \(error)")
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGGUF(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let model = try GGUFModel(file: try GGUFFile(bytes: bytes), context: 16)
        let tokens = model.tokenizer.encode("<start_of_turn>the  é ü 12", parseSpecial: true)
        guard tokens.allSatisfy({ $0 >= 0 && $0 < model.tokenizer.vocabularySize }) else {
            fatalError("a token id outside the vocabulary: \(tokens)")
        }
        let vocab = model.weights.shape.vocab
        let prompt = tokens.prefix(4).map { min($0, vocab - 1) }
        let session = DecodeSession(weights: model.weights, pool: pool)
        try session.prefill(tokens: prompt.isEmpty ? [0] : prompt)
        try session.step(token: session.sample())
    } catch let error as GGUFError {
        oneLine(error.description)
    } catch let error as GGUFTokenizerError {
        oneLine(error.description)
    } catch let error as DecodeError {
        oneLine(error.description)
    } catch {
        fatalError("an error that is not the model reader's: \(error)")
    }
    return 0
}

private func oneLine(_ message: String) {
    if message.isEmpty || message.contains("\n") { fatalError("the error is not one line: \(message)") }
}
