import Foundation
import HitchAnalysis
import enum HitchReport.Format
import HitchWorkloads

// `hitch budget`: the memory an on-device LLM needs (weights, KV cache, runtime) against a device limit.
enum BudgetCommand: Subcommand {
    static let name = "budget"
    static let summary = "Print an on-device LLM's memory budget against a device limit."
    static let help = """
    USAGE: hitch budget [--params N] [--weights FORMAT] [--context N] [--device-budget SIZE] [shape options] [--format text|json]
           hitch budget --model FILE.gguf [--context N] [--kv f16|f32] [--device-budget SIZE] [--format text|json]

    Prints weights, KV cache and runtime overhead against a device memory limit (default 1.2GB, an
    iPhone-class soft limit). With --params, a published Llama-family shape of that size is used and
    the KV cache is f16; without it, the bundled model's shape (or the shape options) with its f32 cache.

    With --model, the GGUF file's shape and its real tensor bytes are used (KV cache f16 unless --kv).

    OPTIONS:
      --model FILE.gguf      A GGUF model's budget (architecture \(TransformerWeights.Architecture.supportedNames))
      --params N             Parameter count, 0.25B to 20B: 1B, 0.4B, 500M, 8B (the nearest published shape is used)
      --weights FORMAT       f32, f16, q8_0, pal4, or a ggml type: q4_0 (default), q4_1, q5_0, q5_1,
                             q4_K, q5_K, q6_K, bf16
      --context N            KV cache positions (default 512)
      --kv f16|f32           KV cache element type (default: f16 with --params, f32 otherwise)
      --device-budget SIZE   Device memory budget: 1.2GB, 800MB, 6GiB (default 1.2GB), as in analyze, check, diff and report
      --dim --layers --heads --kv-heads --ffn --vocab   The model shape (without --params)
      --format text|json     Output format (default text)
      -h, --help             Show this help.

    EXAMPLES:
      hitch budget
      hitch budget --params 1B --weights q4_0 --context 512 --device-budget 1.2GB
    """

    /// The published shapes `--params` picks from span 0.40 B to 13 B; further out there is no shape to report.
    static let parameterRange = 0.25e9...20e9

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let output = try arguments.choice("--format", ["text", "json"], default: "text")
        let paramsText = try arguments.option("--params")
        let weightsText = try arguments.option("--weights") ?? "q4_0"
        guard let weights = SyntheticWeights(name: weightsText) else {
            throw CLIError("option '--weights' must be one of \(SyntheticWeights.allNames.joined(separator: ", ")); got '\(weightsText)'")
        }
        let kv = try arguments.choice("--kv", ["f16", "f32"], default: "")
        let modelPath = try arguments.option("--model")
        if let old = try arguments.option("--device-limit") {
            throw CLIError("option '--device-limit' is now '--device-budget SIZE' in every command: use --device-budget \(old)")
        }
        let limit = try Quantities.bytes(try arguments.option("--device-budget") ?? "1.2GB", option: "--device-budget")
        var shape = try ModelShape.parse(&arguments)
        _ = try arguments.positionals(name, count: 0...0, what: "no arguments (the model is given with --params or the shape options)")
        var kvBytes = 4
        var fileModel: GGUFModel?
        var weightsName = "\(weights.name), \(String(format: "%.2f", weights.bitsPerWeight)) bits/weight"
        if let modelPath {
            let model: GGUFModel
            do { model = try GGUFModel(path: modelPath, context: shape.context) } catch { throw CLIError("\(error)") }
            var fileShape = model.weights.shape
            fileShape.context = shape.context
            shape = fileShape
            fileModel = model
            weightsName = "\(model.weights.formatName) from \((modelPath as NSString).lastPathComponent)"
            kvBytes = 2
        } else if let paramsText {
            let parameters = try Quantities.count(paramsText, option: "--params", in: parameterRange)
            shape = LLMMemoryBudget.llamaShape(parameters: parameters, context: shape.context)
            kvBytes = 2
        }
        if !kv.isEmpty { kvBytes = kv == "f16" ? 2 : 4 }
        if fileModel == nil, let problem = shape.blockingError(weights) { throw CLIError("option '--weights': \(problem)") }
        var budget = LLMMemoryBudget(shape: shape, weights: weights, kvBytesPerElement: kvBytes, deviceLimitBytes: Int(clamping: limit))
        if let fileModel {
            budget.useFileWeights(bytes: fileModel.weights.byteCount, types: fileModel.weights.formatName,
                                  parameters: fileModel.file.tensors.reduce(0) { $0 + $1.elementCount })
        }
        if output == "json" {
            try writeStandardOutput(JSONOutput.text(budget))
            return .ok
        }
        let s = budget.shape
        try writeStandardOutputLine("""
        model       \(String(format: "%.2f", Double(budget.parameterCount) / 1e9)) B parameters (dim \(s.dim), \(s.layers) layers, \(s.heads) heads, \(s.kvHeads) KV heads, ffn \(s.ffn), vocab \(s.vocab))
        weights     \(Format.bytes(budget.weightsBytes))  (\(weightsName))
        KV cache    \(Format.bytes(budget.kvCacheBytes))  (\(budget.context) positions, \(kvBytes == 2 ? "f16" : "f32"))
        runtime     \(Format.bytes(budget.runtimeOverheadBytes))  (activations, logits, prefill batch, \(Format.bytes(LLMMemoryBudget.runtimeAllowanceBytes)) allowance)
        total       \(Format.bytes(budget.totalBytes))
        limit       \(Format.bytes(budget.deviceLimitBytes))  -> \(budget.withinLimit ? "fits" : "OVER"), headroom \(Format.bytes(budget.headroomBytes))
        """)
        return .ok
    }
}
