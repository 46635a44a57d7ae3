// Streaming tokens to a view: an actor owns the model and KV cache (on its own thread, at a lower
// priority than the UI), tokens flow through an AsyncStream to a @MainActor consumer, and a headless
// view renders the @Observable transcript at the display's refresh rate.
//
// Default policy: the stream buffers without limit and the consumer drains it continuously into a
// pending list that each frame applies in one update, so no token is lost and memory is bounded by
// the tokens of one frame. `newest:N` reproduces `.bufferingNewest(N)` with a consumer that takes one
// token per frame: when production outpaces the frame rate, the oldest buffered tokens are dropped,
// and each drop is recorded.

import CHitchSupport
import Dispatch
import Foundation
import HeadlessUI
import HitchTrace
import Observation
import Synchronization

public enum TokenBuffering: Sendable, Equatable {
    case unbounded
    case newest(Int)

    /// "unbounded" or "newest:N".
    public init?(_ text: String) {
        if text == "unbounded" { self = .unbounded; return }
        guard text.hasPrefix("newest:"), let n = Int(text.dropFirst(7)), n >= 1, n <= 1 << 20 else { return nil }
        self = .newest(n)
    }
}

public struct LLMStreamingConfiguration: Sendable {
    public var shape: ModelShape
    /// The synthetic model's weights: a planes format, or a ggml type (written as GGUF and read in
    /// place, as `hitch bench decode --weights` runs them).
    public var weights: SyntheticWeights
    public var seed: UInt64
    public var prompt: String
    public var tokens: Int
    public var sampling: SamplingOptions
    public var buffering: TokenBuffering
    public var refreshRateHz: Double
    /// Threads that decode (and run the bandwidth probe); nil: chosen by measurement among all cores
    /// but one, left for the main and render threads (`DecodeThreadChoice`).
    public var decodeThreads: Int?
    /// A GGUF model to run instead of the synthetic one (shape, weights and seed are then ignored; the
    /// prompt is put in the file's chat template).
    public var modelPath: String?
    public init(shape: ModelShape, weights: SyntheticWeights, seed: UInt64, prompt: String, tokens: Int,
                sampling: SamplingOptions, buffering: TokenBuffering, refreshRateHz: Double,
                decodeThreads: Int? = nil) {
        self.shape = shape; self.weights = weights; self.seed = seed; self.prompt = prompt; self.tokens = tokens
        self.sampling = sampling; self.buffering = buffering; self.refreshRateHz = refreshRateHz
        self.decodeThreads = decodeThreads.map { max(1, $0) }
    }
}

public struct LLMStreamingOutcome: Sendable {
    public var produced = 0
    public var delivered = 0
    public var shown = 0
    public var dropped = 0
    public var frames = 0
    public var decodeTokensPerSecond = 0.0
    public var text = ""
    /// The model that ran: "synthetic q4_0 0.40 B" or the GGUF file's name.
    public var model = ""
    /// How many threads decoded, and why.
    public var decodeThreads: DecodeThreadChoice?
}

public enum LLMWorkloadError: Error, CustomStringConvertible {
    case tooLarge(bytes: Int, available: Int)
    case promptTooLong(tokens: Int, context: Int)
    public var description: String {
        switch self {
        case .tooLarge(let bytes, let available):
            return "the model needs \(bytes / 1_000_000) MB, more than the \(available / 1_000_000) MB this machine can spare"
        case .promptTooLong(let tokens, let context):
            return "the prompt (\(tokens) tokens) plus the tokens to generate exceed --context \(context)"
        }
    }
}

/// One generated token on its way to the screen.
public struct StreamedToken: Sendable {
    public var index: Int
    public var id: Int
    public var text: String
}

/// Runs an actor's jobs on one dedicated thread, so decode never occupies the cooperative pool and
/// can run at a lower priority than the main and render threads.
final class DedicatedThreadExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is guarded by its Mutex; the thread only reads it through the lock.
    private let jobs = Mutex<[UnownedJob]>([])
    private let wake = DispatchSemaphore(value: 0)

    init(name: String, background: BackgroundThreads?) {
        let thread = Thread { [self] in
            background?.adoptCurrentThread()
            Trace.setCurrentThreadName(name)
            while true {
                wake.wait()
                guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                job.runSynchronously(on: asUnownedSerialExecutor())
            }
        }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        jobs.withLock { $0.append(unowned) }
        wake.signal()
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// Owns the model and its KV cache; generates tokens into a stream.
public actor LLMInference {
    private let session: DecodeSession
    private let tokenizer: any TextTokenizer
    private let executor: DedicatedThreadExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public init(weights: TransformerWeights, pool: WorkerPool, tokenizer: any TextTokenizer, sampling: SamplingOptions, background: BackgroundThreads?) {
        session = DecodeSession(weights: weights, pool: pool, sampling: sampling)
        self.tokenizer = tokenizer
        executor = DedicatedThreadExecutor(name: "inference", background: background)
    }

    /// Tokenizes, prefills and decodes up to `count` tokens (a file's model stops at its
    /// end-of-generation tokens), yielding each; returns decode tokens/s and the tokens produced.
    public func generate(prompt: String, count: Int, into continuation: AsyncStream<StreamedToken>.Continuation) throws
        -> (tokensPerSecond: Double, produced: Int) {
        defer { continuation.finish() }
        let promptTokens = Trace.interval("tokenize", category: .stage) { () -> [Int] in
            // A file's tokenizer: the prompt goes in its chat template, whose special tokens are parsed.
            if let file = tokenizer as? GGUFTokenizer { return file.encode(file.chatPrompt(user: prompt), parseSpecial: true) }
            return tokenizer.encode(prompt).map { $0 % session.shape.vocab }
        }
        let endOfGeneration = (tokenizer as? GGUFTokenizer)?.endOfGeneration ?? []
        guard promptTokens.count + count <= session.shape.context else {
            throw LLMWorkloadError.promptTooLong(tokens: promptTokens.count, context: session.shape.context)
        }
        TraceRecorder.current?.setMetadata(.promptTokens, String(promptTokens.count))
        session.reset()
        ProcessMemory.recordResident()
        try Trace.interval("prefill", category: .stage) { try session.prefill(tokens: promptTokens) }
        ProcessMemory.recordResident()
        var detokenizer = StreamingDetokenizer(tokenizer: tokenizer)
        let decode = Trace.beginInterval("decode", category: .stage)
        defer { Trace.endInterval(decode) }
        var firstNs: UInt64 = 0
        var produced = 0
        for index in 0..<count {
            let token = session.sample()
            if endOfGeneration.contains(token) { break }
            produced += 1
            Trace.token(.produced, index: Int64(index))
            if index == 0 { firstNs = DispatchTime.now().uptimeNanoseconds }
            let text = Trace.interval("detokenize", category: .stage) { detokenizer.append(token) }
            let result = Trace.interval("stream delivery", category: .stage) {
                continuation.yield(StreamedToken(index: index, id: token, text: text))
            }
            if case .dropped(let lost) = result { Trace.token(.dropped, index: Int64(lost.index)) }
            if index + 1 < count { try session.step(token: token) }
            if index % 16 == 15 { ProcessMemory.recordResident() }   // ~20 us of /proc reading
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - firstNs) / 1e9
        return (produced > 1 && seconds > 0 ? Double(produced - 1) / seconds : 0, produced)
    }
}

/// What the view shows.
@MainActor @Observable
public final class Transcript: TracedObservable {
    public var text = ""
    public var tokenCount = 0
    public init() {}

    public static func tracedName(of keyPath: AnyKeyPath) -> TraceName? {
        switch keyPath {
        case \Transcript.text: "Transcript.text"
        case \Transcript.tokenCount: "Transcript.tokenCount"
        default: nil
        }
    }

    func withMutation<Member, Result>(keyPath: KeyPath<Transcript, Member>, _ mutation: () throws -> Result) rethrows -> Result {
        try ObservedWrite.writing(Self.tracedName(of: keyPath) ?? "Transcript") {
            try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
        }
    }

    func access<Member>(keyPath: KeyPath<Transcript, Member>) {
        ObservedWrite.accessed(Self.tracedName(of: keyPath))
        _$observationRegistrar.access(self, keyPath: keyPath)
    }
}

struct TranscriptView: View {
    let transcript: Transcript
    var body: some View {
        VStack(spacing: 6) {
            Text("Assistant · \(transcript.tokenCount) tokens", fontSize: 13)
            Text(transcript.text, fontSize: 15)
        }
    }
}

/// The main-actor side: receives tokens, applies them to the transcript once per frame, and records
/// delivery and display.
@MainActor
final class StreamingConsumer {
    let transcript = Transcript()
    var pending: [StreamedToken] = []
    var finished = false
    var outcome = LLMStreamingOutcome()
    private var frameWaiter: CheckedContinuation<Void, Never>?

    func receive(_ stream: AsyncStream<StreamedToken>, onePerFrame: Bool) async {
        for await token in stream {
            Trace.token(.delivered, index: Int64(token.index))
            outcome.delivered += 1
            pending.append(token)
            if onePerFrame { await withCheckedContinuation { frameWaiter = $0 } }
        }
        finished = true
    }

    /// Start of a frame: coalesce everything that arrived since the last one into one update.
    func frame() {
        if !pending.isEmpty {
            let tokens = pending
            pending.removeAll(keepingCapacity: true)
            Trace.interval("view update", category: .stage) {
                transcript.text += tokens.map(\.text).joined()
                transcript.tokenCount += tokens.count
            }
            outcome.shown += tokens.count
            // Runs after this frame's update and commit (the main queue is serial): shown on a committed frame.
            DispatchQueue.main.async {
                for token in tokens { Trace.token(.shown, index: Int64(token.index)) }
            }
        }
        if let waiter = frameWaiter { frameWaiter = nil; waiter.resume() }
    }
}

public enum LLMStreamingWorkload {
    /// Builds the model, measures bandwidth into the trace metadata, and streams `configuration.tokens`
    /// tokens to a headless view. Call on the main thread.
    @MainActor
    public static func run(_ configuration: LLMStreamingConfiguration, recorder: TraceRecorder?) throws -> LLMStreamingOutcome {
        // A file's model is mapped (and checked) before anything else runs.
        var syntheticType: GGMLType?
        if configuration.modelPath == nil, case .ggml(let type) = configuration.weights { syntheticType = type }
        let fileModel = try configuration.modelPath.map { try GGUFModel(path: $0, context: configuration.shape.context) }
            ?? syntheticType.map { try GGUFModel.synthetic(shape: configuration.shape, type: $0, seed: configuration.seed) }
        let shape = fileModel?.weights.shape ?? configuration.shape
        let needed = (fileModel?.weights.byteCount ?? shape.weightBytes(configuration.weights)) + shape.kvCacheBytes(positions: shape.context) * 2
        let available = Int(ProcessInfo.processInfo.physicalMemory / 10 * 7)
        guard needed < available else { throw LLMWorkloadError.tooLarge(bytes: needed, available: available) }
        Trace.setCurrentThreadName("main") // the analyzer's main thread
        let weights: TransformerWeights
        if let fileModel {
            weights = fileModel.weights
        } else {
            guard case .format(let format) = configuration.weights else { preconditionFailure("a ggml type runs as a GGUF model (above)") }
            let generating = WorkerPool()
            defer { generating.shutdown() }
            weights = TransformerWeights(shape: shape, format: format, seed: configuration.seed, pool: generating)
        }
        // Decode is background work (SCHED_IDLE, hitch_thread.h), as a real app's inference runs at
        // a background QoS: the main and render threads preempt it the moment they wake, where a
        // nice value only lowers its share; when other processes starve it, the main thread raises
        // it (BackgroundThreads). It leaves a core to the UI: the thread count is the
        // fewest of all cores but one that decode as fast as any (measured), unless given.
        let choice = try DecodeThreadChoice.measure(weights: weights, given: configuration.decodeThreads)
        let background = BackgroundThreads()
        let pool = WorkerPool(threadCount: choice.threads, background: background)
        defer { pool.shutdown() }
        let probe = BandwidthProbe.measure(pool: pool, repetitions: 3)
        if let shortfall = probe.sizing.shortfall { FileHandle.standardError.write(Data("hitch: bandwidth probe: \(shortfall)\n".utf8)) }
        let syntheticName = "synthetic \(configuration.weights.name), "
            + "\(String(format: "%.2f", Double(shape.parameterCount) / 1e9)) B parameters, seed \(configuration.seed)"
        let modelName = syntheticType != nil ? syntheticName : fileModel.map { "\($0.name) (\(($0.file.path as NSString).lastPathComponent))" } ?? syntheticName
        if let recorder {
            BandwidthProbe.record(probe)
            let metadata: [(MetadataKey, String)] = [
                (.workload, "llm"), (.refreshRateHz, String(configuration.refreshRateHz)),
                (.model, modelName), (.prompt, configuration.prompt),
                (.weights, weights.formatName), (.parameterCount, String(shape.parameterCount)),
                (.weightsBytes, String(weights.byteCount)), (.kvCacheBytes, String(shape.kvCacheBytes(positions: shape.context))),
                (.dim, String(shape.dim)), (.layers, String(shape.layers)), (.heads, String(shape.heads)),
                (.kvHeads, String(shape.kvHeads)), (.ffn, String(shape.ffn)), (.vocab, String(shape.vocab)),
                (.context, String(shape.context)), (.tokens, String(configuration.tokens)),
                (.buffering, configuration.buffering == .unbounded ? "unbounded" : "newest:\(bufferSize(configuration.buffering))"),
                (.computeUnit, "cpu"), (.decodeThreads, String(pool.threadCount)),
                (.decodeThreadChoice, choice.reason), (.decodeTokensPerSecondByThreads, choice.ratesText),
            ]
            for (key, value) in metadata { recorder.setMetadata(key, value) }
        }
        // The synthetic model tokenizes with the byte-level BPE in every weight type (its GGUF form's
        // vocabulary is the bytes and placeholders); a file's model with its own tokenizer.
        let tokenizer: any TextTokenizer = (syntheticType == nil ? fileModel?.tokenizer : nil) ?? BPETokenizer()
        let inference = LLMInference(weights: weights, pool: pool, tokenizer: tokenizer, sampling: configuration.sampling, background: background)
        let policy: AsyncStream<StreamedToken>.Continuation.BufferingPolicy
        switch configuration.buffering {
        case .unbounded: policy = .unbounded
        case .newest(let n): policy = .bufferingNewest(n)
        }
        let (stream, continuation) = AsyncStream.makeStream(of: StreamedToken.self, bufferingPolicy: policy)
        let consumer = StreamingConsumer()
        let host = ViewHost(root: TranscriptView(transcript: consumer.transcript),
                            configuration: HostConfiguration(refreshRateHz: configuration.refreshRateHz))
        host.onFrame = { _ in
            consumer.frame()
            if let change = background.checkStarvation(nowNs: MonotonicClock.nowNs()) {
                Trace.instant("decode starved")
                recorder?.setMetadata(.decodePriority, change)
                FileHandle.standardError.write(Data("hitch: decode priority: \(change)\n".utf8))
            }
        }
        let interaction = Trace.beginInteraction("streaming")
        let onePerFrame = configuration.buffering != .unbounded
        Task { @MainActor in await consumer.receive(stream, onePerFrame: onePerFrame) }
        let producer = Task { try await inference.generate(prompt: configuration.prompt, count: configuration.tokens, into: continuation) }
        // One display link for the whole stream (one vsync grid, one render thread); it stops 0.1 s
        // after the last token was applied, so the last tokens reach the screen.
        var drainedNs: Int64?
        let frames = host.run(maxSeconds: 3600) {
            guard consumer.finished && consumer.pending.isEmpty else { return false }
            let now = MonotonicClock.nowNs()
            if drainedNs == nil { drainedNs = now }
            return now - drainedNs! >= 100_000_000
        }.frames
        Trace.endInteraction(interaction)
        var outcome = consumer.outcome
        outcome.frames = frames
        outcome.text = consumer.transcript.text
        let result = Mutex<Result<(tokensPerSecond: Double, produced: Int), any Error>?>(nil)
        Task { let r = await producer.result; result.withLock { $0 = r } }
        while result.withLock({ $0 == nil }) { _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01)) }
        let generated = try result.withLock { $0! }.get()
        outcome.decodeTokensPerSecond = generated.tokensPerSecond
        outcome.produced = generated.produced
        outcome.dropped = outcome.produced - outcome.delivered
        outcome.model = modelName
        outcome.decodeThreads = choice
        // The first tokens as text, in the report's metadata (escaped: a synthetic model's bytes are noise).
        recorder?.setMetadata(.output, escapedForDisplay(String(outcome.text.prefix(200))))
        return outcome
    }

    private static func bufferSize(_ buffering: TokenBuffering) -> Int {
        if case .newest(let n) = buffering { return n }
        return 0
    }
}


/// Text for a terminal or a report: control characters and the replacement character (invalid UTF-8
/// from a synthetic model) are escaped, so no raw bytes reach the screen.
public func escapedForDisplay(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\u{FFFD}": out += "\\u{FFFD}"
        default:
            if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}
