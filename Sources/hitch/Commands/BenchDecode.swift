import Foundation
import HitchAnalysis
import HitchWorkloads

// `hitch bench decode`: decode bandwidth per weight format against the triad measured in the same run,
// on the same worker pool (every core by default, `--threads`).
enum BenchDecode: Subcommand {
    static let name = "decode"
    static let summary = "LLM decode bandwidth per weight format against measured triad bandwidth."
    static let help = """
    USAGE: hitch bench decode [--weights f32,f16,q8_0,q4_0,pal4,q4_K,...] [--tokens N] [--threads N] [shape options] [--format text|json]
           hitch bench decode --model FILE.gguf [--tokens N] [--threads N] [--speed-only] [--format text|json]
           hitch bench decode --write-gguf FILE.gguf --weights TYPE [--seed N] [shape options]
           hitch bench decode --kernels [--weights q4_0,q5_K,...] [--isa avx2,...] [--threads N] [--format text|json]

    For each weight format: generates the model from the seed, prefills a short prompt, decodes
    --tokens tokens and reports tokens/s, bytes per token (every op's reads and writes, as recorded in
    traces), achieved bandwidth, and utilization: the bandwidth against the STREAM triad on the same
    pool. The triad's arrays are each at least 4x the last-level cache (read from sysfs; both sizes
    are in the JSON, and the output says when memory does not allow it). The machine may be shared, so triad passes are interleaved with the decode steps (one before
    the first step and one after every step): each step is judged against the better of the two
    passes around it, and utilization is the median of those per-step ratios. triadGBps is the median
    of the per-step references, triadBestGBps the best single pass; the 1-minute load average is printed
    with each format.

    The formats f32, f16, q8_0 and pal4 run on this decoder's own planes and kernels; every other
    ggml type (q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K, bf16) runs the same synthetic weights
    written as GGUF in that type and read in place, as --model reads a file (int8 activations and
    llama.cpp's summation order; bytes per token are the type's true size: 4.5, 5.5 and 6.5625 bits
    per weight for q4_K, q5_K and q6_K). By default the four formats and q4_0 run.

    With --model, the GGUF file's model (its own tensor types, on 2 MB pages where memory allows) is
    measured instead of the generated ones; bytes per token follow from its real tensor sizes.

    With --write-gguf, nothing is measured: the synthetic model of --seed and the shape options is
    written as a llama-architecture GGUF file with its matrices in the one --weights type (any ggml type),
    so llama.cpp (llama-bench) and --model run the same weights (scripts/dev/llama-compare.sh does).

    With --kernels, no model runs: each quantized ggml type's kernel is timed on every instruction
    set the CPU runs (or those --isa lists): nanoseconds per block per row with eight rows in L1
    (the arithmetic alone) and with one thread streaming a matrix 4x the last-level cache (both in
    the thread's CPU time, so other processes on a shared machine do not count), then the pool's
    threads on that matrix against the triad passes just before and after; bound is "unpacking"
    when the threads' L1 rate is below the triad (the cores cannot keep up with memory),
    "bandwidth" at 85% of the triad or more, else "latency".

    The quantized kernels run the best instruction set the CPU has; the environment variable
    HITCH_KERNELS_ISA=avx2 (or avx512, avx512vnni, avxvnni, portable) caps it, to measure each on
    one machine (quantizedKernels in the JSON says which ran).

    With --speed-only, the steps run back to back with no triad or read pass between them (a pass
    over arrays 4x the last-level cache evicts the model, which llama-bench never does), as
    scripts/dev/llama-compare.sh measures; the bandwidth figures are then 0.

    OPTIONS:
      --model FILE.gguf  A GGUF model to measure instead of the synthetic formats (architecture
                         \(TransformerWeights.Architecture.supportedNames); tensors \(GGMLType.supportedNames))
      --write-gguf FILE  Write the synthetic model as GGUF (matrices in --weights) and exit
      --speed-only     Tokens/s only: no bandwidth probes (bandwidth, triad and utilization print 0)
      --weights LIST   Formats or ggml types to run (default the five formats; with --kernels,
                       the quantized types, default all eight)
      --kernels        Time the quantized kernels alone (see above)
      --isa LIST       With --kernels: instruction sets to time (default every one the CPU runs)
      --tokens N       Decode steps per format (default 32)
      --threads N      Pool threads (default: every core)
      --seed N         Weight seed (default 1)
      --dim --layers --heads --kv-heads --ffn --vocab --context   Model shape (default the bundled 0.40 B model)
      --format text|json
      -h, --help       Show this help.

    EXAMPLES:
      hitch bench decode --weights f32,q4_0 --format json
      hitch bench decode --weights q4_K,q6_K --threads 2
      HITCH_KERNELS_ISA=avx2 hitch bench decode --weights q4_1,q5_0 --format json
      hitch bench decode --kernels --weights q4_0,q5_1 --format json
    """

    struct Result: Codable {
        var weights: String
        /// The median and the fastest step's rate, and tokens over the summed step times (the mean
        /// rate, as llama-bench's avg_ts).
        var tokensPerSecond, bestTokensPerSecond, meanTokensPerSecond: Double
        var bytesPerToken, weightBytesPerToken, kvCacheBytesPerToken: Double
        var bandwidthGBps, triadGBps, triadBestGBps, readGBps: Double
        var utilization, readUtilization: Double
        var generateSeconds: Double
        var weightsBytes: Int
        /// /proc/loadavg's 1-minute figure when this format's decode started (nil where unavailable).
        var loadAverage: Double?
    }
    struct Report: Codable {
        var shape: ModelShape
        var parameterCount, threads, tokens: Int
        var peakGFLOPS: Double
        /// The instruction set of the quantized GGUF kernels (QuantizedKernels).
        var quantizedKernels: String
        /// The last-level cache the triad arrays were sized against, and their size.
        var probeSizing: ProbeSizing
        var results: [Result]
    }

    struct KernelReport: Codable {
        var threads: Int
        /// The versions timed, and the one decode runs (QuantizedKernels).
        var instructionSets: [String]
        var quantizedKernels: String
        var matrixBytes: Int
        var probeSizing: ProbeSizing
        var loadAverageBefore, loadAverageAfter: Double?
        var kernels: [KernelMeasurement]
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let output = try arguments.choice("--format", ["text", "json"], default: "text")
        if let problem = QuantizedKernels.capProblem { throw CLIError(problem) }
        if let path = try arguments.option("--write-gguf") { return try writeGGUF(path, &arguments) }
        if arguments.flag("--kernels") { return try runKernels(&arguments, output: output) }
        let weightsText = try arguments.option("--weights") ?? (WeightFormat.allCases.map(\.rawValue) + [GGMLType.q4_0.name]).joined(separator: ",")
        guard let formats = SyntheticWeights.parseList(weightsText) else {
            throw CLIError("option '--weights' must list formats from \(SyntheticWeights.allNames.joined(separator: ", ")); got '\(weightsText)'")
        }
        let tokens = try arguments.number("--tokens", in: 2...4096, default: 32)
        let threads = try arguments.number("--threads", in: 1...256, default: ProcessInfo.processInfo.activeProcessorCount)
        let seed = try arguments.number("--seed", in: UInt64(0)...UInt64.max, default: 1)
        let modelPath = try arguments.option("--model")
        let speedOnly = arguments.flag("--speed-only")
        var shape = try ModelShape.parse(&arguments)
        _ = try arguments.positionals("bench decode", count: 0...0, what: "no arguments")
        let fileModel = try modelPath.map { path in
            do { return try GGUFModel(path: path, context: max(shape.context, tokens + 16)) } catch { throw CLIError("\(error)") }
        }
        if let fileModel { shape = fileModel.weights.shape }
        let prompt = Array(1...8)
        guard shape.context >= prompt.count + tokens else {
            throw CLIError("option '--context' (\(shape.context)) must hold the \(prompt.count)-token prompt plus --tokens (\(tokens))")
        }

        let pool = WorkerPool(threadCount: threads)
        defer { pool.shutdown() }
        let flops = speedOnly ? 0 : BandwidthProbe.measurePeakGFLOPS(pool: pool)
        let arrays: StreamArrays? = speedOnly ? nil : StreamArrays(pool: pool)
        let sizing = arrays?.sizing ?? ProbeSizing.fromMachine()
        if let arrays, let shortfall = arrays.sizing.shortfall { writeStandardError("hitch: bench decode: \(shortfall)\n") }
        var results: [Result] = []
        // The file's model, or each synthetic format in turn.
        let runs: [String] = fileModel.map { [$0.weights.formatName] } ?? formats.map(\.name)
        for (index, name) in runs.enumerated() {
            if output == "text" && fileModel == nil { writeStandardError("decode \(name): generating weights...\n") }
            let start = DispatchTime.now().uptimeNanoseconds
            let weights: TransformerWeights
            if let fileModel {
                weights = fileModel.weights
            } else {
                switch formats[index] {
                case .format(let format): weights = TransformerWeights(shape: shape, format: format, seed: seed, pool: pool)
                case .ggml(let type):
                    do { weights = try GGUFModel.synthetic(shape: shape, type: type, seed: seed).weights } catch {
                        throw CLIError("cannot build the synthetic \(type.name) model: \(error)")
                    }
                }
            }
            let generateSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let session = DecodeSession(weights: weights, pool: pool)
            let read = arrays.map { arrays in (0..<3).map { _ in arrays.readPassGBps() }.max()! } ?? 0
            let loadAverage = Self.loadAverage()
            try session.prefill(tokens: prompt)
            var token = session.sample()
            var stepNs: [Double] = [], stepBytes: [Double] = [], triads = [arrays?.triadPassGBps() ?? 0]
            var weightBytes = 0.0, kvBytes = 0.0
            for _ in 0..<tokens {
                let begin = DispatchTime.now().uptimeNanoseconds
                try session.step(token: token)
                let stepAccounting = session.lastStep
                token = session.sample()
                stepNs.append(Double(DispatchTime.now().uptimeNanoseconds - begin))
                triads.append(arrays?.triadPassGBps() ?? 0)
                // lastStep now covers the step's ops and the sample op, as the analyzer sums a token's op events.
                stepBytes.append(Double(session.lastStep.bytesRead + session.lastStep.bytesWritten))
                weightBytes += Double(stepAccounting.weightBytes)
                kvBytes += Double(stepAccounting.kvCacheBytes)
            }
            let references = (0..<tokens).map { max(triads[$0], triads[$0 + 1]) }
            let ratios = (0..<tokens).map { speedOnly ? 0 : stepBytes[$0] / (stepNs[$0] / 1e9) / 1e9 / references[$0] }
            let bytesPerToken = stepBytes.reduce(0, +) / Double(tokens)
            let medianStep = median(stepNs) / 1e9
            let bandwidth = bytesPerToken / medianStep / 1e9
            results.append(Result(weights: name, tokensPerSecond: 1 / medianStep, bestTokensPerSecond: 1e9 / stepNs.min()!,
                                  meanTokensPerSecond: Double(tokens) / (stepNs.reduce(0, +) / 1e9),
                                  bytesPerToken: bytesPerToken, weightBytesPerToken: weightBytes / Double(tokens),
                                  kvCacheBytesPerToken: kvBytes / Double(tokens), bandwidthGBps: bandwidth,
                                  triadGBps: median(references), triadBestGBps: triads.max()!, readGBps: read,
                                  utilization: median(ratios), readUtilization: speedOnly ? 0 : bandwidth / read,
                                  generateSeconds: generateSeconds, weightsBytes: weights.byteCount, loadAverage: loadAverage))
        }
        let report = Report(shape: shape, parameterCount: shape.parameterCount, threads: pool.threadCount, tokens: tokens,
                            peakGFLOPS: flops, quantizedKernels: QuantizedKernels.instructionSet, probeSizing: sizing, results: results)
        if output == "json" {
            try writeStandardOutput(JSONOutput.text(report))
            return .ok
        }
        try writeStandardOutputLine("model \(String(format: "%.2f", Double(shape.parameterCount) / 1e9)) B params, \(pool.threadCount) threads, \(tokens) tokens, peak \(String(format: "%.1f", flops)) GFLOP/s")
        if let fileModel { try writeStandardOutputLine("model \(fileModel.name) (\((fileModel.file.path as NSString).lastPathComponent))") }
        let cache = sizing.lastLevelCache
        if let arrays {
            try writeStandardOutputLine("triad arrays \(arrays.arrayBytes >> 20) MiB each; last-level cache \(cache.bytes >> 20) MiB (L\(cache.level), \(cache.source))"
                  + (sizing.meetsCacheRule ? "" : "; below 4x the cache: \(sizing.shortfall ?? "")"))
        } else {
            try writeStandardOutputLine("--speed-only: no bandwidth probes; last-level cache \(cache.bytes >> 20) MiB (L\(cache.level), \(cache.source))")
        }
        try writeStandardOutputLine("weights  tok/s   MB/token  GB/s   triad GB/s  read GB/s  utilization  load avg")
        for r in results {
            try writeStandardOutputLine(String(format: "%-7@ %6.1f  %8.1f  %5.1f  %10.1f  %9.1f  %10.1f%%  %8@", r.weights as NSString, r.tokensPerSecond,
                         r.bytesPerToken / 1e6, r.bandwidthGBps, r.triadGBps, r.readGBps, r.utilization * 100,
                         (r.loadAverage.map { String(format: "%.2f", $0) } ?? "-") as NSString))
        }
        return .ok
    }

    static func runKernels(_ arguments: inout Arguments, output: String) throws -> ExitCode {
        let names = try arguments.option("--weights").map { $0.split(separator: ",").map(String.init) } ?? KernelBenchmark.types.map(\.name)
        let types = try names.map { name in
            guard let type = GGMLType(name: name), KernelBenchmark.types.contains(type) else {
                throw CLIError("option '--weights' with --kernels must list quantized types from \(KernelBenchmark.types.map(\.name).joined(separator: ", ")); got '\(name)'")
            }
            return type
        }
        let available = QuantizedKernels.available
        let isas = try arguments.option("--isa").map { $0.split(separator: ",").map(String.init) } ?? available
        for isa in isas where !available.contains(isa) {
            throw CLIError("option '--isa' must list instruction sets this CPU runs (\(available.joined(separator: ", "))); got '\(isa)'")
        }
        let threads = try arguments.number("--threads", in: 1...256, default: ProcessInfo.processInfo.activeProcessorCount)
        _ = try arguments.positionals("bench decode", count: 0...0, what: "no arguments")
        let pool = WorkerPool(threadCount: threads)
        defer { pool.shutdown() }
        let arrays = StreamArrays(pool: pool)
        if let shortfall = arrays.sizing.shortfall { writeStandardError("hitch: bench decode: \(shortfall)\n") }
        let before = loadAverage()
        let kernels = KernelBenchmark.measure(types: types, instructionSets: isas, pool: pool, arrays: arrays, matrixBytes: arrays.arrayBytes)
        let report = KernelReport(threads: pool.threadCount, instructionSets: isas, quantizedKernels: QuantizedKernels.instructionSet,
                                  matrixBytes: arrays.arrayBytes, probeSizing: arrays.sizing, loadAverageBefore: before,
                                  loadAverageAfter: loadAverage(), kernels: kernels)
        if output == "json" {
            try writeStandardOutput(JSONOutput.text(report))
            return .ok
        }
        try writeStandardOutputLine("\(pool.threadCount) threads, matrices of \(arrays.arrayBytes >> 20) MiB, load average \((before.map { String(format: "%.2f", $0) }) ?? "-")")
        try writeStandardOutputLine("type  isa         bytes  L1 ns/block-row  memory ns  pool GB/s  triad GB/s  share  compute GB/s  bound")
        for k in kernels {
            try writeStandardOutputLine(k.type.padding(toLength: 6, withPad: " ", startingAt: 0) + k.instructionSet.padding(toLength: 11, withPad: " ", startingAt: 0)
                + String(format: "%6d  %15.3f  %9.3f  %9.1f  %10.1f  %4.0f%%  %12.1f  ", k.bytesPerBlock, k.l1NsPerBlockRow, k.memoryNsPerBlockRow,
                         k.poolGBps, k.triadGBps, k.triadShare * 100, k.computeGBps) + k.bound)
        }
        return .ok
    }

    static func writeGGUF(_ path: String, _ arguments: inout Arguments) throws -> ExitCode {
        let typeText = try arguments.option("--weights") ?? "q4_0"
        guard let type = GGMLType(name: typeText) else {
            throw CLIError("option '--weights' with --write-gguf must be one of \(GGMLType.allCases.map(\.name).joined(separator: ", ")); got '\(typeText)'")
        }
        let seed = try arguments.number("--seed", in: UInt64(0)...UInt64.max, default: 1)
        let shape = try ModelShape.parse(&arguments)
        _ = try arguments.positionals("bench decode", count: 0...0, what: "no arguments")
        do { try TransformerWeights.writeGGUF(shape: shape, type: type, seed: seed, to: path) } catch {
            throw CLIError("cannot write \(path): \(error)")
        }
        return .ok
    }

    static func median(_ values: [Double]) -> Double { BenchSample.medianWithInterval(values).median }

    /// The 1-minute load average.
    static func loadAverage() -> Double? { BenchClock.loadAverages().first.flatMap { Double($0) } }
}
