// A GGUF (version 2 and 3) reader: the header, every metadata key/value, the tensor infos, and the
// tensor data, read once onto 2 MB pages where memory allows (`LargePages.readFile`: with the file's
// 4 KB pages a pass over the weights takes a TLB miss every 4 KB and the hardware prefetchers stop at
// each page), else mapped with mmap; either way private and read-only, never converted, except
// that the q4_0 matrices the rows-of-8 kernels multiply are interleaved in place on first use
// (`interleavedQ4_0Rows8`). Every count and size
// the file claims is checked against the bytes that are actually there before anything is
// allocated for it, so a truncated or hostile file gives a `GGUFError` (one line), never a crash or
// a huge allocation.

#if canImport(Glibc)
import Glibc
#endif
import CHitchKernels
import Foundation
import Synchronization

public enum GGUFError: Error, CustomStringConvertible, Equatable {
    case cannotOpen(path: String, reason: String)
    case notGGUF(magic: UInt32)
    case unsupportedVersion(UInt32)
    case truncated(what: String, offset: Int)
    case invalid(String)
    case tensorOutsideFile(name: String, end: Int, fileSize: Int)
    case unsupportedTensorType(name: String, type: UInt32)
    case missingKey(String)
    case missingTensor(String)
    case unsupportedModel(String)

    /// One line, whatever the file put in the names it quotes.
    public var description: String {
        String(oneLine.map { $0.isNewline ? " " : $0 })
    }

    private var oneLine: String {
        switch self {
        case .cannotOpen(let path, let reason): return "cannot open \(path): \(reason)"
        case .notGGUF(let magic): return String(format: "not a GGUF file (magic 0x%08x, expected 0x46554747 'GGUF')", magic)
        case .unsupportedVersion(let version): return "unsupported GGUF version \(version) (2 and 3 are read)"
        case .truncated(let what, let offset): return "the GGUF file is truncated: \(what) at byte \(offset) runs past the end"
        case .invalid(let reason): return "invalid GGUF file: \(reason)"
        case .tensorOutsideFile(let name, let end, let fileSize):
            return "tensor \(name) ends at byte \(end), past the end of the file (\(fileSize) bytes)"
        case .unsupportedTensorType(let name, let type):
            return "tensor \(name) has type \(GGMLType.name(of: type)); supported: \(GGMLType.supportedNames)"
        case .missingKey(let key): return "the GGUF file has no metadata key \(key)"
        case .missingTensor(let name): return "the GGUF file has no tensor \(name)"
        case .unsupportedModel(let reason): return "unsupported model: \(reason)"
        }
    }
}

/// The ggml tensor types this decoder runs (ids as in ggml.h).
public enum GGMLType: UInt32, Sendable, CaseIterable {
    case f32 = 0
    case f16 = 1
    case q4_0 = 2
    case q4_1 = 3
    case q5_0 = 6
    case q5_1 = 7
    case q8_0 = 8
    case q4_K = 12
    case q5_K = 13
    case q6_K = 14
    case bf16 = 30

    /// Elements per block along a row.
    public var blockSize: Int {
        switch self {
        case .f32, .f16, .bf16: return 1
        case .q4_0, .q4_1, .q5_0, .q5_1, .q8_0: return 32
        case .q4_K, .q5_K, .q6_K: return 256
        }
    }

    /// Bytes per block: q4_0 = f16 scale + 16 bytes of nibbles; q4_1 = f16 scale, f16 minimum + 16
    /// bytes; q5_0 / q5_1 = those with 4 bytes of fifth bits; q8_0 = f16 scale + 32 int8. The
    /// K-quants (256 weights): q4_K = f16 scale and minimum, 12 bytes of 6-bit sub-block scales and
    /// minimums, 128 of nibbles; q5_K = q4_K + 32 bytes of fifth bits; q6_K = 128 bytes of low
    /// nibbles, 64 of top bit pairs, 16 int8 sub-block scales, f16 scale.
    public var blockBytes: Int {
        switch self {
        case .f32: return 4
        case .f16, .bf16: return 2
        case .q4_0: return 18
        case .q4_1: return 20
        case .q5_0: return 22
        case .q5_1: return 24
        case .q8_0: return 34
        case .q4_K: return 144
        case .q5_K: return 176
        case .q6_K: return 210
        }
    }

    /// Storage bits per weight (q4_K: 4.5, q5_K: 5.5, q6_K: 6.5625).
    public var bitsPerWeight: Double { Double(blockBytes * 8) / Double(blockSize) }

    /// Whether rows are plain numbers (the kernels take f32 activations) rather than quantized blocks.
    public var isFloat: Bool { self == .f32 || self == .f16 || self == .bf16 }

    /// Every type read, as named in messages.
    public static var supportedNames: String { allCases.map(\.name).joined(separator: ", ") }

    public var name: String { Self.name(of: rawValue) }

    /// Bytes of one row of `columns` elements (`columns` a multiple of `blockSize`).
    public func rowBytes(columns: Int) -> Int { columns / blockSize * blockBytes }

    static func name(of type: UInt32) -> String {
        let names: [UInt32: String] = [0: "f32", 1: "f16", 2: "q4_0", 3: "q4_1", 6: "q5_0", 7: "q5_1", 8: "q8_0", 9: "q8_1",
                                       10: "q2_K", 11: "q3_K", 12: "q4_K", 13: "q5_K", 14: "q6_K", 15: "q8_K", 30: "bf16"]
        return names[type] ?? "type \(type)"
    }
}

/// One metadata value, keeping its GGUF type.
public indirect enum GGUFValue: Equatable, Sendable {
    case uint8(UInt8), int8(Int8), uint16(UInt16), int16(Int16), uint32(UInt32), int32(Int32)
    case float32(Float), bool(Bool), string(String), uint64(UInt64), int64(Int64), float64(Double)
    /// Element type id and the elements.
    case array(UInt32, [GGUFValue])

    /// Any integer type, as Int (nil when it does not fit).
    public var integer: Int? {
        switch self {
        case .uint8(let v): return Int(v)
        case .int8(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int16(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint64(let v): return Int(exactly: v)
        case .int64(let v): return Int(v)
        default: return nil
        }
    }
    /// Any float or integer type, as Double.
    public var number: Double? {
        switch self {
        case .float32(let v): return Double(v)
        case .float64(let v): return v
        default: return integer.map(Double.init)
        }
    }
    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var bool: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var array: [GGUFValue]? { if case .array(_, let a) = self { return a } else { return nil } }
}

/// A tensor's description and its bytes inside the mapping.
public struct GGUFTensor: Sendable {
    public let name: String
    /// ggml order: dimensions[0] is the row length (columns), dimensions[1] the rows.
    public let dimensions: [Int]
    public let type: GGMLType
    /// Offset from the start of the tensor data section.
    public let offset: Int
    public let byteCount: Int
    public var elementCount: Int { dimensions.reduce(1, *) }
    public var columns: Int { dimensions[0] }
    public var rows: Int { elementCount / dimensions[0] }
}

/// A GGUF file in memory (read onto 2 MB pages, or mapped). Tensor data pointers stay valid while this object lives.
public final class GGUFFile: @unchecked Sendable {
    // @unchecked: every field but `interleavedOffsets` (a Mutex) is written during init only; the
    // mapping is read-only but for the interleaving that Mutex serializes.
    public let path: String
    public let version: UInt32
    public let metadata: [String: GGUFValue]
    /// Metadata keys in file order.
    public let keys: [String]
    public let tensors: [GGUFTensor]
    public let alignment: Int
    public let dataOffset: Int
    public let fileSize: Int
    private let base: UnsafeRawPointer
    /// Bytes mapped at `base` (the file's size, or more when read onto 2 MB pages).
    private let mappedBytes: Int
    private let tensorIndex: [String: Int]
    /// The data offsets of the tensors interleaved in place (`interleavedQ4_0Rows8`).
    private let interleavedOffsets = Mutex<Set<Int>>([])

    /// Largest count accepted for tensors or dimensions before checking them against the bytes left
    /// (a sanity bound; the real bound is the file size).
    static let maxDimensions = 4

    public convenience init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw GGUFError.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw GGUFError.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw GGUFError.cannotOpen(path: path, reason: "not a regular file") }
        let size = Int(info.st_size)
        guard size >= 24 else { throw GGUFError.truncated(what: "the header", offset: 0) }
        let base: UnsafeRawPointer, mappedBytes: Int
        if let copy = LargePages.readFile(fd: fd, size: size) {
            (base, mappedBytes) = copy
        } else {
            guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
                throw GGUFError.cannotOpen(path: path, reason: "mmap: \(String(cString: strerror(errno)))")
            }
            (base, mappedBytes) = (UnsafeRawPointer(mapped), size)
        }
        do {
            try self.init(path: path, base: base, size: size, mappedBytes: mappedBytes)
        } catch {
            munmap(UnsafeMutableRawPointer(mutating: base), mappedBytes)
            throw error
        }
    }

    /// A file's bytes given in memory (tests and fuzzing): copied into an anonymous mapping, so the
    /// object owns and unmaps it as it does a file's.
    convenience init(bytes: [UInt8], name: String = "<memory>") throws {
        guard bytes.count >= 24 else { throw GGUFError.truncated(what: "the header", offset: 0) }
        guard let mapped = mmap(nil, bytes.count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED else {
            throw GGUFError.cannotOpen(path: name, reason: "mmap: \(String(cString: strerror(errno)))")
        }
        bytes.withUnsafeBytes { mapped.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        do {
            try self.init(path: name, base: UnsafeRawPointer(mapped), size: bytes.count, mappedBytes: bytes.count)
        } catch {
            munmap(mapped, bytes.count)
            throw error
        }
    }

    private init(path: String, base: UnsafeRawPointer, size: Int, mappedBytes: Int) throws {
        self.path = path; self.base = base; fileSize = size; self.mappedBytes = mappedBytes
        var reader = GGUFReader(base: base, size: size)
        let magic: UInt32 = try reader.read("the magic")
        guard magic == 0x4655_4747 else { throw GGUFError.notGGUF(magic: magic) }
        version = try reader.read("the version")
        guard version == 2 || version == 3 else { throw GGUFError.unsupportedVersion(version) }
        let tensorCount: UInt64 = try reader.read("the tensor count")
        let keyCount: UInt64 = try reader.read("the metadata count")
        // A key/value takes at least 12 bytes (length + type), a tensor info at least 28.
        guard keyCount <= UInt64(reader.remaining / 12) else { throw GGUFError.invalid("\(keyCount) metadata entries cannot fit in \(size) bytes") }
        guard tensorCount <= UInt64(reader.remaining / 28) else { throw GGUFError.invalid("\(tensorCount) tensors cannot fit in \(size) bytes") }
        var metadata: [String: GGUFValue] = [:]
        var keys: [String] = []
        for _ in 0..<keyCount {
            let key = try reader.string("a metadata key")
            let type: UInt32 = try reader.read("the type of \(key)")
            let value = try reader.value(type: type, what: key, depth: 0)
            guard metadata.updateValue(value, forKey: key) == nil else { throw GGUFError.invalid("duplicate metadata key \(key)") }
            keys.append(key)
        }
        self.metadata = metadata; self.keys = keys
        var alignment = 32
        if let value = metadata["general.alignment"] {
            guard let a = value.integer, a > 0, a <= 1 << 20, a & (a - 1) == 0 else {
                throw GGUFError.invalid("general.alignment must be a power of two up to 1 MiB")
            }
            alignment = a
        }
        self.alignment = alignment
        struct Info { var name: String; var dimensions: [Int]; var type: GGMLType; var offset: Int }
        var infos: [Info] = []
        var names: [String: Int] = [:]
        for index in 0..<Int(tensorCount) {
            let name = try reader.string("a tensor name")
            let dimensionCount: UInt32 = try reader.read("the dimension count of \(name)")
            guard dimensionCount >= 1 && dimensionCount <= UInt32(Self.maxDimensions) else {
                throw GGUFError.invalid("tensor \(name) has \(dimensionCount) dimensions (1...\(Self.maxDimensions) are valid)")
            }
            var dimensions: [Int] = []
            var elements = 1
            for _ in 0..<dimensionCount {
                let d: UInt64 = try reader.read("a dimension of \(name)")
                guard d >= 1, d <= UInt64(Int32.max) else { throw GGUFError.invalid("tensor \(name) has a dimension of \(d)") }
                let (product, overflow) = elements.multipliedReportingOverflow(by: Int(d))
                guard !overflow, product <= size * 8 else { throw GGUFError.invalid("tensor \(name) claims more elements than the file can hold") }
                elements = product
                dimensions.append(Int(d))
            }
            let rawType: UInt32 = try reader.read("the type of \(name)")
            guard let type = GGMLType(rawValue: rawType) else { throw GGUFError.unsupportedTensorType(name: name, type: rawType) }
            guard dimensions[0] % type.blockSize == 0 else {
                throw GGUFError.invalid("tensor \(name): row length \(dimensions[0]) is not a multiple of the \(type.name) block (\(type.blockSize))")
            }
            let offset: UInt64 = try reader.read("the offset of \(name)")
            guard offset <= UInt64(size), Int(offset) % alignment == 0 else {
                throw GGUFError.invalid("tensor \(name) has offset \(offset) (must be aligned to \(alignment) and inside the file)")
            }
            guard names.updateValue(index, forKey: name) == nil else { throw GGUFError.invalid("duplicate tensor \(name)") }
            infos.append(Info(name: name, dimensions: dimensions, type: type, offset: Int(offset)))
        }
        let dataOffset = (reader.offset + alignment - 1) / alignment * alignment
        self.dataOffset = dataOffset
        tensors = try infos.map { info in
            let rows = info.dimensions.dropFirst().reduce(1, *)
            let byteCount = rows * info.type.rowBytes(columns: info.dimensions[0])
            let end = dataOffset + info.offset + byteCount
            guard end <= size else { throw GGUFError.tensorOutsideFile(name: info.name, end: end, fileSize: size) }
            return GGUFTensor(name: info.name, dimensions: info.dimensions, type: info.type, offset: info.offset, byteCount: byteCount)
        }
        tensorIndex = names
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), mappedBytes) }

    public func tensor(named name: String) -> GGUFTensor? { tensorIndex[name].map { tensors[$0] } }

    /// The first byte of a tensor's data (inside the read-only mapping; interleaved once
    /// `interleavedQ4_0Rows8` has been asked for it).
    public func data(of tensor: GGUFTensor) -> UnsafeRawPointer { base + dataOffset + tensor.offset }

    /// The data of q4_0 `tensor` (rows a multiple of 8) in the layout of the q4_0 rows-of-8 kernels
    /// (`hitch_interleave_q4_0_rows8`: eight rows' blocks together), rewritten in place in this
    /// file's private mapping the first time it is asked for, in the same bytes: no second copy of
    /// the weights (a file mapping's written pages become private copies; a read onto 2 MB pages
    /// stays on them, its protection changed on whole 2 MB pages). Later calls return the same
    /// bytes.
    func interleavedQ4_0Rows8(_ tensor: GGUFTensor) throws -> UnsafeRawPointer {
        precondition(tensor.type == .q4_0 && tensor.rows % 8 == 0)
        let data = data(of: tensor)
        try interleavedOffsets.withLock { done in
            guard !done.contains(tensor.offset) else { return }
            let start = Int(bitPattern: data), end = start + tensor.byteCount
            let mapped = Int(bitPattern: base)
            let onHugePages = mapped % LargePages.hugePageBytes == 0 && mappedBytes % LargePages.hugePageBytes == 0
            let granule = onHugePages ? LargePages.hugePageBytes : Int(sysconf(Int32(_SC_PAGESIZE)))
            let first = max(mapped, start / granule * granule), last = min(mapped + mappedBytes, (end + granule - 1) / granule * granule)
            let pages = UnsafeMutableRawPointer(bitPattern: first)!
            guard mprotect(pages, last - first, PROT_READ | PROT_WRITE) == 0 else {
                throw GGUFError.cannotOpen(path: path, reason: "mprotect: \(String(cString: strerror(errno)))")
            }
            defer { mprotect(pages, last - first, PROT_READ) }
            guard hitch_interleave_q4_0_rows8(UnsafeMutableRawPointer(mutating: data), tensor.type.rowBytes(columns: tensor.columns),
                                              tensor.rows, tensor.columns / 32) != 0 else {
                throw GGUFError.cannotOpen(path: path, reason: "out of memory interleaving \(tensor.name)")
            }
            done.insert(tensor.offset)
        }
        return data
    }

    // Typed metadata access with one-line errors.
    public func integer(_ key: String) throws -> Int {
        guard let value = metadata[key] else { throw GGUFError.missingKey(key) }
        guard let v = value.integer else { throw GGUFError.invalid("\(key) is not an integer") }
        return v
    }
    public func number(_ key: String) throws -> Double {
        guard let value = metadata[key] else { throw GGUFError.missingKey(key) }
        guard let v = value.number else { throw GGUFError.invalid("\(key) is not a number") }
        return v
    }
    public func string(_ key: String) throws -> String {
        guard let value = metadata[key] else { throw GGUFError.missingKey(key) }
        guard let v = value.string else { throw GGUFError.invalid("\(key) is not a string") }
        return v
    }
}

/// A bounds-checked little-endian cursor over the mapping.
struct GGUFReader {
    let base: UnsafeRawPointer
    let size: Int
    var offset = 0
    /// Arrays nest at most this deep (GGUF has no use for more; it bounds the recursion).
    static let maxDepth = 4

    var remaining: Int { size - offset }

    mutating func read<T: FixedWidthInteger>(_ what: @autoclosure () -> String) throws -> T {
        guard remaining >= MemoryLayout<T>.size else { throw GGUFError.truncated(what: what(), offset: offset) }
        let v = T(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += MemoryLayout<T>.size
        return v
    }

    mutating func string(_ what: @autoclosure () -> String) throws -> String {
        let start = offset
        let length: UInt64 = try read(what())
        guard length <= UInt64(remaining) else { throw GGUFError.truncated(what: what(), offset: start) }
        let bytes = UnsafeRawBufferPointer(start: base + offset, count: Int(length))
        offset += Int(length)
        return String(decoding: bytes, as: UTF8.self)
    }

    mutating func value(type: UInt32, what: String, depth: Int) throws -> GGUFValue {
        switch type {
        case 0: return .uint8(try read(what))
        case 1: return .int8(try read(what))
        case 2: return .uint16(try read(what))
        case 3: return .int16(try read(what))
        case 4: return .uint32(try read(what))
        case 5: return .int32(try read(what))
        case 6: return .float32(Float(bitPattern: try read(what)))
        case 7:
            let b: UInt8 = try read(what)
            guard b <= 1 else { throw GGUFError.invalid("\(what) is a bool of value \(b)") }
            return .bool(b == 1)
        case 8: return .string(try string(what))
        case 9:
            guard depth < Self.maxDepth else { throw GGUFError.invalid("\(what) nests arrays deeper than \(Self.maxDepth)") }
            let elementType: UInt32 = try read(what)
            let count: UInt64 = try read(what)
            // Every element takes at least one byte (strings 8), so the count is bounded by the bytes left.
            let minimum: UInt64 = elementType == 8 || elementType == 9 ? 8 : UInt64(max(1, Self.fixedSize(elementType) ?? 1))
            guard Self.fixedSize(elementType) != nil || elementType == 8 || elementType == 9 else {
                throw GGUFError.invalid("\(what) is an array of unknown type \(elementType)")
            }
            guard count <= UInt64(remaining) / minimum else { throw GGUFError.truncated(what: "the array \(what) (\(count) elements)", offset: offset) }
            var elements: [GGUFValue] = []
            elements.reserveCapacity(Int(count))
            for _ in 0..<count { elements.append(try value(type: elementType, what: what, depth: depth + 1)) }
            return .array(elementType, elements)
        case 10: return .uint64(try read(what))
        case 11: return .int64(try read(what))
        case 12: return .float64(Double(bitPattern: try read(what)))
        default: throw GGUFError.invalid("\(what) has unknown value type \(type)")
        }
    }

    static func fixedSize(_ type: UInt32) -> Int? {
        switch type {
        case 0, 1, 7: return 1
        case 2, 3: return 2
        case 4, 5, 6: return 4
        case 10, 11, 12: return 8
        default: return nil
        }
    }
}
