// A weight matrix read in place from a GGUF file's mapping, in ggml's block layout (scales interleaved
// with the quantized values), never copied. One matrix may be several tensors stacked by rows (the
// fused q|k|v and gate|up products of the decoder), each a segment with its own type.
//
// Quantized types take the activations as ggml does (`QuantizedVector.quantize8`: int8 blocks with an
// f16 scale), so a product equals llama.cpp's up to the order of the float additions:
//   q8_0: sum_blocks d_w * d_x * sum(q_w * q_x)
//   q4_0: sum_blocks d_w * d_x * sum((q_w - 8) * q_x)
//   q4_1: sum_blocks d_w * d_x * sum(q_w * q_x) + m_w * s_x     (w = d * q + m, s_x = d_x * sum q_x)

struct MappedSegment {
    let type: GGMLType
    let base: UnsafeRawPointer
    let firstRow: Int
    let rows: Int
    let rowBytes: Int
}

final class MappedMatrix: DecodeMatrix, @unchecked Sendable {
    // @unchecked: immutable after init; the mapping is read-only and kept alive by `file`.
    let rows: Int
    let columns: Int
    let segments: [MappedSegment]
    let file: GGUFFile

    /// Stacks `tensors` (each columns x rows in ggml order, equal columns) into one matrix.
    init(file: GGUFFile, tensors: [GGUFTensor]) throws {
        self.file = file
        guard let first = tensors.first else { throw GGUFError.invalid("an empty matrix") }
        columns = first.columns
        var segments: [MappedSegment] = []
        var row = 0
        for tensor in tensors {
            guard tensor.dimensions.count <= 2 else { throw GGUFError.invalid("tensor \(tensor.name) is not a matrix (\(tensor.dimensions))") }
            guard tensor.columns == columns else {
                throw GGUFError.invalid("tensor \(tensor.name) has rows of \(tensor.columns), expected \(columns)")
            }
            guard columns % 32 == 0 else { throw GGUFError.unsupportedModel("tensor \(tensor.name): rows of \(columns) are not a multiple of 32") }
            segments.append(MappedSegment(type: tensor.type, base: file.data(of: tensor), firstRow: row, rows: tensor.rows,
                                          rowBytes: tensor.type.rowBytes(columns: columns)))
            row += tensor.rows
        }
        rows = row
        self.segments = segments
        let types = Set(segments.map { $0.type == .f32 || $0.type == .f16 })
        guard types.count == 1 else { throw GGUFError.unsupportedModel("\(tensors.map(\.name)) mix float and quantized types") }
    }

    var byteCount: Int { segments.reduce(0) { $0 + $1.rows * $1.rowBytes } }
    var rowByteCount: Int { segments[0].rowBytes }
    var activationQuantization: ActivationQuantization {
        segments[0].type == .f32 || segments[0].type == .f16 ? .none : .ggml8
    }

    // @_optimize(speed): the real-model tests run in debug builds; unoptimized, a token took seconds.
    @_optimize(speed)
    func multiply(rows range: Range<Int>, x: UnsafePointer<Float>, quantizedX: QuantizedVector, y: UnsafeMutablePointer<Float>) {
        for segment in segments {
            let lower = max(range.lowerBound, segment.firstRow), upper = min(range.upperBound, segment.firstRow + segment.rows)
            guard lower < upper else { continue }
            let local = (lower - segment.firstRow)..<(upper - segment.firstRow)
            let out = y + segment.firstRow
            switch segment.type {
            case .f32: multiplyFloat(segment, local, x, out, half: false)
            case .f16: multiplyFloat(segment, local, x, out, half: true)
            case .q8_0: multiplyBlocks(segment, local, quantizedX, out, MappedQ8_0(xq: quantizedX))
            case .q4_0: multiplyBlocks(segment, local, quantizedX, out, MappedQ4_0(xq: quantizedX))
            case .q4_1: multiplyBlocks(segment, local, quantizedX, out, MappedQ4_1(xq: quantizedX))
            }
        }
    }

    private func multiplyFloat(_ segment: MappedSegment, _ range: Range<Int>, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, half: Bool) {
        let xr = UnsafeRawPointer(x)
        for row in range {
            let w = segment.base + row &* segment.rowBytes
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>()
            var i = 0
            if half {
                while i < columns {
                    a0 = a0.addingProduct(loadHalves8(w + i &* 2), load8(xr + i &* 4))
                    a1 = a1.addingProduct(loadHalves8(w + (i &+ 8) &* 2), load8(xr + (i &+ 8) &* 4))
                    i &+= 16
                }
            } else {
                while i < columns {
                    a0 = a0.addingProduct(load8(w + i &* 4), load8(xr + i &* 4))
                    a1 = a1.addingProduct(load8(w + (i &+ 8) &* 4), load8(xr + (i &+ 8) &* 4))
                    i &+= 16
                }
            }
            y[row] = (a0 + a1).sum()
        }
    }

    /// Two rows at a time; per block, the integer lane sums times d_w * d_x are accumulated in eight
    /// float lanes, and the kernel's additive term (q4_1's m_w * s_x) in a scalar.
    @inline(__always)
    private func multiplyBlocks<Kernel: MappedBlockKernel>(_ segment: MappedSegment, _ range: Range<Int>, _ xq: QuantizedVector,
                                                           _ y: UnsafeMutablePointer<Float>, _ kernel: Kernel) {
        let blocks = columns / 32, rowBytes = segment.rowBytes, blockBytes = Kernel.blockBytes
        let aheadRows = 2 &* max(1, (4096 &+ 2 &* rowBytes &- 1) / (2 &* rowBytes))
        var row = range.lowerBound
        while row < range.upperBound {
            let pair = row &+ 1 < range.upperBound
            let w0 = segment.base + row &* rowBytes
            let w1 = pair ? w0 + rowBytes : w0
            let next = w0 + aheadRows &* rowBytes
            var a0 = SIMD8<Float>(), b0 = SIMD8<Float>(), a1 = SIMD8<Float>(), b1 = SIMD8<Float>()
            var extra0: Float = 0, extra1: Float = 0
            var block = 0
            while block < blocks {
                prefetch(next + block &* 2 &* blockBytes)
                let (p0, p1) = kernel.products(w0 + block &* blockBytes, w1 + block &* blockBytes, block: block)
                let xs = xq.scales[block]
                let d0 = halfToFloat(w0.loadUnaligned(fromByteOffset: block &* blockBytes, as: UInt16.self)) * xs
                let d1 = halfToFloat(w1.loadUnaligned(fromByteOffset: block &* blockBytes, as: UInt16.self)) * xs
                if block & 1 == 0 {
                    a0 = a0.addingProduct(toFloat(p0), SIMD8(repeating: d0))
                    b0 = b0.addingProduct(toFloat(p1), SIMD8(repeating: d1))
                } else {
                    a1 = a1.addingProduct(toFloat(p0), SIMD8(repeating: d0))
                    b1 = b1.addingProduct(toFloat(p1), SIMD8(repeating: d1))
                }
                if Kernel.hasMinimum {
                    let s = xq.sums[block]
                    extra0 += halfToFloat(w0.loadUnaligned(fromByteOffset: block &* blockBytes &+ 2, as: UInt16.self)) * s
                    extra1 += halfToFloat(w1.loadUnaligned(fromByteOffset: block &* blockBytes &+ 2, as: UInt16.self)) * s
                }
                block &+= 1
            }
            y[row] = (a0 + a1).sum() + extra0
            if pair { y[row &+ 1] = (b0 + b1).sum() + extra1 }
            row &+= 2
        }
    }

    @_optimize(speed)
    func dequantizeRow(_ row: Int, into out: UnsafeMutablePointer<Float>) {
        guard let segment = segments.last(where: { $0.firstRow <= row }) else { return }
        let w = segment.base + (row - segment.firstRow) * segment.rowBytes
        switch segment.type {
        case .f32:
            for i in 0..<columns { out[i] = w.loadUnaligned(fromByteOffset: i * 4, as: Float.self) }
        case .f16:
            for i in 0..<columns { out[i] = halfToFloat(w.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self)) }
        case .q8_0:
            for block in 0..<(columns / 32) {
                let b = w + block * 34
                let d = halfToFloat(b.loadUnaligned(as: UInt16.self))
                for j in 0..<32 { out[block * 32 + j] = Float(b.load(fromByteOffset: 2 + j, as: Int8.self)) * d }
            }
        case .q4_0, .q4_1:
            let hasMinimum = segment.type == .q4_1
            let blockBytes = segment.type.blockBytes
            for block in 0..<(columns / 32) {
                let b = w + block * blockBytes
                let d = halfToFloat(b.loadUnaligned(as: UInt16.self))
                let m = hasMinimum ? halfToFloat(b.loadUnaligned(fromByteOffset: 2, as: UInt16.self)) : 0
                let qs = b + (hasMinimum ? 4 : 2)
                for j in 0..<16 {
                    let byte = qs.load(fromByteOffset: j, as: UInt8.self)
                    let low = Float(byte & 15), high = Float(byte >> 4)
                    out[block * 32 + j] = hasMinimum ? d * low + m : (low - 8) * d
                    out[block * 32 + j + 16] = hasMinimum ? d * high + m : (high - 8) * d
                }
            }
        }
    }
}

/// One ggml block type's integer products of a block of two rows with the int8 activations
/// (stored widened to int16). `q0`/`q1` point at the blocks (scale first).
protocol MappedBlockKernel {
    static var blockBytes: Int { get }
    static var hasMinimum: Bool { get }
    func products(_ q0: UnsafeRawPointer, _ q1: UnsafeRawPointer, block: Int) -> (SIMD8<Int32>, SIMD8<Int32>)
}

struct MappedQ8_0: MappedBlockKernel {
    let inner: Q8Products
    init(xq: QuantizedVector) { inner = Q8Products(activations: UnsafeRawPointer(xq.values)) }
    static var blockBytes: Int { 34 }
    static var hasMinimum: Bool { false }
    @inline(__always)
    func products(_ q0: UnsafeRawPointer, _ q1: UnsafeRawPointer, block: Int) -> (SIMD8<Int32>, SIMD8<Int32>) {
        inner.products(q0 + 2, q1 + 2, block: block)
    }
}

struct MappedQ4_0: MappedBlockKernel {
    let inner: Q4Products
    init(xq: QuantizedVector) {
        inner = Q4Products(activations: UnsafeRawPointer(xq.values), offsets: UnsafeRawPointer(xq.offsets),
                           nibbleMask: SIMD16(repeating: xq.nibbleMask), nibbleShift: xq.nibbleShift)
    }
    static var blockBytes: Int { 18 }
    static var hasMinimum: Bool { false }
    @inline(__always)
    func products(_ q0: UnsafeRawPointer, _ q1: UnsafeRawPointer, block: Int) -> (SIMD8<Int32>, SIMD8<Int32>) {
        inner.products(q0 + 2, q1 + 2, block: block)
    }
}

/// q4_1: the unsigned nibbles times the activations, with no offset (the minimum is added apart).
struct MappedQ4_1: MappedBlockKernel {
    let activations: UnsafeRawPointer
    let nibbleMask: SIMD16<Int16>
    let nibbleShift: Int16
    init(xq: QuantizedVector) {
        activations = UnsafeRawPointer(xq.values); nibbleMask = SIMD16(repeating: xq.nibbleMask); nibbleShift = xq.nibbleShift
    }
    static var blockBytes: Int { 20 }
    static var hasMinimum: Bool { true }
    @inline(__always)
    func products(_ q0: UnsafeRawPointer, _ q1: UnsafeRawPointer, block: Int) -> (SIMD8<Int32>, SIMD8<Int32>) {
        let xb = activations + block &* 64
        let xl = xb.loadUnaligned(as: SIMD16<Int16>.self), xh = (xb + 32).loadUnaligned(as: SIMD16<Int16>.self)
        // Low nibbles are weights 0..<16 of the block, high nibbles 16..<32 (ggml's order).
        let v0 = widenUnsigned((q0 + 4).loadUnaligned(as: SIMD16<UInt8>.self))
        let v1 = widenUnsigned((q1 + 4).loadUnaligned(as: SIMD16<UInt8>.self))
        let p0 = multiplyAddPairs(v0 & nibbleMask, xl) &+ multiplyAddPairs(v0 &>> nibbleShift, xh)
        let p1 = multiplyAddPairs(v1 & nibbleMask, xl) &+ multiplyAddPairs(v1 &>> nibbleShift, xh)
        return (p0, p1)
    }
}
