// A small streaming XML tokenizer for `xctrace export` output: start tags with their attributes,
// end tags and text, read from a byte source in chunks so a multi-gigabyte export is read in bounded
// memory (one chunk, plus the token being read: a tag or a text run of at most `maxTokenBytes`).
// It handles what exports contain: the declaration, comments, CDATA, self-closing tags, the five
// named entities and numeric character references. No DTDs, namespaces or validation; malformed
// input is an error naming the byte offset and what was expected there.

struct XMLError: Error {
    var offset: UInt64
    var expected: String
}

enum XMLToken {
    case start(name: String, attributes: [(String, String)], selfClosing: Bool)
    case end(name: String)
    case text(String)
}

struct XMLTokenizer {
    private let readInto: (UnsafeMutableRawPointer, Int) -> Int
    private var buffer: [UInt8] = []
    private var position = 0
    private var bufferOffset: UInt64 = 0
    private var atEnd = false
    /// A tag or text run longer than this is an error (memory bound).
    var maxTokenBytes = 16 << 20
    /// Offset of the token last returned.
    private(set) var tokenOffset: UInt64 = 0

    init(readInto: @escaping (UnsafeMutableRawPointer, Int) -> Int) {
        self.readInto = readInto
        buffer.reserveCapacity(1 << 20)
    }

    var offset: UInt64 { bufferOffset + UInt64(position) }

    /// Makes at least `count` bytes available from `position`; false at the end of input.
    private mutating func ensure(_ count: Int) throws(XMLError) -> Bool {
        while buffer.count - position < count {
            if atEnd { return false }
            if position > 0 && position >= buffer.count / 2 {
                buffer.removeFirst(position)
                bufferOffset += UInt64(position)
                position = 0
            }
            if buffer.count - position > maxTokenBytes {
                throw XMLError(offset: offset, expected: "a tag or text under \(maxTokenBytes >> 20) MB")
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            let got = chunk.withUnsafeMutableBytes { readInto($0.baseAddress!, $0.count) }
            if got < 0 { throw XMLError(offset: offset, expected: "readable data") }
            if got == 0 { atEnd = true } else { buffer.append(contentsOf: chunk[0..<got]) }
        }
        return true
    }

    private mutating func peek(_ ahead: Int = 0) throws(XMLError) -> UInt8? {
        try ensure(ahead + 1) ? buffer[position + ahead] : nil
    }

    private mutating func starts(with text: StaticString) throws(XMLError) -> Bool {
        let count = text.utf8CodeUnitCount
        guard try ensure(count) else { return false }
        let pointer = text.utf8Start
        for i in 0..<count where buffer[position + i] != pointer[i] { return false }
        return true
    }

    /// Skips to just after `terminator`, or throws naming what was expected.
    private mutating func skip(past terminator: StaticString, what: String) throws(XMLError) {
        let start = offset
        while true {
            if try starts(with: terminator) { position += terminator.utf8CodeUnitCount; return }
            guard try ensure(1) else { throw XMLError(offset: start, expected: "\(what) closed by '\(terminator)' before the end of the file") }
            position += 1
            if offset - start > UInt64(maxTokenBytes) { throw XMLError(offset: start, expected: "\(what) under \(maxTokenBytes >> 20) MB") }
        }
    }

    mutating func next() throws(XMLError) -> XMLToken? {
        while true {
            guard let byte = try peek() else { return nil }
            tokenOffset = offset
            if byte != UInt8(ascii: "<") { return .text(try text()) }
            if try starts(with: "<?") { try skip(past: "?>", what: "a processing instruction"); continue }
            if try starts(with: "<!--") { try skip(past: "-->", what: "a comment"); continue }
            if try starts(with: "<![CDATA[") {
                position += 9
                var bytes: [UInt8] = []
                while true {
                    if try starts(with: "]]>") { position += 3; break }
                    guard let b = try peek() else { throw XMLError(offset: tokenOffset, expected: "a CDATA section closed by ']]>'") }
                    bytes.append(b)
                    position += 1
                    if bytes.count > maxTokenBytes { throw XMLError(offset: tokenOffset, expected: "a CDATA section under \(maxTokenBytes >> 20) MB") }
                }
                return .text(String(decoding: bytes, as: UTF8.self))
            }
            if try starts(with: "<!") { try skip(past: ">", what: "a declaration"); continue }
            position += 1
            if try peek() == UInt8(ascii: "/") {
                position += 1
                let name = try self.name()
                try skipSpace()
                guard try peek() == UInt8(ascii: ">") else { throw XMLError(offset: offset, expected: "'>' closing the end tag </\(name)") }
                position += 1
                return .end(name: name)
            }
            let name = try self.name()
            var attributes: [(String, String)] = []
            while true {
                try skipSpace()
                guard let c = try peek() else { throw XMLError(offset: tokenOffset, expected: "the tag <\(name) closed by '>' before the end of the file") }
                if c == UInt8(ascii: ">") { position += 1; return .start(name: name, attributes: attributes, selfClosing: false) }
                if c == UInt8(ascii: "/") {
                    guard try peek(1) == UInt8(ascii: ">") else { throw XMLError(offset: offset, expected: "'/>' closing the tag <\(name)") }
                    position += 2
                    return .start(name: name, attributes: attributes, selfClosing: true)
                }
                let attribute = try self.name()
                try skipSpace()
                guard try peek() == UInt8(ascii: "=") else { throw XMLError(offset: offset, expected: "'=' after the attribute \(attribute) of <\(name)>") }
                position += 1
                try skipSpace()
                guard let quote = try peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                    throw XMLError(offset: offset, expected: "a quoted value for the attribute \(attribute) of <\(name)>")
                }
                position += 1
                var bytes: [UInt8] = []
                while true {
                    guard let b = try peek() else { throw XMLError(offset: tokenOffset, expected: "the closing quote of the attribute \(attribute) of <\(name)>") }
                    position += 1
                    if b == quote { break }
                    if b == UInt8(ascii: "<") { throw XMLError(offset: offset - 1, expected: "no '<' inside the attribute \(attribute) of <\(name)>") }
                    if b == UInt8(ascii: "&") { try entity(into: &bytes) } else { bytes.append(b) }
                    if bytes.count > maxTokenBytes { throw XMLError(offset: tokenOffset, expected: "an attribute under \(maxTokenBytes >> 20) MB") }
                }
                attributes.append((attribute, String(decoding: bytes, as: UTF8.self)))
            }
        }
    }

    private mutating func text() throws(XMLError) -> String {
        var bytes: [UInt8] = []
        while let b = try peek(), b != UInt8(ascii: "<") {
            position += 1
            if b == UInt8(ascii: "&") { try entity(into: &bytes) } else { bytes.append(b) }
            if bytes.count > maxTokenBytes { throw XMLError(offset: tokenOffset, expected: "text under \(maxTokenBytes >> 20) MB") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func entity(into bytes: inout [UInt8]) throws(XMLError) {
        let start = offset - 1
        var name: [UInt8] = []
        while let b = try peek(), b != UInt8(ascii: ";") {
            position += 1
            name.append(b)
            if name.count > 10 { throw XMLError(offset: start, expected: "an entity (&amp; &lt; &gt; &quot; &apos; &#N;) ending in ';'") }
        }
        guard try peek() == UInt8(ascii: ";") else { throw XMLError(offset: start, expected: "an entity ending in ';'") }
        position += 1
        switch String(decoding: name, as: UTF8.self) {
        case "amp": bytes.append(UInt8(ascii: "&"))
        case "lt": bytes.append(UInt8(ascii: "<"))
        case "gt": bytes.append(UInt8(ascii: ">"))
        case "quot": bytes.append(UInt8(ascii: "\""))
        case "apos": bytes.append(UInt8(ascii: "'"))
        case let reference where reference.hasPrefix("#"):
            let digits = reference.dropFirst()
            let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            guard let value, let scalar = Unicode.Scalar(value) else { throw XMLError(offset: start, expected: "a valid character reference, found &\(reference);") }
            bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
        case let other:
            throw XMLError(offset: start, expected: "one of &amp; &lt; &gt; &quot; &apos; &#N;, found &\(other.prefix(10));")
        }
    }

    private mutating func name() throws(XMLError) -> String {
        var bytes: [UInt8] = []
        while let b = try peek(), !(b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == UInt8(ascii: ">") || b == UInt8(ascii: "/")
                                   || b == UInt8(ascii: "=") || b == UInt8(ascii: "<") || b == UInt8(ascii: "\"") || b == UInt8(ascii: "'")) {
            bytes.append(b)
            position += 1
            if bytes.count > 256 { throw XMLError(offset: offset, expected: "a name under 256 bytes") }
        }
        guard !bytes.isEmpty else { throw XMLError(offset: offset, expected: "an element or attribute name") }
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func skipSpace() throws(XMLError) {
        while let b = try peek(), b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { position += 1 }
    }
}
