// A complete zlib/DEFLATE decoder (RFC 1950, RFC 1951): stored, fixed-Huffman and dynamic-Huffman
// blocks, in the canonical-code style of zlib's puff.c. Errors carry the byte offset.

public enum ZlibError: Error, Equatable, CustomStringConvertible {
    case truncated(byteOffset: Int)
    case badHeader(byteOffset: Int)
    case badBlock(String, byteOffset: Int)
    case checksumMismatch(expected: UInt32, actual: UInt32)
    case outputTooLarge(limit: Int)

    public var description: String {
        switch self {
        case .truncated(let offset): "zlib stream truncated at byte \(offset)"
        case .badHeader(let offset): "bad zlib header at byte \(offset)"
        case .badBlock(let why, let offset): "bad deflate block at byte \(offset): \(why)"
        case .checksumMismatch(let expected, let actual):
            "zlib Adler-32 mismatch: stream says \(String(expected, radix: 16)), data is \(String(actual, radix: 16))"
        case .outputTooLarge(let limit): "inflated data exceeds the \(limit)-byte limit"
        }
    }
}

public enum Zlib {
    /// Inflates a zlib stream (2-byte header, deflate data, Adler-32). `outputLimit` bounds
    /// the allocation, so a hostile stream cannot make us allocate without end.
    public static func inflate(_ stream: [UInt8], expectedSize: Int = 0, outputLimit: Int = 64 << 20) throws -> [UInt8] {
        guard stream.count >= 2 else { throw ZlibError.truncated(byteOffset: stream.count) }
        let cmf = stream[0], flg = stream[1]
        guard cmf & 0x0F == 8, cmf >> 4 <= 7, (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0, flg & 0x20 == 0 else {
            throw ZlibError.badHeader(byteOffset: 0)
        }
        var inflater = Inflater(input: stream, start: 2, outputLimit: outputLimit)
        inflater.output.reserveCapacity(expectedSize)
        try inflater.run()
        let trailer = inflater.alignedByteOffset
        guard trailer + 4 <= stream.count else { throw ZlibError.truncated(byteOffset: stream.count) }
        let expected = UInt32(stream[trailer]) << 24 | UInt32(stream[trailer + 1]) << 16
            | UInt32(stream[trailer + 2]) << 8 | UInt32(stream[trailer + 3])
        let actual = Adler32.checksum(inflater.output)
        guard expected == actual else { throw ZlibError.checksumMismatch(expected: expected, actual: actual) }
        return inflater.output
    }

    /// Inflates raw deflate data (no zlib wrapper).
    public static func inflateRaw(_ data: [UInt8], outputLimit: Int = 64 << 20) throws -> [UInt8] {
        var inflater = Inflater(input: data, start: 0, outputLimit: outputLimit)
        try inflater.run()
        return inflater.output
    }
}

/// A canonical Huffman decoding table: symbol counts per code length and symbols in code order.
private struct Huffman {
    var counts = [Int](repeating: 0, count: 16)
    var symbols: [Int]
    /// Codes up to `fastBits` long, indexed by the next input bits (LSB first): symbol << 4 | length;
    /// 0 where the code is longer (decoded bit by bit).
    var fast = [UInt16](repeating: 0, count: 1 << Huffman.fastBits)
    static let fastBits = 9

    /// Builds from code lengths; fails on an over-subscribed set (incomplete sets are allowed
    /// only where RFC 1951 permits a single code, which the decoder tolerates as zlib does).
    init(lengths: ArraySlice<Int>) throws {
        symbols = [Int](repeating: 0, count: lengths.count)
        for length in lengths { counts[length] += 1 }
        var left = 1
        for length in 1..<16 {
            left <<= 1
            left -= counts[length]
            if left < 0 { throw ZlibError.badBlock("over-subscribed Huffman code", byteOffset: -1) }
        }
        var offsets = [Int](repeating: 0, count: 16)
        for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
        for (symbol, length) in zip(0..., lengths) where length != 0 {
            symbols[offsets[length]] = symbol
            offsets[length] += 1
        }
        // Canonical codes in symbol order per length; reversed, because deflate sends Huffman
        // codes most significant bit first into an LSB-first bit stream.
        var nextCode = [Int](repeating: 0, count: 16)
        var code = 0
        for length in 1..<16 {
            code = (code + (length > 1 ? counts[length - 1] : 0)) << 1
            nextCode[length] = code
        }
        for (symbol, length) in zip(0..., lengths) where length != 0 && length <= Huffman.fastBits {
            let assigned = nextCode[length]
            nextCode[length] += 1
            var reversed = 0
            for bit in 0..<length { reversed |= (assigned >> bit & 1) << (length - 1 - bit) }
            var index = reversed
            while index < 1 << Huffman.fastBits {
                fast[index] = UInt16(symbol << 4 | length)
                index += 1 << length
            }
        }
    }
}

private struct Inflater {
    let input: [UInt8]
    var position: Int
    var bitBuffer: UInt64 = 0
    var bitCount = 0
    var output: [UInt8] = []
    let outputLimit: Int

    init(input: [UInt8], start: Int, outputLimit: Int) {
        self.input = input
        self.position = start
        self.outputLimit = outputLimit
    }

    /// The byte after the last consumed bit (where the zlib trailer starts).
    var alignedByteOffset: Int { position - bitCount / 8 }

    mutating func bits(_ count: Int) throws -> Int {
        while bitCount < count {
            guard position < input.count else { throw ZlibError.truncated(byteOffset: position) }
            bitBuffer |= UInt64(input[position]) << UInt64(bitCount)
            position += 1
            bitCount += 8
        }
        let value = Int(bitBuffer & ((1 << UInt64(count)) - 1))
        bitBuffer >>= UInt64(count)
        bitCount -= count
        return value
    }

    mutating func decode(_ table: Huffman) throws -> Int {
        // Fast path: top up the bit buffer without failing at the end of input, then one lookup.
        while bitCount < Huffman.fastBits, position < input.count {
            bitBuffer |= UInt64(input[position]) << UInt64(bitCount)
            position += 1
            bitCount += 8
        }
        let entry = Int(table.fast[Int(bitBuffer & UInt64((1 << Huffman.fastBits) - 1))])
        let length = entry & 15
        if length > 0, length <= bitCount {
            bitBuffer >>= UInt64(length)
            bitCount -= length
            return entry >> 4
        }
        var code = 0, first = 0, index = 0
        for length in 1..<16 {
            code |= try bits(1)
            let count = table.counts[length]
            if code - count < first { return table.symbols[index + (code - first)] }
            index += count
            first += count
            first <<= 1
            code <<= 1
        }
        throw ZlibError.badBlock("invalid Huffman code", byteOffset: position)
    }

    mutating func run() throws {
        var last = 0
        repeat {
            last = try bits(1)
            switch try bits(2) {
            case 0: try stored()
            case 1: try codes(literal: Self.fixedLiteral, distance: Self.fixedDistance)
            case 2: try dynamic()
            default: throw ZlibError.badBlock("reserved block type 3", byteOffset: position)
            }
        } while last == 0
    }

    mutating func stored() throws {
        bitBuffer = 0
        bitCount = 0
        guard position + 4 <= input.count else { throw ZlibError.truncated(byteOffset: position) }
        let length = Int(input[position]) | Int(input[position + 1]) << 8
        let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
        guard length == ~complement & 0xFFFF else {
            throw ZlibError.badBlock("stored length does not match its complement", byteOffset: position)
        }
        position += 4
        guard position + length <= input.count else { throw ZlibError.truncated(byteOffset: input.count) }
        guard output.count + length <= outputLimit else { throw ZlibError.outputTooLarge(limit: outputLimit) }
        output.append(contentsOf: input[position..<(position + length)])
        position += length
    }

    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
                               1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    static let fixedLiteral: Huffman = {
        var lengths = [Int](repeating: 8, count: 288)
        for symbol in 144..<256 { lengths[symbol] = 9 }
        for symbol in 256..<280 { lengths[symbol] = 7 }
        // The fixed code is complete by construction, so this cannot throw.
        return try! Huffman(lengths: lengths[...])
    }()
    static let fixedDistance: Huffman = try! Huffman(lengths: [Int](repeating: 5, count: 30)[...])

    mutating func codes(literal: Huffman, distance: Huffman) throws {
        while true {
            let symbol = try decode(literal)
            if symbol < 256 {
                guard output.count < outputLimit else { throw ZlibError.outputTooLarge(limit: outputLimit) }
                output.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let lengthIndex = symbol - 257
                guard lengthIndex < 29 else { throw ZlibError.badBlock("invalid length symbol", byteOffset: position) }
                let length = Self.lengthBase[lengthIndex] + (try bits(Self.lengthExtra[lengthIndex]))
                let distanceSymbol = try decode(distance)
                guard distanceSymbol < 30 else { throw ZlibError.badBlock("invalid distance symbol", byteOffset: position) }
                let back = Self.distanceBase[distanceSymbol] + (try bits(Self.distanceExtra[distanceSymbol]))
                guard back <= output.count else { throw ZlibError.badBlock("distance too far back", byteOffset: position) }
                guard output.count + length <= outputLimit else { throw ZlibError.outputTooLarge(limit: outputLimit) }
                var from = output.count - back
                for _ in 0..<length {
                    output.append(output[from])
                    from += 1
                }
            }
        }
    }

    static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    mutating func dynamic() throws {
        let literalCount = try bits(5) + 257
        let distanceCount = try bits(5) + 1
        let codeLengthCount = try bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else {
            throw ZlibError.badBlock("too many length or distance codes", byteOffset: position)
        }
        var lengths = [Int](repeating: 0, count: 320)
        for index in 0..<codeLengthCount { lengths[Self.codeLengthOrder[index]] = try bits(3) }
        for index in codeLengthCount..<19 { lengths[Self.codeLengthOrder[index]] = 0 }
        let lengthCode = try withOffset { try Huffman(lengths: lengths[0..<19]) }
        var index = 0
        while index < literalCount + distanceCount {
            var symbol = try decode(lengthCode)
            if symbol < 16 {
                lengths[index] = symbol
                index += 1
                continue
            }
            var repeated = 0
            if symbol == 16 {
                guard index > 0 else { throw ZlibError.badBlock("repeat with no previous length", byteOffset: position) }
                repeated = lengths[index - 1]
                symbol = 3 + (try bits(2))
            } else if symbol == 17 {
                symbol = 3 + (try bits(3))
            } else {
                symbol = 11 + (try bits(7))
            }
            guard index + symbol <= literalCount + distanceCount else {
                throw ZlibError.badBlock("too many code lengths", byteOffset: position)
            }
            for _ in 0..<symbol { lengths[index] = repeated; index += 1 }
        }
        guard lengths[256] != 0 else { throw ZlibError.badBlock("no end-of-block code", byteOffset: position) }
        let literal = try withOffset { try Huffman(lengths: lengths[0..<literalCount]) }
        let distance = try withOffset {
            try Huffman(lengths: lengths[literalCount..<(literalCount + distanceCount)])
        }
        try codes(literal: literal, distance: distance)
    }

    /// Fills in the byte offset of a table-construction error.
    func withOffset<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch ZlibError.badBlock(let why, _) {
            throw ZlibError.badBlock(why, byteOffset: position)
        }
    }
}
