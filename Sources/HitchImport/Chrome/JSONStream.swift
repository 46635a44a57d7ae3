#if canImport(Glibc)
import Glibc
#endif

// A streaming JSON reader for trace files from other tools. It reads the file in fixed-size chunks and
// parses one value at a time, so memory is bounded by the largest single value (capped), not by the
// file: a 2 GB trace-event array is read event by event. Hostile input gets a one-line error with its
// byte offset, never a crash: depth, string length and value size are all capped.

/// A parsed JSON value. Numbers keep their source text so integers round-trip exactly (UInt64 byte
/// counts, nanosecond timestamps written as microseconds with three decimals).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var stringValue: String? {
        switch self {
        case .string(let text): return text
        case .number(let text): return text
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .number(let text): return Double(text)
        case .string(let text): return Double(text)
        case .bool(let flag): return flag ? 1 : 0
        default: return nil
        }
    }

    /// An exact unsigned integer (number or decimal string, or "0x…" hex string); nil if not one.
    public var uint64Value: UInt64? {
        switch self {
        case .number(let text):
            if let value = UInt64(text) { return value }
            if let double = Double(text), double >= 0, double < 1.8e19, double == double.rounded() { return UInt64(double) }
            return nil
        case .string(let text):
            if text.hasPrefix("0x") || text.hasPrefix("0X") { return UInt64(text.dropFirst(2), radix: 16) }
            return UInt64(text)
        default: return nil
        }
    }

    public var int64Value: Int64? {
        switch self {
        case .number(let text), .string(let text):
            if let value = Int64(text) { return value }
            if let double = Double(text), abs(double) < 9.2e18, double == double.rounded() { return Int64(double) }
            return nil
        default: return nil
        }
    }
}

public struct JSONStreamError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var byteOffset: Int
    public var description: String { "\(message) at byte \(byteOffset)" }
}

/// Reads JSON from a file descriptor (or bytes in memory) one value at a time.
public struct JSONStream {
    public struct Limits: Sendable {
        public var maxDepth = 64
        public var maxStringBytes = 1 << 20
        /// The most bytes one value read by `readValue` may span.
        public var maxValueBytes = 16 << 20
        public init() {}
    }

    private let fd: Int32
    private var buffer: [UInt8]
    private var position = 0
    private var filled = 0
    private var consumedBefore = 0      // bytes of the file before buffer[0]
    private var atEnd = false
    private let limits: Limits
    private var valueStart = 0

    public init(fileDescriptor: Int32, chunkBytes: Int = 1 << 20, limits: Limits = Limits()) {
        self.fd = fileDescriptor
        self.buffer = [UInt8](repeating: 0, count: chunkBytes)
        self.limits = limits
    }

    public init(bytes: [UInt8], limits: Limits = Limits()) {
        self.fd = -1
        self.buffer = bytes
        self.filled = bytes.count
        self.atEnd = true
        self.limits = limits
    }

    /// The offset in the file of the next unread byte.
    public var byteOffset: Int { consumedBefore + position }

    // MARK: Bytes

    private mutating func refill() throws {
        guard !atEnd, fd >= 0 else { atEnd = true; return }
        consumedBefore += filled
        position = 0
        filled = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw JSONStreamError(message: "read failed (errno \(errno))", byteOffset: consumedBefore)
            }
            if count == 0 { atEnd = true }
            filled = count
            return
        }
    }

    private mutating func peekByte() throws -> UInt8? {
        if position >= filled {
            try refill()
            if position >= filled { return nil }
        }
        return buffer[position]
    }

    private mutating func nextByte() throws -> UInt8? {
        guard let byte = try peekByte() else { return nil }
        position += 1
        return byte
    }

    private func fail(_ message: String) -> JSONStreamError {
        JSONStreamError(message: message, byteOffset: byteOffset)
    }

    /// Skips whitespace and returns the next significant byte without consuming it (nil at end).
    public mutating func peekSignificant() throws -> UInt8? {
        while let byte = try peekByte() {
            switch byte {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return byte
            }
        }
        return nil
    }

    public mutating func expect(_ byte: UInt8, _ what: String) throws {
        guard try peekSignificant() == byte else { throw fail("expected \(what)") }
        position += 1
    }

    /// Consumes `byte` if it is next (after whitespace).
    public mutating func consume(_ byte: UInt8) throws -> Bool {
        guard try peekSignificant() == byte else { return false }
        position += 1
        return true
    }

    // MARK: Values

    /// Reads one complete value (bounded by `Limits`).
    public mutating func readValue() throws -> JSONValue {
        valueStart = byteOffset
        return try value(depth: 0)
    }

    /// Reads one value and discards it, without building it (any size, still depth-limited).
    public mutating func skipValue() throws {
        try skip(depth: 0)
    }

    private mutating func checkSize() throws {
        if byteOffset - valueStart > limits.maxValueBytes {
            throw fail("a single JSON value is larger than \(limits.maxValueBytes >> 20) MB")
        }
    }

    private mutating func value(depth: Int) throws -> JSONValue {
        guard depth < limits.maxDepth else { throw fail("JSON nested deeper than \(limits.maxDepth) levels") }
        guard let byte = try peekSignificant() else { throw fail("unexpected end of file") }
        switch byte {
        case UInt8(ascii: "{"):
            position += 1
            var members: [(key: String, value: JSONValue)] = []
            if try consume(UInt8(ascii: "}")) { return .object(members) }
            repeat {
                try checkSize()
                guard try peekSignificant() == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let key = try string()
                try expect(UInt8(ascii: ":"), "':'")
                members.append((key, try value(depth: depth + 1)))
            } while try consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"), "',' or '}'")
            return .object(members)
        case UInt8(ascii: "["):
            position += 1
            var elements: [JSONValue] = []
            if try consume(UInt8(ascii: "]")) { return .array(elements) }
            repeat {
                try checkSize()
                elements.append(try value(depth: depth + 1))
            } while try consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return .array(elements)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try number())
        default:
            throw fail("unexpected character '\(printable(byte))'")
        }
    }

    private mutating func skip(depth: Int) throws {
        guard depth < limits.maxDepth else { throw fail("JSON nested deeper than \(limits.maxDepth) levels") }
        guard let byte = try peekSignificant() else { throw fail("unexpected end of file") }
        switch byte {
        case UInt8(ascii: "{"):
            position += 1
            if try consume(UInt8(ascii: "}")) { return }
            repeat {
                guard try peekSignificant() == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                try skipString()
                try expect(UInt8(ascii: ":"), "':'")
                try skip(depth: depth + 1)
            } while try consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"), "',' or '}'")
        case UInt8(ascii: "["):
            position += 1
            if try consume(UInt8(ascii: "]")) { return }
            repeat { try skip(depth: depth + 1) } while try consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "]"), "',' or ']'")
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw fail("unexpected character '\(printable(byte))'")
        }
    }

    private func printable(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? String(UnicodeScalar(byte)) : "0x" + String(byte, radix: 16)
    }

    private mutating func literal(_ word: StaticString) throws {
        let bytes = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for expected in bytes {
            guard try nextByte() == expected else { throw fail("invalid literal (expected \(word))") }
        }
    }

    private mutating func number() throws -> String {
        var text: [UInt8] = []
        while let byte = try peekByte() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                text.append(byte)
                position += 1
                if text.count > 64 { throw fail("number longer than 64 characters") }
            default:
                return try validNumber(text)
            }
        }
        return try validNumber(text)
    }

    private func validNumber(_ bytes: [UInt8]) throws -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard Double(text) != nil else { throw fail("invalid number '\(text)'") }
        return text
    }

    private mutating func string() throws -> String {
        position += 1  // opening quote
        var bytes: [UInt8] = []
        while true {
            guard let byte = try nextByte() else { throw fail("unterminated string") }
            if bytes.count > limits.maxStringBytes { throw fail("string longer than \(limits.maxStringBytes >> 10) kB") }
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: bytes, as: UTF8.self)   // invalid UTF-8 becomes U+FFFD
            case UInt8(ascii: "\\"):
                guard let escape = try nextByte() else { throw fail("unterminated escape") }
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by \uDC00-DFFF; otherwise it becomes U+FFFD.
                        if try peekByte() == UInt8(ascii: "\\") {
                            position += 1
                            guard try nextByte() == UInt8(ascii: "u") else { throw fail("invalid escape after surrogate") }
                            let low = try hex4()
                            scalar = (0xDC00...0xDFFF).contains(low) ? 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD
                        } else {
                            scalar = 0xFFFD
                        }
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        scalar = 0xFFFD
                    }
                    bytes.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8))
                default:
                    throw fail("invalid escape '\\\(printable(escape))'")
                }
            case 0x00..<0x20:
                throw fail("control character in string")
            default:
                bytes.append(byte)
            }
        }
    }

    private mutating func skipString() throws {
        position += 1
        while true {
            guard let byte = try nextByte() else { throw fail("unterminated string") }
            if byte == UInt8(ascii: "\"") { return }
            if byte == UInt8(ascii: "\\") {
                guard try nextByte() != nil else { throw fail("unterminated escape") }
            } else if byte < 0x20 {
                throw fail("control character in string")
            }
        }
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = try nextByte() else { throw fail("unterminated \\u escape") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
        }
        return value
    }

    /// Reads an object key (the next value must be a string).
    public mutating func readKey() throws -> String {
        guard try peekSignificant() == UInt8(ascii: "\"") else { throw fail("expected a string key") }
        let key = try string()
        try expect(UInt8(ascii: ":"), "':'")
        return key
    }
}
