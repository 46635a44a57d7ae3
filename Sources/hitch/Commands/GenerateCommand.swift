import Foundation
import HitchAnalysis
import HitchWorkloads

// `hitch generate`: runs a GGUF model on one prompt and prints the prompt's token ids, the generated
// ids and their text. With --format json it is what scripts/check-llm-reference.sh compares with
// llama.cpp's ids (Tests/Fixtures/llm/smollm2-reference.json); each generated token carries the gap
// between its logit and the runner-up's, so a difference can be shown to be a near tie.
enum GenerateCommand: Subcommand {
    static let name = "generate"
    static let summary = "Generate tokens from a GGUF model (greedy by default); token ids and text."
    static let help = """
    USAGE: hitch generate --model FILE.gguf --prompt TEXT [--tokens N] [--chat] [--parse-special]
                          [--top-k N] [--top-p P] [--temperature T] [--seed N] [--threads N] [--format text|json]

    Tokenizes the prompt with the file's tokenizer (as llama_tokenize with add_special, so a BOS token
    is added when the file asks for one), runs it through the model token by token, then generates
    --tokens tokens. Greedy (argmax) unless --top-k is above 1. Generation does not stop at the
    end-of-turn token, so the ids can be compared one for one with another runtime's.

    OPTIONS:
      --model FILE.gguf   A GGUF model (architecture \(TransformerWeights.Architecture.supportedNames)), as scripts/fetch-model.sh fetches;
                          tensors \(GGMLType.supportedNames)
      --prompt TEXT       The prompt
      --tokens N          Tokens to generate (default 32)
      --chat              Put the prompt in the file's chat template (its special tokens are parsed)
      --parse-special     Split the prompt's special-token texts (<|im_start|>...) out as their ids
      --top-k N           1 = greedy (default 1)
      --top-p P           Nucleus sampling (default 1 = off)
      --temperature T     Sampling temperature (default 0.8; used when --top-k > 1)
      --seed N            Sampling seed (default 1)
      --threads N         Decode threads (default: every core)
      --format text|json  Output format (default text)
      -h, --help          Show this help.

    EXAMPLES:
      hitch generate --model "$(scripts/fetch-model.sh)" --prompt "The capital of France is" --tokens 16
      hitch generate --model model.gguf --prompt "def f(x):" --format json
    """

    struct Report: Codable {
        var model: String
        var promptTokens: [Int]
        var tokens: [Int]
        /// Per generated token: its logit minus the runner-up's (0 = a tie).
        var margins: [Float]
        var text: String
        var decodeTokensPerSecond: Double
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        if let problem = QuantizedKernels.capProblem { throw CLIError(problem) }
        let output = try arguments.choice("--format", ["text", "json"], default: "text")
        guard let modelPath = try arguments.option("--model") else { throw CLIError("'hitch generate' needs --model FILE.gguf") }
        guard let prompt = try arguments.option("--prompt") else { throw CLIError("'hitch generate' needs --prompt TEXT") }
        let count = try arguments.number("--tokens", in: 1...100_000, default: 32)
        let chat = arguments.flag("--chat")
        let parseSpecial = arguments.flag("--parse-special")
        let topK = try arguments.number("--top-k", in: 1...SamplingOptions.maxTopK, default: 1)
        let topP = try arguments.number("--top-p", in: 0.0...1.0, default: 1.0)
        let temperature = try arguments.number("--temperature", in: 0.0...100.0, default: 0.8)
        let seed = try arguments.number("--seed", in: UInt64(0)...UInt64.max, default: 1)
        let threads = try arguments.number("--threads", in: 1...256, default: ProcessInfo.processInfo.activeProcessorCount)
        _ = try arguments.positionals(name, count: 0...0, what: "no arguments (the prompt is given with --prompt)")

        let model: GGUFModel
        do { model = try GGUFModel(path: modelPath, context: 4096) } catch { throw CLIError("\(error)") }
        let tokenizer = model.tokenizer
        let promptTokens = chat ? tokenizer.encode(tokenizer.chatPrompt(user: prompt), parseSpecial: true)
                                : tokenizer.encode(prompt, parseSpecial: parseSpecial)
        let shape = model.weights.shape
        guard !promptTokens.isEmpty else { throw CLIError("the prompt has no tokens") }
        guard promptTokens.count + count <= shape.context else {
            throw CLIError("the prompt (\(promptTokens.count) tokens) plus --tokens (\(count)) exceed the context (\(shape.context) positions)")
        }
        let pool = WorkerPool(threadCount: threads)
        defer { pool.shutdown() }
        let session = DecodeSession(weights: model.weights, pool: pool,
                                    sampling: SamplingOptions(topK: topK, temperature: Float(temperature), seed: seed, topP: Float(topP)))
        try session.prefill(tokens: promptTokens)
        var detokenizer = StreamingDetokenizer(tokenizer: tokenizer)
        var tokens: [Int] = [], margins: [Float] = []
        var text = ""
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<count {
            margins.append(runnerUpGap(session.logits, count: shape.vocab))
            let token = session.sample()
            tokens.append(token)
            let piece = detokenizer.append(token)
            text += piece
            if output == "text" { try writeStandardOutput(piece); try flushStandardOutput() }
            if index + 1 < count { try session.step(token: token) }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let report = Report(model: (modelPath as NSString).lastPathComponent, promptTokens: promptTokens, tokens: tokens,
                            margins: margins, text: text, decodeTokensPerSecond: count > 1 ? Double(count - 1) / seconds : 0)
        if output == "json" {
            try writeStandardOutput(JSONOutput.text(report))
        } else {
            try writeStandardOutputLine("")
            try writeStandardOutputLine("prompt tokens: \(promptTokens.map(String.init).joined(separator: " "))")
            try writeStandardOutputLine("tokens: \(tokens.map(String.init).joined(separator: " "))")
            try writeStandardOutputLine(String(format: "decode: %.1f tokens/s", report.decodeTokensPerSecond))
        }
        return .ok
    }

    /// The largest logit minus the second largest.
    static func runnerUpGap(_ logits: UnsafePointer<Float>, count: Int) -> Float {
        var best = -Float.infinity, second = -Float.infinity
        for i in 0..<count {
            let v = logits[i]
            if v > best { second = best; best = v } else if v > second { second = v }
        }
        return best - second
    }
}
