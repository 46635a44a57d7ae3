import Foundation
import HitchWorkloads

// `hitch budget`: the memory an on-device LLM needs (weights, KV cache, runtime) against a device limit.
enum BudgetCommand: Subcommand {
    static let name = "budget"
    static let summary = "Print an on-device LLM's memory budget against a device limit."
    static let help = """
    USAGE: hitch budget [--params N] [--weights FORMAT] [--context N] [--device-limit SIZE] [shape options] [--format text|json]
           hitch budget --model FILE.gguf [--context N] [--kv f16|f32] [--device-limit SIZE] [--format text|json]

    Prints weights, KV cache and runtime overhead against a device memory limit (default 1.2GB, an
    iPhone-class soft limit). With --params, a published Llama-family shape of that size is used and
    the KV cache is f16; without it, the bundled model's shape (or the shape options) with its f32 cache.

    With --model, the GGUF file's shape and its real tensor bytes are used (KV cache f16 unless --kv).

    OPTIONS:
      --model FILE.gguf   A llama-architecture GGUF model's budget
      --params N          Parameter count: 1B, 0.4B, 500M, 8B
      --weights FORMAT    f32, f16, q8_0, q4_0, pal4 (default q4_0)
      --context N         KV cache positions (default 512)
      --kv f16|f32        KV cache element type (default: f16 with --params, f32 otherwise)
      --device-limit SIZE 1.2GB, 800MB, 6GiB (default 1.2GB)
      --dim --layers --heads --kv-heads --ffn --vocab   The model shape (without --params)
      --format text|json

    EXAMPLE:
      hitch budget --params 1B --weights q4_0 --context 512
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let output = try arguments.choice("--format", ["text", "json"], default: "text")
        let paramsText = try arguments.option("--params")
        let format = WeightFormat(rawValue: try arguments.choice("--weights", WeightFormat.allCases.map(\.rawValue), default: "q4_0"))!
        let kv = try arguments.option("--kv")
        let modelPath = try arguments.option("--model")
        let limitText = try arguments.option("--device-limit") ?? "1.2GB"
        var shape = try ModelShape.parse(&arguments)
        _ = try arguments.positionals()
        guard let limit = parseByteSize(limitText) else {
            throw CLIError("option '--device-limit' must be a size such as 1.2GB or 800MB; got '\(limitText)'")
        }
        var kvBytes = 4
        var fileModel: GGUFModel?
        var weightsName = "\(format.rawValue), \(String(format: "%.2f", format.bitsPerWeight)) bits/weight"
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
            guard let parameters = parseCount(paramsText), parameters > 0 else {
                throw CLIError("option '--params' must be a count such as 1B or 500M; got '\(paramsText)'")
            }
            shape = LLMMemoryBudget.llamaShape(parameters: parameters, context: shape.context)
            kvBytes = 2
        }
        if let kv {
            guard kv == "f16" || kv == "f32" else { throw CLIError("option '--kv' must be one of f16, f32; got '\(kv)'") }
            kvBytes = kv == "f16" ? 2 : 4
        }
        var budget = LLMMemoryBudget(shape: shape, format: format, kvBytesPerElement: kvBytes, deviceLimitBytes: limit)
        if let fileModel {
            budget.useFileWeights(bytes: fileModel.weights.byteCount, types: fileModel.weights.formatName,
                                  parameters: fileModel.file.tensors.reduce(0) { $0 + $1.elementCount })
        }
        if output == "json" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(budget), as: UTF8.self))
            return .ok
        }
        let s = budget.shape
        print("""
        model       \(String(format: "%.2f", Double(budget.parameterCount) / 1e9)) B parameters (dim \(s.dim), \(s.layers) layers, \(s.heads) heads, \(s.kvHeads) KV heads, ffn \(s.ffn), vocab \(s.vocab))
        weights     \(formatBytes(budget.weightsBytes))  (\(weightsName))
        KV cache    \(formatBytes(budget.kvCacheBytes))  (\(budget.context) positions, \(kvBytes == 2 ? "f16" : "f32"))
        runtime     \(formatBytes(budget.runtimeOverheadBytes))  (activations, logits, prefill batch, \(formatBytes(LLMMemoryBudget.runtimeAllowanceBytes)) allowance)
        total       \(formatBytes(budget.totalBytes))
        limit       \(formatBytes(budget.deviceLimitBytes))  -> \(budget.withinLimit ? "fits" : "OVER"), headroom \(formatBytes(budget.headroomBytes))
        """)
        return .ok
    }
}

/// "1.2GB", "800MB", "6GiB", "1000000" -> bytes (decimal units; binary with "iB").
func parseByteSize(_ text: String) -> Int? {
    let units: [(String, Double)] = [("GIB", 1_073_741_824), ("MIB", 1_048_576), ("KIB", 1024), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("G", 1e9), ("M", 1e6), ("K", 1e3), ("B", 1)]
    let upper = text.uppercased()
    for (suffix, scale) in units where upper.hasSuffix(suffix) {
        guard let value = Double(upper.dropLast(suffix.count)), value > 0, value < 1e6 else { return nil }
        return Int(value * scale)
    }
    guard let value = Int(text), value > 0 else { return nil }
    return value
}

/// "1B", "0.4B", "500M" -> a count.
func parseCount(_ text: String) -> Double? {
    let upper = text.uppercased()
    let scales: [(String, Double)] = [("B", 1e9), ("M", 1e6), ("K", 1e3)]
    for (suffix, scale) in scales where upper.hasSuffix(suffix) {
        guard let value = Double(upper.dropLast()), value > 0, value < 1e4 else { return nil }
        return value * scale
    }
    return Double(text).flatMap { $0 > 0 && $0 < 1e13 ? $0 : nil }
}

func formatBytes(_ bytes: Int) -> String {
    let value = Double(bytes)
    if abs(value) >= 1e9 { return String(format: "%.2f GB", value / 1e9) }
    if abs(value) >= 1e6 { return String(format: "%.1f MB", value / 1e6) }
    return String(format: "%.1f KB", value / 1e3)
}
