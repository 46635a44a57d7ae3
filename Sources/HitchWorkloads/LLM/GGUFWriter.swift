// A GGUF v3 writer: metadata (typed values, or raw bytes for the readers' hostile-input tests), tensor
// infos, and tensor data streamed to the file (a 0.4 B-parameter f32 model is 1.6 GB, never held in
// memory). Uses the reader's type tables (`GGMLType`, `GGUFValue`), and the ggml reference quantizers
// for the block types. It writes the synthetic model for llama.cpp (`TransformerWeights.writeGGUF`),
// so both runtimes can be measured on the same weights.

#if canImport(Glibc)
import Glibc
#endif
import Foundation

public struct GGUFWriter {
    public struct Tensor {
        public var name: String
        /// ggml order: dimensions[0] is the row length.
        public var dimensions: [Int]
        /// The ggml type id (raw, so tests can write types the reader refuses).
        public var type: UInt32
        public var data: Payload
        public init(name: String, dimensions: [Int], type: UInt32, data: Payload) {
            self.name = name; self.dimensions = dimensions; self.type = type; self.data = data
        }
    }

    /// A tensor's bytes: held, or produced while writing (`produce` hands them over in pieces
    /// through its argument; their total must be `byteCount`).
    public enum Payload {
        case bytes([UInt8])
        case streamed(byteCount: Int, produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void)

        var byteCount: Int {
            switch self {
            case .bytes(let b): return b.count
            case .streamed(let count, _): return count
            }
        }
    }

    public var metadata: [(key: String, type: UInt32, value: [UInt8])] = []
    public var tensors: [Tensor] = []
    public var alignment = 32

    public init() {}

    static func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
    static func string(_ s: String) -> [UInt8] { le(UInt64(s.utf8.count)) + Array(s.utf8) }

    /// A metadata value as raw bytes of type `type` (hostile-input tests write malformed ones).
    public mutating func add(_ key: String, type: UInt32, _ bytes: [UInt8]) { metadata.append((key, type, bytes)) }
    public mutating func add(_ key: String, _ value: GGUFValue) { add(key, type: value.typeID, value.encoded) }
    public mutating func add(_ key: String, _ value: String) { add(key, .string(value)) }
    public mutating func add(_ key: String, uint32 value: UInt32) { add(key, .uint32(value)) }
    public mutating func add(_ key: String, float value: Float) { add(key, .float32(value)) }
    public mutating func add(_ key: String, strings: [String]) { add(key, .array(8, strings.map(GGUFValue.string))) }
    public mutating func add(_ key: String, int32s: [Int32]) { add(key, .array(5, int32s.map(GGUFValue.int32))) }

    public mutating func addTensor(_ name: String, dimensions: [Int], type: GGMLType, bytes: [UInt8]) {
        tensors.append(Tensor(name: name, dimensions: dimensions, type: type.rawValue, data: .bytes(bytes)))
    }

    /// Everything before the tensor data, padded to the alignment.
    func header() -> [UInt8] {
        var out = Array("GGUF".utf8) + Self.le(UInt32(3)) + Self.le(UInt64(tensors.count)) + Self.le(UInt64(metadata.count))
        for (key, type, value) in metadata { out += Self.string(key) + Self.le(type) + value }
        var offset = 0
        for t in tensors {
            out += Self.string(t.name) + Self.le(UInt32(t.dimensions.count)) + t.dimensions.flatMap { Self.le(UInt64($0)) }
            out += Self.le(t.type) + Self.le(UInt64(offset))
            offset = (offset + t.data.byteCount + alignment - 1) / alignment * alignment
        }
        while out.count % alignment != 0 { out.append(0) }
        return out
    }

    /// The whole file in memory (small files: tests).
    public func bytes() throws -> [UInt8] {
        var out = header()
        for t in tensors {
            switch t.data {
            case .bytes(let b): out += b
            case .streamed(_, let produce): try produce { out += $0 }
            }
            while out.count % alignment != 0 { out.append(0) }
        }
        return out
    }

    /// Writes the file at `path`, streaming each tensor's data.
    public func write(to path: String) throws {
        guard let file = fopen(path, "wb") else {
            throw GGUFError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        var closed = false
        defer { if !closed { fclose(file) } }
        func put(_ bytes: UnsafeRawBufferPointer) throws {
            guard bytes.count == 0 || fwrite(bytes.baseAddress, 1, bytes.count, file) == bytes.count else {
                throw GGUFError.cannotOpen(path: path, reason: "write: \(String(cString: strerror(errno)))")
            }
        }
        let header = header()
        try header.withUnsafeBytes { try put($0) }
        var written = header.count
        let zeros = [UInt8](repeating: 0, count: alignment)
        for t in tensors {
            var count = 0
            switch t.data {
            case .bytes(let b): try b.withUnsafeBytes { try put($0) }; count = b.count
            case .streamed(let expected, let produce):
                try produce { try put($0); count += $0.count }
                guard count == expected else { throw GGUFError.invalid("tensor \(t.name): wrote \(count) bytes, declared \(expected)") }
            }
            written += count
            let pad = (alignment - written % alignment) % alignment
            try zeros.withUnsafeBytes { try put(UnsafeRawBufferPointer(rebasing: $0[0..<pad])) }
            written += pad
        }
        closed = true
        guard fclose(file) == 0 else { throw GGUFError.cannotOpen(path: path, reason: "close: \(String(cString: strerror(errno)))") }
    }
}

extension GGUFValue {
    /// The GGUF value type id.
    var typeID: UInt32 {
        switch self {
        case .uint8: return 0
        case .int8: return 1
        case .uint16: return 2
        case .int16: return 3
        case .uint32: return 4
        case .int32: return 5
        case .float32: return 6
        case .bool: return 7
        case .string: return 8
        case .array: return 9
        case .uint64: return 10
        case .int64: return 11
        case .float64: return 12
        }
    }

    /// The value's bytes as GGUF stores them (after its type id).
    var encoded: [UInt8] {
        typealias W = GGUFWriter
        switch self {
        case .uint8(let v): return [v]
        case .int8(let v): return [UInt8(bitPattern: v)]
        case .uint16(let v): return W.le(v)
        case .int16(let v): return W.le(v)
        case .uint32(let v): return W.le(v)
        case .int32(let v): return W.le(v)
        case .float32(let v): return W.le(v.bitPattern)
        case .bool(let v): return [v ? 1 : 0]
        case .string(let s): return W.string(s)
        case .array(let type, let elements): return W.le(type) + W.le(UInt64(elements.count)) + elements.flatMap(\.encoded)
        case .uint64(let v): return W.le(v)
        case .int64(let v): return W.le(v)
        case .float64(let v): return W.le(v.bitPattern)
        }
    }
}

extension GGMLType {
    /// Encodes f32 values (a whole number of rows) in this type, as ggml's reference quantizers
    /// (quantize_row_*_ref) do.
    public func encode(_ values: UnsafeBufferPointer<Float>, into out: inout [UInt8]) {
        func half(_ v: Float) { let h = Float16(v).bitPattern; out.append(UInt8(h & 0xFF)); out.append(UInt8(h >> 8)) }
        switch self {
        case .f32:
            for v in values { let b = v.bitPattern; out += [UInt8(b & 0xFF), UInt8(b >> 8 & 0xFF), UInt8(b >> 16 & 0xFF), UInt8(b >> 24)] }
        case .f16:
            for v in values { half(v) }
        case .bf16, .q5_0, .q5_1, .q4_K, .q5_K, .q6_K:
            precondition(values.count % blockSize == 0)
            for start in stride(from: 0, to: values.count, by: blockSize) {
                encodeBlock(UnsafeBufferPointer(rebasing: values[start..<(start + blockSize)]), into: &out)
            }
        case .q8_0, .q4_0, .q4_1:
            precondition(values.count % 32 == 0)
            for start in stride(from: 0, to: values.count, by: 32) {
                let x = UnsafeBufferPointer(rebasing: values[start..<(start + 32)])
                switch self {
                case .q8_0:
                    var amax: Float = 0
                    for v in x { amax = max(amax, abs(v)) }
                    let d = amax / 127, inverse: Float = d == 0 ? 0 : 1 / d
                    half(d)
                    for v in x { out.append(UInt8(bitPattern: Int8((v * inverse).rounded()))) }
                case .q4_0:
                    // The value of largest magnitude maps to -8, so its sign is kept exactly.
                    var extreme: Float = 0
                    for v in x where abs(v) > abs(extreme) { extreme = v }
                    let d = extreme / -8, inverse: Float = d == 0 ? 0 : 1 / d
                    half(d)
                    for j in 0..<16 {
                        let lo = UInt8(min(15, max(0, Int(x[j] * inverse + 8.5))))
                        let hi = UInt8(min(15, max(0, Int(x[j + 16] * inverse + 8.5))))
                        out.append(lo | hi << 4)
                    }
                default:
                    var low = Float.greatestFiniteMagnitude, high = -Float.greatestFiniteMagnitude
                    for v in x { low = min(low, v); high = max(high, v) }
                    let d = (high - low) / 15, inverse: Float = d == 0 ? 0 : 1 / d
                    half(d); half(low)
                    for j in 0..<16 {
                        let lo = UInt8(min(15, max(0, Int((x[j] - low) * inverse + 0.5))))
                        let hi = UInt8(min(15, max(0, Int((x[j + 16] - low) * inverse + 0.5))))
                        out.append(lo | hi << 4)
                    }
                }
            }
        }
    }

    public func encode(_ values: [Float]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rowBytes(columns: values.count))
        values.withUnsafeBufferPointer { encode($0, into: &out) }
        return out
    }

    /// The type named as llama.cpp names it ("q4_K"), in any case ("q4_k").
    public init?(name: String) {
        guard let type = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = type
    }
}
