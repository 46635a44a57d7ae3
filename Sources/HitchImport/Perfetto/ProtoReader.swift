// The protobuf wire format, as much as a trace importer needs: fields one after another (tag =
// number << 3 | wire type), varints, fixed 32/64-bit values and length-delimited bytes. Unknown
// fields are skipped by their wire type, so fields that later Android releases add are never an
// error. Every error names the byte offset (within the file, via `base`) and what was expected.

struct ProtoField {
    enum Value {
        case varint(UInt64)
        case fixed64(UInt64)
        case fixed32(UInt32)
        /// Length-delimited: the bytes' range in the reader's buffer.
        case bytes(Range<Int>)
    }
    var number: UInt32
    var value: Value

    var uint64: UInt64 {
        switch value {
        case .varint(let v), .fixed64(let v): v
        case .fixed32(let v): UInt64(v)
        case .bytes: 0
        }
    }
    /// int64/int32 fields (two's complement in the varint).
    var int64: Int64 { Int64(bitPattern: uint64) }
    var bool: Bool { uint64 != 0 }
}

struct ProtoError: Error {
    var offset: UInt64
    var expected: String
}

/// Reads the fields of one message held in `bytes[range]`; `base` is the file offset of `bytes[0]`.
struct ProtoReader {
    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var position: Int
    let end: Int
    let base: UInt64

    init(_ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, base: UInt64) {
        self.bytes = bytes
        position = range.lowerBound
        end = range.upperBound
        self.base = base
    }

    /// A reader of a length-delimited field's contents (an embedded message).
    func message(_ range: Range<Int>) -> ProtoReader { ProtoReader(bytes, range: range, base: base) }

    var offset: UInt64 { base + UInt64(position) }

    mutating func next() throws(ProtoError) -> ProtoField? {
        guard position < end else { return nil }
        let tagOffset = position
        let tag = try varint()
        let number = UInt32(truncatingIfNeeded: tag >> 3)
        guard number > 0, tag >> 3 <= 536_870_911 else {
            throw ProtoError(offset: base + UInt64(tagOffset), expected: "a field tag with a field number from 1 to 2^29-1, found \(tag >> 3)")
        }
        switch tag & 7 {
        case 0:
            return ProtoField(number: number, value: .varint(try varint()))
        case 1:
            guard end - position >= 8 else { throw ProtoError(offset: offset, expected: "8 bytes of a fixed64 field \(number), found \(end - position)") }
            var value: UInt64 = 0
            for i in 0..<8 { value |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
            position += 8
            return ProtoField(number: number, value: .fixed64(value))
        case 2:
            let lengthOffset = position
            let length = try varint()
            guard length <= UInt64(end - position) else {
                throw ProtoError(offset: base + UInt64(lengthOffset),
                                 expected: "field \(number) of \(length) bytes within its message (\(end - position) bytes left)")
            }
            let start = position
            position += Int(length)
            return ProtoField(number: number, value: .bytes(start..<position))
        case 5:
            guard end - position >= 4 else { throw ProtoError(offset: offset, expected: "4 bytes of a fixed32 field \(number), found \(end - position)") }
            var value: UInt32 = 0
            for i in 0..<4 { value |= UInt32(bytes[position + i]) << (8 * UInt32(i)) }
            position += 4
            return ProtoField(number: number, value: .fixed32(value))
        default:
            // Groups (3, 4) are deprecated and never in traces; 6 and 7 do not exist.
            throw ProtoError(offset: base + UInt64(tagOffset), expected: "wire type 0, 1, 2 or 5 for field \(number), found \(tag & 7)")
        }
    }

    private mutating func varint() throws(ProtoError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        let start = position
        while position < end {
            let byte = bytes[position]
            position += 1
            if shift == 63 && byte > 1 { break }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift > 63 { break }
        }
        throw ProtoError(offset: base + UInt64(start), expected: "a varint of at most 10 bytes ending within its message")
    }

    /// The next value of a packed repeated varint field read with a reader over its bytes, or nil at
    /// their end.
    mutating func nextPacked() throws(ProtoError) -> UInt64? {
        position < end ? try varint() : nil
    }

    /// A string field's text (invalid UTF-8 repaired).
    func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
