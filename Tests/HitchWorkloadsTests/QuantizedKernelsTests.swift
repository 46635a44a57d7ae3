import CHitchKernels
import Foundation
import HitchAlgorithms
import Testing
@testable import HitchWorkloads

/// The quantized kernels of CHitchKernels, every instruction-set version the CPU runs: each gives
/// the portable C version's floats to the bit, and the products as they were before the kernels
/// were rewritten for speed (a fixture of their outputs).
struct QuantizedKernelsTests {
    /// The kernels by id: the eight ggml types, and q4_0 in llama.cpp's repacked order.
    static let kernelIDs: [(name: String, id: Int32, type: GGMLType)] =
        [GGMLType.q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q4_K, .q5_K, .q6_K].map { ($0.name, Int32($0.rawValue), $0) }
        + [("q4_0 (rows of 8)", HITCH_Q4_0_ROWS8, .q4_0)]

    /// Random blocks whose f16 scales are finite: the top exponent bit of each is cleared, so scales
    /// range over normal and subnormal halves and zero.
    static func randomRows(_ type: GGMLType, rows: Int, columns: Int, generator: inout SeededGenerator) -> [UInt8] {
        let rowBytes = type.rowBytes(columns: columns)
        var bytes = (0..<(rows * rowBytes)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let scaleOffsets: [Int] = switch type {
        case .q6_K: [208]
        case .q4_1, .q5_1, .q4_K, .q5_K: [0, 2]
        default: [0]
        }
        for block in stride(from: 0, to: bytes.count, by: type.blockBytes) {
            for offset in scaleOffsets { bytes[block + offset + 1] &= 0x3B }
        }
        return bytes
    }

    /// `kernel`'s products; `interleaved`: on the rows interleaved as the q4_0 rows-of-8 kernels read them.
    static func run(_ kernel: hitch_matvec_fn, _ weights: [UInt8], rows: Int, columns: Int, type: GGMLType, _ x: QuantizedVector,
                    interleaved: Bool = false) -> [UInt32] {
        var y = [Float](repeating: .nan, count: rows)
        var weights = weights
        if interleaved {
            let done = weights.withUnsafeMutableBytes { hitch_interleave_q4_0_rows8($0.baseAddress!, type.rowBytes(columns: columns), rows, columns / 32) }
            precondition(done != 0)
        }
        weights.withUnsafeBytes { raw in
            y.withUnsafeMutableBufferPointer {
                kernel(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), type.rowBytes(columns: columns), rows, columns / type.blockSize,
                       x.ggml, $0.baseAddress!)
            }
        }
        return y.map(\.bitPattern)
    }

    @Test("the versions are named best first, and this CPU runs the portable one and the chosen one")
    func versions() {
        #expect(QuantizedKernels.all == ["avx512vnni", "avx512", "avxvnni", "avx2", "portable"])
        #expect(QuantizedKernels.available.contains("portable"))
        #expect(QuantizedKernels.available.contains(QuantizedKernels.instructionSet))
        #expect(QuantizedKernels.capProblem == nil)
    }

    @Test("every version gives the portable version's floats to the bit: any row count, both float orders", arguments: kernelIDs.map(\.name))
    func everyVersionIsThePortableOne(name: String) throws {
        let (_, id, type) = try #require(Self.kernelIDs.first { $0.name == name })
        var generator = SeededGenerator(seed: UInt64(id) &* 7919)
        let shapes = [(1, 256), (2, 512), (3, 256), (4, 768), (7, 1024), (8, 256), (9, 512), (16, 256), (21, 1536), (37, 512), (24, 1536), (40, 4096)]
        // The interleaved q4_0 kernels take whole groups of 8 rows.
        for (rows, columns) in shapes where id != HITCH_Q4_0_ROWS8 || rows % 8 == 0 {
            let weights = Self.randomRows(type, rows: rows, columns: columns, generator: &generator)
            // Activations of every size, zero runs included (a zero block quantizes to scale 0).
            var x = (0..<columns).map { _ in generator.nextSigned() * (generator.next() % 3 == 0 ? 200 : 1) }
            for i in 0..<min(64, columns) { x[i] = 0 }
            let xq = QuantizedVector(capacity: columns)
            x.withUnsafeBufferPointer { xq.quantize8($0.baseAddress!, count: columns); xq.quantizeK($0.baseAddress!, count: columns) }
            for batched: Int32 in [0, 1] {
                xq.ggml.pointee.q4_K_gemm = batched
                xq.ggml.pointee.q6_K_tiled = batched
                let interleaved = id == HITCH_Q4_0_ROWS8
                let portable = Self.run(try #require(hitch_kernel("portable", id)), weights, rows: rows, columns: columns, type: type, xq,
                                        interleaved: interleaved)
                #expect(!portable.contains(Float.nan.bitPattern))
                if interleaved { #expect(portable == Self.rowsOfEightReference(weights, rows: rows, columns: columns, xq)) }
                for isa in QuantizedKernels.available where isa != "portable" {
                    let y = Self.run(try #require(hitch_kernel(isa, id)), weights, rows: rows, columns: columns, type: type, xq,
                                     interleaved: interleaved)
                    #expect(y == portable, "\(name) \(isa), \(rows) x \(columns), batched \(batched): \(y.map(Float.init(bitPattern:))) vs \(portable.map(Float.init(bitPattern:)))")
                }
            }
        }
    }

    @Test("every version of the q8_0/q8_1 activation quantizer gives the portable one's bytes: NaN, infinity, ties, zero blocks, subnormals")
    func quantizer8Versions() throws {
        let versions = try QuantizedKernels.available.map { isa in (isa, try #require(QuantizedKernels.quantizer8(isa))) }
        try Self.expectVersionsAgree(try #require(QuantizedKernels.quantizer8("portable")), versions, seed: 0x5138_3051) { kind, i, v, rng in
            switch kind {
            case 1: i % 32 == 0 ? 127 : Float(Int(rng.next() % 255) - 127) / 2   // scale 1, halves: ties
            case 4: (i / 32) % 3 == 0 ? 0 : v                // zero blocks
            default: v * GGUFTests.subnormalScale            // subnormal inputs and scales
            }
        } compare: { a, e, count, label in
            #expect(Self.sameBytes(a.values, e.values, count), "\(label): values")
            #expect(Self.sameBytes(a.offsets, e.offsets, count / 4), "\(label): offsets")
            #expect(Self.sameBytes(a.block_offsets, e.block_offsets, count / 32), "\(label): block offsets")
            #expect(Self.sameBytes(a.scales, e.scales, count / 32), "\(label): scales")
            #expect(Self.sameBytes(a.sums, e.sums, count / 32), "\(label): sums")
        }
    }

    /// Whether `count` values at `a` and at `b` are the same bytes (floats by their bits: NaN is NaN).
    static func sameBytes<T>(_ a: UnsafePointer<T>, _ b: UnsafePointer<T>, _ count: Int) -> Bool {
        let bytes = count * MemoryLayout<T>.stride
        return UnsafeRawBufferPointer(start: a, count: bytes).elementsEqual(UnsafeRawBufferPointer(start: b, count: bytes))
    }

    /// Every version of an activation quantizer against the portable one, on 1024 values of each
    /// case that stresses it: plain values in [-1000, 1000] (case 0), NaN (2) and infinities (3)
    /// among them, and the quantizer's own cases 1, 4 and 5 from `special` (given the case, the
    /// value's index, a plain value and the generator). `compare` gets each version's output, the
    /// portable one's, the value count and a label naming the version and the case.
    static func expectVersionsAgree(_ portable: hitch_quantize_fn, _ versions: [(String, hitch_quantize_fn)], seed: UInt64,
                                    special: (_ kind: Int, _ index: Int, _ plain: Float, _ rng: inout SeededGenerator) -> Float,
                                    compare: (_ actual: hitch_q8_activations, _ expected: hitch_q8_activations, _ count: Int, _ label: String) -> Void) throws {
        let count = 1024
        var rng = SeededGenerator(seed: seed)
        for kind in 0..<6 {
            let x: [Float] = (0..<count).map { i in
                let v = Float(Int(rng.next() % 2_000_001) - 1_000_000) / 1000
                switch kind {
                case 0: return v
                case 2: return rng.next() % 50 == 0 ? .nan : v
                case 3: return rng.next() % 300 == 0 ? (rng.next() % 2 == 0 ? .infinity : -.infinity) : v
                default: return special(kind, i, v, &rng)
                }
            }
            let expected = QuantizedVector(capacity: count), actual = QuantizedVector(capacity: count)
            x.withUnsafeBufferPointer { portable($0.baseAddress!, count, expected.ggml) }
            for (isa, quantize) in versions {
                x.withUnsafeBufferPointer { quantize($0.baseAddress!, count, actual.ggml) }
                compare(actual.ggml.pointee, expected.ggml.pointee, count, "\(isa), case \(kind)")
            }
        }
    }

    struct Fixture: Decodable {
        struct Products: Decodable { let type: String; let weights: String; let y: [UInt32]; let yBatched: [UInt32] }
        let rows: Int
        let columns: Int
        let x: String
        let types: [Products]
    }

    @Test("every version gives the products of the kernels before their rewrite, to the bit")
    func productsAsBefore() throws {
        let fixture: Fixture = try llmFixture("kernel-products.json")
        let xBytes = try #require(Data(base64Encoded: fixture.x))
        let x = xBytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(x.count == fixture.columns)
        let xq = QuantizedVector(capacity: fixture.columns)
        x.withUnsafeBufferPointer { xq.quantize8($0.baseAddress!, count: fixture.columns); xq.quantizeK($0.baseAddress!, count: fixture.columns) }
        #expect(fixture.types.count == 8)
        for products in fixture.types {
            let type = try #require(GGMLType(name: products.type))
            let weights = [UInt8](try #require(Data(base64Encoded: products.weights)))
            for (batched, expected) in [(Int32(0), products.y), (1, products.yBatched)] {
                xq.ggml.pointee.q4_K_gemm = batched
                xq.ggml.pointee.q6_K_tiled = batched
                for isa in QuantizedKernels.available {
                    let y = Self.run(try #require(hitch_kernel(isa, Int32(type.rawValue))), weights, rows: fixture.rows, columns: fixture.columns,
                                     type: type, xq)
                    #expect(y == expected, "\(products.type) \(isa), batched \(batched)")
                }
            }
        }
    }

    /// q4_0 in llama.cpp's repacked order, in Swift from ggml's block layout: per row, per block the
    /// integer sum of (q - 8) x, times the product of the two f16 scales, each block fused into the
    /// running total (the order the rows-of-8 kernels gave before they read the interleaved layout).
    static func rowsOfEightReference(_ weights: [UInt8], rows: Int, columns: Int, _ xq: QuantizedVector) -> [UInt32] {
        var expected: [UInt32] = []
        for r in 0..<rows {
            var total: Float = 0
            for b in 0..<(columns / 32) {
                let block = Array(weights[(r * columns / 32 + b) * 18..<((r * columns / 32 + b) * 18 + 18)])
                var sum = 0
                for i in 0..<32 {
                    let q = i < 16 ? Int(block[2 + i] & 15) : Int(block[2 + i - 16] >> 4)
                    sum += (q - 8) * Int(xq.ggml.pointee.values[32 * b + i])
                }
                let d = Float(Float16(bitPattern: UInt16(block[0]) | UInt16(block[1]) << 8)) * xq.ggml.pointee.scales[b]
                total = total.addingProduct(Float(sum), d)   // fused, as vfmadd
            }
            expected.append(total.bitPattern)
        }
        return expected
    }

    @Test("q4_0 in llama.cpp's repacked order is each row's exact block sums times d * d_x, fused in one float")
    func q4_0RowsOfEight() throws {
        var generator = SeededGenerator(seed: 11)
        let rows = 16, columns = 512
        let weights = Self.randomRows(.q4_0, rows: rows, columns: columns, generator: &generator)
        let x = (0..<columns).map { _ in generator.nextSigned() }
        let xq = QuantizedVector(capacity: columns)
        x.withUnsafeBufferPointer { xq.quantize8($0.baseAddress!, count: columns) }
        let expected = Self.rowsOfEightReference(weights, rows: rows, columns: columns, xq)
        for isa in QuantizedKernels.available {
            #expect(Self.run(try #require(hitch_kernel(isa, HITCH_Q4_0_ROWS8)), weights, rows: rows, columns: columns, type: .q4_0, xq,
                             interleaved: true) == expected, "\(isa)")
        }
        // vec_dot's order (eight lanes per row) rounds differently: close, not equal.
        let lanes = Self.run(try #require(hitch_kernel("portable", Int32(GGMLType.q4_0.rawValue))), weights, rows: rows, columns: columns, type: .q4_0, xq)
        #expect(lanes != expected)
        #expect(zip(lanes, expected).allSatisfy { abs(Float(bitPattern: $0) - Float(bitPattern: $1)) <= 1e-4 * max(1, abs(Float(bitPattern: $1))) })
    }

    @Test("interleaving q4_0 rows eight at a time keeps the bytes: each row reads back as it was, the scales and nibbles where the layout puts them")
    func q4_0Interleaving() throws {
        var generator = SeededGenerator(seed: 12)
        let rows = 24, columns = 256, rowBytes = GGMLType.q4_0.rowBytes(columns: columns), blocks = columns / 32
        let weights = Self.randomRows(.q4_0, rows: rows, columns: columns, generator: &generator)
        var interleaved = weights
        #expect(interleaved.withUnsafeMutableBytes { hitch_interleave_q4_0_rows8($0.baseAddress!, rowBytes, rows, blocks) } == 1)
        #expect(interleaved != weights && interleaved.sorted() == weights.sorted())
        for r in 0..<rows {
            var row = [UInt8](repeating: 0, count: rowBytes)
            interleaved.withUnsafeBytes { source in row.withUnsafeMutableBytes { hitch_q4_0_rows8_row(source.baseAddress!, rowBytes, r, blocks, $0.baseAddress!) } }
            #expect(row == Array(weights[(r * rowBytes)..<((r + 1) * rowBytes)]), "row \(r)")
        }
        // Group 1, block 2 (144 bytes a block): row 3's scale at 2 * 3, its nibble bytes 4..7 at 16 + 32 + 4 * 3.
        let block = 8 * rowBytes + 144 * 2, source = (8 + 3) * rowBytes + 18 * 2
        #expect(Array(interleaved[(block + 6)..<(block + 8)]) == Array(weights[source..<(source + 2)]))
        #expect(Array(interleaved[(block + 16 + 32 + 12)..<(block + 16 + 32 + 16)]) == Array(weights[(source + 2 + 4)..<(source + 2 + 8)]))
    }

    @Test("a q4_0 matrix takes the repacked order where llama.cpp repacks it: rows a multiple of 8, not the token embedding")
    func q4_0OrderPerTensor() {
        #expect(MappedSegment.kernelType(.q4_0, rows: 1536, name: "blk.0.attn_q.weight") == HITCH_Q4_0_ROWS8)
        #expect(MappedSegment.kernelType(.q4_0, rows: 1540, name: "blk.0.attn_q.weight") == Int32(GGMLType.q4_0.rawValue))
        #expect(MappedSegment.kernelType(.q4_0, rows: 32000, name: "token_embd.weight") == Int32(GGMLType.q4_0.rawValue))
        #expect(MappedSegment.kernelType(.q4_0, rows: 32000, name: "output.weight") == HITCH_Q4_0_ROWS8)
        #expect(MappedSegment.kernelType(.q4_1, rows: 1536, name: "blk.0.attn_q.weight") == Int32(GGMLType.q4_1.rawValue))
    }
}
