// The SentencePiece tokenizer a GGUF file carries as `tokenizer.ggml.model = llama` (Gemma, Llama 2):
// spaces become "▁", the text starts as one symbol per character, and the adjacent pair whose merged
// text is the vocabulary token of highest score (leftmost on ties) merges until no pair is a token;
// a symbol that is not a token falls back to its bytes' <0xXX> tokens. As llama.cpp's
// llm_tokenizer_spm, so the ids are llama-tokenize's.

import Foundation
import HitchAlgorithms

struct SentencePieceEncoder: Sendable {
    let ids: [String: Int]
    let scores: [Float]
    /// The <0xXX> token of each byte (-1 when the vocabulary lacks it).
    let byteTokens: [Int]
    /// tokenizer.ggml.add_space_prefix: a space before text that starts the prompt or follows a special token.
    let addsSpacePrefix: Bool

    static let space: [UInt8] = Array("\u{2581}".utf8)

    init(tokens: [String], ids: [String: Int], scores: [Float], addsSpacePrefix: Bool) {
        self.ids = ids
        self.scores = scores.count == tokens.count ? scores : [Float](repeating: 0, count: tokens.count)
        byteTokens = (0..<256).map { ids[String(format: "<0x%02X>", $0)] ?? -1 }
        self.addsSpacePrefix = addsSpacePrefix
    }

    /// A token's output bytes: "▁" as a space, <0xXX> as its byte.
    static func bytes(ofToken text: String, type: Int) -> [UInt8] {
        if type == 6, text.count == 6, text.hasPrefix("<0x"), let byte = UInt8(text.dropFirst(3).prefix(2), radix: 16) { return [byte] }
        var out: [UInt8] = []
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            if i + 2 < utf8.count, utf8[i] == space[0], utf8[i + 1] == space[1], utf8[i + 2] == space[2] {
                out.append(0x20); i += 3
            } else {
                out.append(utf8[i]); i += 1
            }
        }
        return out
    }

    private struct Symbol { var start: Int; var length: Int; var previous: Int; var next: Int }
    /// A pair of adjacent symbols that a token could merge: the highest score first, then the leftmost.
    private struct Bigram: HeapElement {
        var left: Int; var right: Int; var score: Float; var length: Int
        func precedes(_ other: Bigram) -> Bool { score > other.score || (score == other.score && left < other.left) }
    }

    /// Encodes one stretch of text between special tokens (`afterSpecial`: it starts the prompt or
    /// follows a special token, where the space prefix applies).
    func encode(_ raw: ArraySlice<UInt8>, afterSpecial: Bool, into result: inout [Int]) {
        var text: [UInt8] = []
        text.reserveCapacity(raw.count * 3 + 3)
        if addsSpacePrefix && afterSpecial { text += Self.space }
        for byte in raw { if byte == 0x20 { text += Self.space } else { text.append(byte) } }
        guard !text.isEmpty else { return }
        var symbols: [Symbol] = []
        var offset = 0
        while offset < text.count {
            let lead = text[offset]
            let length = min(text.count - offset, lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 1)
            symbols.append(Symbol(start: offset, length: length, previous: symbols.count - 1, next: symbols.count + 1))
            offset += length
        }
        symbols[symbols.count - 1].next = -1
        func token(_ start: Int, _ length: Int) -> Int? { ids[String(decoding: text[start..<(start + length)], as: UTF8.self)] }
        var queue = BinaryHeap<Bigram>()
        func addBigram(_ left: Int, _ right: Int) {
            guard left >= 0, right >= 0 else { return }
            let length = symbols[left].length + symbols[right].length
            guard let id = token(symbols[left].start, length) else { return }
            queue.push(Bigram(left: left, right: right, score: scores[id], length: length))
        }
        for i in 1..<symbols.count { addBigram(i - 1, i) }
        while let bigram = queue.pop() {
            let left = symbols[bigram.left], right = symbols[bigram.right]
            // Stale: one side was merged into something else since this pair was queued.
            guard left.length > 0, right.length > 0, left.length + right.length == bigram.length else { continue }
            symbols[bigram.left].length += right.length
            symbols[bigram.right].length = 0
            symbols[bigram.left].next = right.next
            if right.next >= 0 { symbols[right.next].previous = bigram.left }
            addBigram(left.previous, bigram.left)
            addBigram(bigram.left, right.next)
        }
        var i = 0
        while i >= 0 && i < symbols.count {
            let symbol = symbols[i]
            if let id = token(symbol.start, symbol.length) {
                result.append(id)
            } else {
                for byte in text[symbol.start..<(symbol.start + symbol.length)] where byteTokens[Int(byte)] >= 0 {
                    result.append(byteTokens[Int(byte)])
                }
            }
            i = symbol.next
        }
    }
}
