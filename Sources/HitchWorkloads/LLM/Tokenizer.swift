// A byte-level BPE tokenizer (GPT-2 style): text is split into words that carry their leading space,
// each word starts as its UTF-8 bytes (ids 0-255), and learned merges join the most frequent adjacent
// pairs. The merges are learned at startup from `BPETokenizer.trainingText`, shipped in the source.

public struct BPETokenizer: Sendable {
    /// Bytes of every token id (0..<256 are single bytes; the rest are merges in rank order).
    public private(set) var tokenBytes: [[UInt8]]
    /// (left, right) -> merged id; the id is 256 + rank, so a lower id means an earlier merge.
    private var merges: [Pair: Int]

    struct Pair: Hashable { var left: Int; var right: Int }

    public var vocabularySize: Int { tokenBytes.count }

    /// Learns up to `mergeCount` merges from `text`.
    public init(training text: String = BPETokenizer.trainingText, mergeCount: Int = 512) {
        tokenBytes = (0..<256).map { [UInt8($0)] }
        merges = [:]
        // Word frequencies, each word as its current token sequence.
        var counts: [[UInt8]: Int] = [:]
        for word in Self.words(of: text) { counts[word, default: 0] += 1 }
        var words = counts.map { (tokens: $0.key.map(Int.init), count: $0.value) }
        for _ in 0..<mergeCount {
            var pairCounts: [Pair: Int] = [:]
            for word in words where word.tokens.count > 1 {
                for i in 0..<(word.tokens.count - 1) {
                    pairCounts[Pair(left: word.tokens[i], right: word.tokens[i + 1]), default: 0] += word.count
                }
            }
            // Most frequent pair; ties broken by the smaller ids so training is deterministic.
            guard let best = pairCounts.max(by: { a, b in
                a.value != b.value ? a.value < b.value : (a.key.left, a.key.right) > (b.key.left, b.key.right)
            }), best.value >= 2 else { break }
            let id = tokenBytes.count
            merges[best.key] = id
            tokenBytes.append(tokenBytes[best.key.left] + tokenBytes[best.key.right])
            for index in words.indices {
                words[index].tokens = Self.apply(best.key, id: id, to: words[index].tokens)
            }
        }
    }

    private static func apply(_ pair: Pair, id: Int, to tokens: [Int]) -> [Int] {
        guard tokens.count > 1 else { return tokens }
        var result: [Int] = []
        result.reserveCapacity(tokens.count)
        var i = 0
        while i < tokens.count {
            if i + 1 < tokens.count && tokens[i] == pair.left && tokens[i + 1] == pair.right {
                result.append(id); i += 2
            } else {
                result.append(tokens[i]); i += 1
            }
        }
        return result
    }

    /// Splits into words, each keeping its leading space (so "a b" -> "a", " b").
    static func words(of text: String) -> [[UInt8]] {
        var words: [[UInt8]] = []
        var current: [UInt8] = []
        for byte in text.utf8 {
            let isBoundary = byte == 0x20 || byte == 0x0A
            if isBoundary && !current.isEmpty { words.append(current); current = [] }
            current.append(byte)
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// Token ids for `text`: per word, repeatedly apply the earliest-learned merge present.
    public func encode(_ text: String) -> [Int] {
        var result: [Int] = []
        for word in Self.words(of: text) {
            var tokens = word.map(Int.init)
            while tokens.count > 1 {
                var bestID = Int.max, bestPair: Pair?
                for i in 0..<(tokens.count - 1) {
                    let pair = Pair(left: tokens[i], right: tokens[i + 1])
                    if let id = merges[pair], id < bestID { bestID = id; bestPair = pair }
                }
                guard let pair = bestPair else { break }
                tokens = Self.apply(pair, id: bestID, to: tokens)
            }
            result += tokens
        }
        return result
    }

    /// The bytes of a token id. Ids beyond the learned vocabulary (the model's vocabulary is larger)
    /// fold onto it, so every id the model can produce decodes to something.
    public func bytes(of token: Int) -> [UInt8] {
        tokenBytes[((token % tokenBytes.count) + tokenBytes.count) % tokenBytes.count]
    }

    public func decode(_ tokens: [Int]) -> String {
        String(decoding: tokens.flatMap { bytes(of: $0) }, as: UTF8.self)
    }

    /// The text the merges are learned from.
    public static let trainingText = """
    On-device language models decode one token at a time. Each token reads every weight of the model \
    once, so the time per token is about the size of the model divided by the memory bandwidth of the \
    device. The arithmetic units are mostly waiting for memory. This is why quantization matters: a \
    model stored with four bits per weight reads a quarter of the bytes of a model stored with sixteen \
    bits per weight, and it decodes close to four times faster when the kernels keep up.
    The second half of the story is the screen. Tokens arrive from an inference actor through an \
    asynchronous stream, and the main actor appends them to a transcript that a view renders. If the \
    view updates for every token and the main thread is busy, frames are late and the text stutters. If \
    the stream drops tokens when its buffer is full, the text is wrong. The consumer should coalesce \
    the tokens that arrived since the last frame and update the view once per frame, so no token is \
    lost and the memory stays bounded.
    The quick brown fox jumps over the lazy dog. The model streams tokens to the screen while the \
    user reads. A frame is late when it is shown after the time the display expected it. The hitch \
    time ratio is the total time of late frames divided by the time the screen was animating. Good \
    apps keep it under five milliseconds per second. The profiler records every frame, every stage of \
    the pipeline, every view update and every inference op, and the analyzer explains where the time \
    went: which stage made the frame late, which view updated too often, and how close the decode loop \
    runs to the limit of the memory bandwidth of the machine.
    Attention reads the keys and values of every earlier position from the cache, so the cache grows \
    with the context. The feed forward network is the largest part of each layer. The output head \
    maps the hidden state to the scores of every token in the vocabulary, and the sampler picks the \
    next token from the highest scores. Greedy sampling always picks the best token; top k sampling \
    picks one of the k best tokens at random, weighted by their probabilities.
    """
}

/// Turns token ids into text as they stream, holding back bytes of an unfinished UTF-8 sequence.
public struct StreamingDetokenizer: Sendable {
    private let tokenizer: any TextTokenizer
    private var pending: [UInt8] = []
    public init(tokenizer: any TextTokenizer) { self.tokenizer = tokenizer }

    /// The text that `token` completes (possibly empty while a multi-byte character is unfinished).
    public mutating func append(_ token: Int) -> String {
        pending += tokenizer.bytes(of: token)
        // Keep a trailing incomplete sequence (at most 3 bytes) for the next token.
        var end = pending.count
        var back = 0
        while back < min(3, pending.count) {
            let byte = pending[pending.count - 1 - back]
            if byte & 0xC0 == 0x80 { back += 1; continue }
            if byte >= 0xC0 {
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                if back + 1 < length { end = pending.count - 1 - back }
            }
            break
        }
        let text = String(decoding: pending[..<end], as: UTF8.self)
        pending.removeFirst(end)
        return text
    }
}
