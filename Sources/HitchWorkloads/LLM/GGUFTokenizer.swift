// The tokenizer a GGUF file carries: `tokenizer.ggml.model = gpt2`, GPT-2 byte-level BPE over
// `tokenizer.ggml.tokens` and `tokenizer.ggml.merges` after the pre-tokenizer `tokenizer.ggml.pre`
// names; or `llama`, SentencePiece over the tokens' scores (SentencePiece.swift). Special tokens are
// split out first. It follows llama.cpp's llama-vocab.cpp so the ids are
// the ones llama.cpp produces for the same file (Tests/Fixtures/llm/smollm2-reference.json).

/// What the streaming workload needs from a tokenizer: the synthetic `BPETokenizer` or a file's.
public protocol TextTokenizer: Sendable {
    /// Token ids of `text` (a prompt).
    func encode(_ text: String) -> [Int]
    /// The bytes a token contributes to the output text (control tokens contribute none).
    func bytes(of token: Int) -> [UInt8]
}

extension BPETokenizer: TextTokenizer {}

public enum GGUFTokenizerError: Error, CustomStringConvertible {
    case unsupported(String)
    public var description: String {
        switch self { case .unsupported(let reason): return "unsupported tokenizer: \(reason)" }
    }
}

public struct GGUFTokenizer: TextTokenizer {
    /// Token texts: in GPT-2's byte-to-character mapping ("Ġthe" for " the"), or SentencePiece's
    /// ("▁the").
    public let tokens: [String]
    /// The SentencePiece encoder (`tokenizer.ggml.model = llama`); nil for byte-level BPE.
    private let sentencePiece: SentencePieceEncoder?
    /// The chat template is Gemma's (turns between <start_of_turn> and <end_of_turn>).
    public let isGemmaChat: Bool
    /// llama.cpp's token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
    public let tokenTypes: [Int]
    public let endOfSequence: Int?
    /// Tokens that end a reply, as llama.cpp's end-of-generation set: the end-of-sequence and
    /// end-of-turn ids the file names, and the turn-ending tokens of chat models by their text
    /// (Gemma ends a turn with <end_of_turn>, though its end-of-sequence token is <eos>).
    public let endOfGeneration: Set<Int>
    public let beginningOfSequence: Int?
    public let addsBeginningOfSequence: Bool
    public let preTokenizer: String
    /// The chat template's default system prompt, when the template is ChatML and names one.
    public let defaultSystemPrompt: String?
    public let isChatML: Bool
    private let ids: [String: Int]
    /// "left right" -> merge rank (lower merges first).
    private let mergeRanks: [String: Int]
    /// Special tokens split out of the text before BPE, longest first: (text, id, is control).
    private let specials: [(text: [UInt8], id: Int, control: Bool)]
    /// Token id -> output bytes (precomputed: decoding runs once per generated token).
    private let tokenBytes: [[UInt8]]

    /// Pre-tokenizers whose regexes are implemented (llama.cpp's names).
    public static let supportedPreTokenizers: Set<String> = ["smollm", "gpt2", "default", "starcoder", "refact", "codeshell"]

    public init(file: GGUFFile) throws {
        let model = try file.string("tokenizer.ggml.model")
        guard model == "gpt2" || model == "llama" else {
            throw GGUFTokenizerError.unsupported("tokenizer.ggml.model is \(model) (supported: gpt2 byte-level BPE, llama SentencePiece)")
        }
        guard let tokenValues = file.metadata["tokenizer.ggml.tokens"]?.array, !tokenValues.isEmpty else {
            throw GGUFError.missingKey("tokenizer.ggml.tokens")
        }
        let tokens = tokenValues.map { $0.string ?? "" }
        let fileTypes = file.metadata["tokenizer.ggml.token_type"]?.array?.map { $0.integer ?? 1 } ?? []
        self.tokens = tokens
        tokenTypes = fileTypes.count == tokens.count ? fileTypes : Array(repeating: 1, count: tokens.count)
        let merges = file.metadata["tokenizer.ggml.merges"]?.array?.compactMap(\.string) ?? []
        var ranks: [String: Int] = [:]
        ranks.reserveCapacity(merges.count)
        for (rank, merge) in merges.enumerated() where ranks[merge] == nil { ranks[merge] = rank }
        mergeRanks = ranks
        var ids: [String: Int] = [:]
        ids.reserveCapacity(tokens.count)
        for (id, text) in tokens.enumerated() where ids[text] == nil { ids[text] = id }
        self.ids = ids
        func tokenID(_ key: String) -> Int? {
            file.metadata[key]?.integer.flatMap { $0 >= 0 && $0 < tokens.count ? $0 : nil }
        }
        endOfSequence = tokenID("tokenizer.ggml.eos_token_id")
        let turnEnds = ["<end_of_turn>", "<|im_end|>", "<|eot_id|>", "<|end|>", "<|endoftext|>", "<|return|>", "<EOT>"]
        endOfGeneration = Set([endOfSequence, tokenID("tokenizer.ggml.eot_token_id"), tokenID("tokenizer.ggml.eom_token_id")]
            .compactMap { $0 } + turnEnds.compactMap { ids[$0] })
        beginningOfSequence = tokenID("tokenizer.ggml.bos_token_id")
        addsBeginningOfSequence = file.metadata["tokenizer.ggml.add_bos_token"]?.bool ?? false && beginningOfSequence != nil
        preTokenizer = file.metadata["tokenizer.ggml.pre"]?.string ?? "default"
        if model == "llama" {
            let scores = file.metadata["tokenizer.ggml.scores"]?.array?.map { Float($0.number ?? 0) } ?? []
            sentencePiece = SentencePieceEncoder(tokens: tokens, ids: ids, scores: scores,
                                                 addsSpacePrefix: file.metadata["tokenizer.ggml.add_space_prefix"]?.bool ?? true)
        } else {
            sentencePiece = nil
        }
        guard sentencePiece != nil || Self.supportedPreTokenizers.contains(preTokenizer) else {
            throw GGUFTokenizerError.unsupported("pre-tokenizer \(preTokenizer) (supported: \(Self.supportedPreTokenizers.sorted().joined(separator: ", ")))")
        }
        let types = tokenTypes
        specials = tokens.indices.filter { types[$0] == 3 || types[$0] == 4 }
            .map { (text: Array(tokens[$0].utf8), id: $0, control: types[$0] == 3) }
            .filter { !$0.text.isEmpty }
            .sorted { $0.text.count > $1.text.count }
        let decoder = Self.byteDecoder, isSentencePiece = sentencePiece != nil
        tokenBytes = tokens.indices.map { id in
            switch types[id] {
            case 3, 5: return []                       // control and unused: not text
            case 4: return Array(tokens[id].utf8)      // user-defined: literal text
            default:
                if isSentencePiece { return SentencePieceEncoder.bytes(ofToken: tokens[id], type: types[id]) }
                return tokens[id].unicodeScalars.flatMap { decoder[$0.value].map { [$0] } ?? Array(String($0).utf8) }
            }
        }
        let template = file.metadata["tokenizer.chat_template"]?.string ?? ""
        isChatML = template.contains("<|im_start|>")
        // Gemma files may carry no template at all: the turn tokens in the vocabulary say it is Gemma's.
        isGemmaChat = !isChatML && ids["<start_of_turn>"] != nil && ids["<end_of_turn>"] != nil
        if let start = template.range(of: "<|im_start|>system\n"),
           let end = template.range(of: "<|im_end|>", range: start.upperBound..<template.endIndex) {
            defaultSystemPrompt = String(template[start.upperBound..<end.lowerBound])
        } else {
            defaultSystemPrompt = nil
        }
    }

    public var vocabularySize: Int { tokens.count }

    public func bytes(of token: Int) -> [UInt8] {
        token >= 0 && token < tokenBytes.count ? tokenBytes[token] : []
    }

    public func isControl(_ token: Int) -> Bool { token >= 0 && token < tokenTypes.count && tokenTypes[token] == 3 }

    /// The prompt a chat model expects for one user message (ChatML with the template's default
    /// system prompt, and the assistant's turn opened), or the text itself for a non-chat model.
    public func chatPrompt(user: String) -> String {
        if isGemmaChat { return "<start_of_turn>user\n\(user)<end_of_turn>\n<start_of_turn>model\n" }
        guard isChatML else { return user }
        var prompt = ""
        if let system = defaultSystemPrompt { prompt += "<|im_start|>system\n\(system)<|im_end|>\n" }
        return prompt + "<|im_start|>user\n\(user)<|im_end|>\n<|im_start|>assistant\n"
    }

    /// As llama_tokenize(add_special: true, parse_special: false).
    public func encode(_ text: String) -> [Int] { encode(text, parseSpecial: false) }

    /// As llama_tokenize(add_special: true, parse_special:): special tokens are split out first
    /// (control tokens only when `parseSpecial`), then each stretch of text is pre-tokenized and BPE'd.
    public func encode(_ text: String, parseSpecial: Bool) -> [Int] {
        var result: [Int] = []
        if addsBeginningOfSequence, let bos = beginningOfSequence { result.append(bos) }
        let bytes = Array(text.utf8)
        var start = 0, i = 0, afterSpecial = true
        while i < bytes.count {
            if let special = specials.first(where: { (parseSpecial || !$0.control) && matches($0.text, in: bytes, at: i) }) {
                if start < i { encodeText(bytes[start..<i], afterSpecial: afterSpecial, into: &result) }
                result.append(special.id)
                i += special.text.count
                start = i
                afterSpecial = true
            } else {
                i += 1
            }
        }
        if start < bytes.count { encodeText(bytes[start..<bytes.count], afterSpecial: afterSpecial, into: &result) }
        return result
    }

    private func matches(_ needle: [UInt8], in haystack: [UInt8], at index: Int) -> Bool {
        guard haystack[index] == needle[0], index + needle.count <= haystack.count else { return false }
        for k in 1..<needle.count where haystack[index + k] != needle[k] { return false }
        return true
    }

    private func encodeText(_ bytes: ArraySlice<UInt8>, afterSpecial: Bool, into result: inout [Int]) {
        if let sentencePiece { sentencePiece.encode(bytes, afterSpecial: afterSpecial, into: &result); return }
        let scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        for word in Self.preTokenize(scalars, digitsApart: preTokenizer != "gpt2" && preTokenizer != "default") {
            bpe(word, into: &result)
        }
    }

    /// BPE of one pre-tokenized word: start from its bytes (as GPT-2 characters), merge the adjacent
    /// pair of lowest rank (leftmost on ties) until none is in the merge list.
    private func bpe(_ word: ArraySlice<Unicode.Scalar>, into result: inout [Int]) {
        let encoder = Self.byteEncoder
        var symbols = String(String.UnicodeScalarView(word)).utf8.map { String(encoder[Int($0)]) }
        while symbols.count > 1 {
            var best = -1, bestRank = Int.max
            for k in 0..<(symbols.count - 1) {
                if let rank = mergeRanks[symbols[k] + " " + symbols[k + 1]], rank < bestRank { bestRank = rank; best = k }
            }
            guard best >= 0 else { break }
            symbols[best] += symbols[best + 1]
            symbols.remove(at: best + 1)
        }
        for symbol in symbols {
            if let id = ids[symbol] {
                result.append(id)
            } else {
                // As llama.cpp: a symbol missing from the vocabulary falls back to its single characters.
                for character in symbol.unicodeScalars { if let id = ids[String(character)] { result.append(id) } }
            }
        }
    }

    // MARK: Pre-tokenizer

    struct Flags {
        var letter = false, number = false, whitespace = false, inRange = false
        init() {}
        init(_ scalar: Unicode.Scalar) {
            inRange = true
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: letter = true
            case .decimalNumber, .letterNumber, .otherNumber: number = true
            default: break
            }
            whitespace = scalar.properties.isWhitespace
        }
    }

    /// llama.cpp's pre-tokenization for the GPT-2 family: with `digitsApart` (smollm, starcoder, ...)
    /// every \p{N} is first split into a fragment of its own; then within each fragment the GPT-2
    /// regex 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ (as
    /// unicode.cpp's unicode_regex_split_custom_gpt2 implements it: a fragment's end ends every match).
    static func preTokenize(_ text: [Unicode.Scalar], digitsApart: Bool) -> [ArraySlice<Unicode.Scalar>] {
        var fragments: [Range<Int>] = []
        if digitsApart {
            var start = 0
            for (i, scalar) in text.enumerated() where Flags(scalar).number {
                if start < i { fragments.append(start..<i) }
                fragments.append(i..<(i + 1))
                start = i + 1
            }
            if start < text.count { fragments.append(start..<text.count) }
        } else if !text.isEmpty {
            fragments = [0..<text.count]
        }
        var words: [ArraySlice<Unicode.Scalar>] = []
        for fragment in fragments {
            let end = fragment.upperBound
            func scalar(_ p: Int) -> UInt32? { p >= fragment.lowerBound && p < end ? text[p].value : nil }
            func flags(_ p: Int) -> Flags { p >= fragment.lowerBound && p < end ? Flags(text[p]) : Flags() }
            var previous = fragment.lowerBound
            func emit(_ upTo: Int) { if upTo > previous { words.append(text[previous..<upTo]) }; previous = upTo }
            var pos = fragment.lowerBound
            while pos < end {
                let cpt = text[pos].value
                let f = flags(pos)
                if cpt == 0x27 /* ' */ && pos + 1 < end {
                    let next = scalar(pos + 1)!
                    if next == 0x73 || next == 0x74 || next == 0x6D || next == 0x64 { emit(pos + 2); pos += 2; continue }  // s t m d
                    if pos + 2 < end {
                        let nextNext = scalar(pos + 2)!
                        if (next == 0x72 && nextNext == 0x65) || (next == 0x76 && nextNext == 0x65) || (next == 0x6C && nextNext == 0x6C) {
                            emit(pos + 3); pos += 3; continue                                                       // re ve ll
                        }
                    }
                }
                var f2 = cpt == 0x20 ? flags(pos + 1) : f
                if f2.letter {
                    if cpt == 0x20 { pos += 1 }
                    while f2.letter { pos += 1; f2 = flags(pos) }
                    emit(pos); continue
                }
                if f2.number {
                    if cpt == 0x20 { pos += 1 }
                    while f2.number { pos += 1; f2 = flags(pos) }
                    emit(pos); continue
                }
                if !(f2.whitespace || f2.letter || f2.number) && f2.inRange {
                    if cpt == 0x20 { pos += 1 }
                    while !(f2.whitespace || f2.letter || f2.number) && f2.inRange { pos += 1; f2 = flags(pos) }
                    emit(pos); continue
                }
                var spaces = 0
                while flags(pos + spaces).whitespace { spaces += 1 }
                if spaces > 1 && scalar(pos + spaces) != nil {     // \s+(?!\S): leave the last space to the next word
                    pos += spaces - 1; emit(pos); continue
                }
                if spaces > 0 { pos += spaces; emit(pos); continue }
                pos += 1; emit(pos)
            }
        }
        return words
    }

    // MARK: GPT-2's byte <-> character mapping

    /// Byte -> the character GPT-2's vocabulary writes it as (printable bytes stand for themselves,
    /// the rest are shifted to 256 + n).
    static let byteEncoder: [Character] = {
        var table = [Character](repeating: " ", count: 256)
        var shifted: UInt32 = 256
        for byte in 0..<256 {
            let printable = (33...126).contains(byte) || (161...172).contains(byte) || (174...255).contains(byte)
            let value = printable ? UInt32(byte) : { defer { shifted += 1 }; return shifted }()
            table[byte] = Character(Unicode.Scalar(value)!)
        }
        return table
    }()

    static let byteDecoder: [UInt32: UInt8] = {
        var table: [UInt32: UInt8] = [:]
        for (byte, character) in byteEncoder.enumerated() { table[character.unicodeScalars.first!.value] = UInt8(byte) }
        return table
    }()
}
