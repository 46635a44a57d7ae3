// A small DEFLATE compressor: LZ77 matching over a 32 KiB window with hash chains, coded with the
// fixed Huffman tables (RFC 1951 §3.2.6), wrapped as a zlib stream. Not zlib's ratio, but real
// compression that any inflater (ours, zlib's) reads.

extension Zlib {
    /// Compresses `data` into a zlib stream. `maxChainLength` trades speed for ratio.
    public static func deflate(_ data: [UInt8], maxChainLength: Int = 32) -> [UInt8] {
        var writer = BitWriter()
        writer.bytes.reserveCapacity(data.count / 2 + 64)
        writer.bytes.append(0x78)  // CMF: deflate, 32 KiB window
        writer.bytes.append(0x01)  // FLG: fastest level; (0x7801 % 31 == 0)
        writer.write(1, bitCount: 1)  // BFINAL: one block
        writer.write(1, bitCount: 2)  // BTYPE 01: fixed Huffman
        data.withUnsafeBufferPointer { input in
            LZ77.encode(input, maxChainLength: maxChainLength, writer: &writer)
        }
        writer.writeFixedLiteral(256)
        writer.flush()
        let adler = Adler32.checksum(data)
        writer.bytes.append(contentsOf: [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)])
        return writer.bytes
    }
}

private struct BitWriter {
    var bytes: [UInt8] = []
    var buffer: UInt64 = 0
    var count = 0

    /// Writes `value`'s low bits, least significant first (deflate's order for non-Huffman fields).
    mutating func write(_ value: Int, bitCount: Int) {
        buffer |= UInt64(value) << UInt64(count)
        count += bitCount
        while count >= 8 {
            bytes.append(UInt8(buffer & 0xFF))
            buffer >>= 8
            count -= 8
        }
    }

    /// Huffman codes go most significant bit first, so they are reversed before the LSB-first write.
    mutating func writeCode(_ code: Int, length: Int) {
        var reversed = 0
        var code = code
        for _ in 0..<length { reversed = reversed << 1 | code & 1; code >>= 1 }
        write(reversed, bitCount: length)
    }

    mutating func writeFixedLiteral(_ symbol: Int) {
        switch symbol {
        case 0..<144: writeCode(0x30 + symbol, length: 8)
        case 144..<256: writeCode(0x190 + symbol - 144, length: 9)
        case 256..<280: writeCode(symbol - 256, length: 7)
        default: writeCode(0xC0 + symbol - 280, length: 8)
        }
    }

    mutating func writeMatch(length: Int, distance: Int) {
        var lengthIndex = 28
        while LZ77.lengthBase[lengthIndex] > length { lengthIndex -= 1 }
        writeFixedLiteral(257 + lengthIndex)
        write(length - LZ77.lengthBase[lengthIndex], bitCount: LZ77.lengthExtra[lengthIndex])
        var distanceIndex = 29
        while LZ77.distanceBase[distanceIndex] > distance { distanceIndex -= 1 }
        writeCode(distanceIndex, length: 5)
        write(distance - LZ77.distanceBase[distanceIndex], bitCount: LZ77.distanceExtra[distanceIndex])
    }

    mutating func flush() {
        if count > 0 { bytes.append(UInt8(buffer & 0xFF)) }
        buffer = 0
        count = 0
    }
}

private enum LZ77 {
    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
                               1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    static let windowSize = 32768
    static let hashBits = 15

    static func encode(_ input: UnsafeBufferPointer<UInt8>, maxChainLength: Int, writer: inout BitWriter) {
        let count = input.count
        var head = [Int32](repeating: -1, count: 1 << hashBits)
        var previous = [Int32](repeating: -1, count: windowSize)
        func hash(_ at: Int) -> Int {
            let value = UInt32(input[at]) << 16 | UInt32(input[at + 1]) << 8 | UInt32(input[at + 2])
            return Int((value &* 2_654_435_761) >> UInt32(32 - hashBits))
        }
        func insert(_ at: Int) {
            guard at + 2 < count else { return }
            let key = hash(at)
            previous[at & (windowSize - 1)] = head[key]
            head[key] = Int32(at)
        }
        var position = 0
        while position < count {
            var bestLength = 0, bestDistance = 0
            if position + 2 < count {
                var candidate = Int(head[hash(position)])
                var chain = maxChainLength
                let maxLength = min(258, count - position)
                while candidate >= 0, position - candidate <= windowSize, chain > 0 {
                    if input[candidate + bestLength] == input[position + bestLength] || bestLength == 0 {
                        var length = 0
                        while length < maxLength, input[candidate + length] == input[position + length] { length += 1 }
                        if length > bestLength {
                            bestLength = length
                            bestDistance = position - candidate
                            if length == maxLength { break }
                        }
                    }
                    let next = Int(previous[candidate & (windowSize - 1)])
                    if next >= candidate { break }
                    candidate = next
                    chain -= 1
                }
            }
            if bestLength >= 3 {
                writer.writeMatch(length: bestLength, distance: bestDistance)
                for offset in 0..<bestLength { insert(position + offset) }
                position += bestLength
            } else {
                writer.writeFixedLiteral(Int(input[position]))
                insert(position)
                position += 1
            }
        }
    }
}
