// The two checksums PNG needs: CRC-32 (chunks) and Adler-32 (zlib streams).

enum CRC32 {
    /// The table for the reflected polynomial 0xEDB88320 (ISO 3309, as PNG specifies).
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = (value & 1) != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// Continues a running CRC (start from 0) over `bytes`.
    static func update(_ crc: UInt32, _ bytes: some Sequence<UInt8>) -> UInt32 {
        var value = ~crc
        table.withUnsafeBufferPointer { table in
            for byte in bytes { value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8) }
        }
        return ~value
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 { update(0, bytes) }
}

enum Adler32 {
    static func checksum(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var index = 0
        // 5552 is the largest run before `b` could overflow 32 bits (zlib's NMAX).
        while index < bytes.count {
            let end = min(index + 5552, bytes.count)
            while index < end { a &+= UInt32(bytes[index]); b &+= a; index += 1 }
            a %= 65521; b %= 65521
        }
        return (b << 16) | a
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { checksum($0) }
    }
}
