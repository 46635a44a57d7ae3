// One weight matrix in one storage format, plus the row kernels that read it. Storage is two planes,
// allocated once: `values` (f32 / f16 / int8 / pal4 nibbles) and `tables` (f16 block scales, or pal4
// lookup tables). Kernels read exactly `byteCount` bytes for a full matrix-vector product.

#if canImport(Glibc)
import Glibc
#endif
import CHitchKernels

@inline(__always) func load16(_ pointer: UnsafePointer<Float>) -> SIMD16<Float> {
    UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Float>.self)
}

@inline(__always) func dotF32(_ w: UnsafePointer<Float>, _ x: UnsafePointer<Float>, _ count: Int) -> Float {
    var a0 = SIMD16<Float>(), a1 = SIMD16<Float>()
    var i = 0
    while i < count {
        a0 = a0.addingProduct(load16(w + i), load16(x + i))
        a1 = a1.addingProduct(load16(w + (i &+ 16)), load16(x + (i &+ 16)))
        i &+= 32
    }
    return (a0 + a1).sum()
}

/// A matrix the decode ops can multiply: the synthetic model's `WeightMatrix` (planes it owns) or a
/// GGUF file's `MappedMatrix` (ggml blocks read in place from the mapping).
protocol DecodeMatrix: AnyObject, Sendable {
    var rows: Int { get }
    var columns: Int { get }
    /// Bytes a full matrix-vector product reads.
    var byteCount: Int { get }
    /// Bytes of one row (the embedding lookup reads one).
    var rowByteCount: Int { get }
    /// How `multiply` wants the activations quantized (`QuantizedVector`).
    var activationQuantization: ActivationQuantization { get }
    func multiply(rows range: Range<Int>, x: UnsafePointer<Float>, quantizedX: QuantizedVector, y: UnsafeMutablePointer<Float>)
    func dequantizeRow(_ row: Int, into out: UnsafeMutablePointer<Float>)
}

enum ActivationQuantization {
    /// The kernel reads f32 activations.
    case none
    /// int16 blocks of 32 with a float scale (the synthetic q8_0 kernel, 15-bit precision).
    case int16
    /// int8 blocks of 32 with an f16 scale (and f16 sum), as ggml's q8_0/q8_1, so GGUF models see
    /// the activations llama.cpp's quantized matmuls see.
    case ggml8
    /// int8 blocks of 256 with a float scale and per-16 sums, as ggml's q8_K (the K-quants).
    case ggmlK
    /// Both: a stacked matrix whose segments mix 32- and 256-weight blocks.
    case ggml8AndK
}

public final class WeightMatrix: DecodeMatrix, @unchecked Sendable {
    // @unchecked: the planes are written only while the matrix is being built (before it is shared)
    // and read-only afterwards.
    public let format: WeightFormat
    public let rows: Int
    public let columns: Int
    let values: UnsafeMutableRawPointer
    let tables: UnsafeMutablePointer<UInt16>
    let tableCount: Int
    let valueBytes: Int

    public var byteCount: Int { format.bytes(rows: rows, columns: columns) }
    var rowByteCount: Int { format.bytes(rows: 1, columns: columns) }
    var activationQuantization: ActivationQuantization { usesQuantizedInput ? .int16 : .none }
    var blocksPerRow: Int { columns / WeightFormat.blockSize }

    public init(format: WeightFormat, rows: Int, columns: Int) {
        precondition(columns % 64 == 0, "columns must be a multiple of 64")
        self.format = format; self.rows = rows; self.columns = columns
        let valueBytes: Int
        switch format {
        case .f32: valueBytes = rows * columns * 4; tableCount = 0
        case .f16: valueBytes = rows * columns * 2; tableCount = 0
        case .q8_0: valueBytes = rows * columns; tableCount = rows * columns / WeightFormat.blockSize
        case .pal4:
            valueBytes = rows * columns / 2
            tableCount = 16 * ((rows + WeightFormat.pal4RowsPerTable - 1) / WeightFormat.pal4RowsPerTable)
        }
        self.valueBytes = valueBytes
        values = LargePages.allocate(byteCount: valueBytes)
        tables = LargePages.allocate(byteCount: max(tableCount, 1) * 2).bindMemory(to: UInt16.self, capacity: max(tableCount, 1))
    }

    deinit {
        LargePages.deallocate(values, byteCount: valueBytes)
        LargePages.deallocate(UnsafeMutableRawPointer(tables), byteCount: max(tableCount, 1) * 2)
    }

    // MARK: Encoding

    /// Rows encoded together (pal4 shares one table per group; the other formats don't care).
    static let groupRows = WeightFormat.pal4RowsPerTable

    /// Encodes rows [firstRow, firstRow + rowCount) from f32 `source` (rowCount x columns, row-major).
    /// `firstRow` must be a multiple of `groupRows`, and rowCount `groupRows` except at the end.
    func encodeGroup(firstRow: Int, rowCount: Int, source: UnsafePointer<Float>) {
        let n = columns
        switch format {
        case .f32:
            (values.assumingMemoryBound(to: Float.self) + firstRow * n).update(from: source, count: rowCount * n)
        case .f16:
            let out = values.assumingMemoryBound(to: UInt16.self) + firstRow * n
            for i in 0..<(rowCount * n) { out[i] = floatToHalf(source[i]) }
        case .q8_0:
            let out = values.assumingMemoryBound(to: Int8.self) + firstRow * n
            let scales = tables + firstRow * blocksPerRow
            for block in 0..<(rowCount * blocksPerRow) {
                let x = source + block * 32
                var amax: Float = 0
                for j in 0..<32 { amax = max(amax, abs(x[j])) }
                let d = amax / 127
                let inverse: Float = d == 0 ? 0 : 1 / d
                scales[block] = floatToHalf(d)
                for j in 0..<32 { out[block * 32 + j] = Int8((x[j] * inverse).rounded()) }
            }
        case .pal4:
            encodePalettized(firstRow: firstRow, rowCount: rowCount, source: source)
        }
    }

    /// One 16-entry table per row group, spaced uniformly over the group's [min, max] (a linear
    /// palette: each value's index is arithmetic, so generating a 0.4 B-weight model stays fast).
    private func encodePalettized(firstRow: Int, rowCount: Int, source: UnsafePointer<Float>) {
        let count = rowCount * columns
        var low = Float.greatestFiniteMagnitude, high = -Float.greatestFiniteMagnitude
        for i in 0..<count { low = min(low, source[i]); high = max(high, source[i]) }
        let step = max((high - low) / 16, Float.leastNormalMagnitude)
        let table = tables + (firstRow / WeightFormat.pal4RowsPerTable) * 16
        for k in 0..<16 { table[k] = floatToHalf(low + (Float(k) + 0.5) * step) }
        let inverseStep = 1 / step
        @inline(__always) func index(_ value: Float) -> UInt8 {
            UInt8(min(15, max(0, Int((value - low) * inverseStep))))
        }
        // As ggml's q4_0: in each run of 32 weights, byte j holds weight j (low nibble) and weight
        // j + 16 (high nibble), so the kernel expands 16 bytes into two contiguous runs of 16 weights.
        let out = values.assumingMemoryBound(to: UInt8.self) + firstRow * columns / 2
        for run in 0..<(count / 32) {
            let x = source + run * 32
            for j in 0..<16 { out[run * 16 + j] = index(x[j]) | (index(x[j + 16]) << 4) }
        }
    }

    /// Builds the matrix from f32 rows (tests and small models); `source` is rows x columns.
    public convenience init(format: WeightFormat, rows: Int, columns: Int, from source: [Float]) {
        precondition(source.count == rows * columns)
        self.init(format: format, rows: rows, columns: columns)
        source.withUnsafeBufferPointer { buffer in
            var row = 0
            while row < rows {
                let count = min(Self.groupRows, rows - row)
                encodeGroup(firstRow: row, rowCount: count, source: buffer.baseAddress! + row * columns)
                row += count
            }
        }
    }

    // MARK: Reading

    /// Dequantizes row `row` into `out` (columns floats).
    func dequantizeRow(_ row: Int, into out: UnsafeMutablePointer<Float>) {
        let n = columns
        let o = UnsafeMutableRawPointer(out)
        switch format {
        case .f32:
            out.update(from: values.assumingMemoryBound(to: Float.self) + row * n, count: n)
        case .f16:
            let source = UnsafeRawPointer(values) + row * n * 2
            var i = 0
            while i < n {
                (o + i &* 4).storeBytes(of: loadHalves8(source + i &* 2), as: SIMD8<Float>.self)
                i &+= 8
            }
        case .q8_0:
            let source = UnsafeRawPointer(values) + row * n
            let scales = tables + row * blocksPerRow
            for block in 0..<blocksPerRow {
                let d = SIMD8<Float>(repeating: halfToFloat(scales[block]))
                for part in 0..<4 {
                    let q = (source + (block &* 32 &+ part &* 8)).loadUnaligned(as: SIMD8<Int8>.self)
                    var v = SIMD8<Float>()
                    for i in 0..<8 { v[i] = Float(q[i]) }
                    (o + (block &* 32 &+ part &* 8) &* 4).storeBytes(of: v * d, as: SIMD8<Float>.self)
                }
            }
        case .pal4:
            let source = values.assumingMemoryBound(to: UInt8.self) + row * n / 2
            let table = tables + (row / WeightFormat.pal4RowsPerTable) * 16
            for j in 0..<(n / 2) {
                let b = source[j], first = j / 16 * 32 + j % 16
                out[first] = halfToFloat(table[Int(b & 15)])
                out[first + 16] = halfToFloat(table[Int(b >> 4)])
            }
        }
    }

    /// Whether `multiply` reads the int16-quantized input.
    var usesQuantizedInput: Bool { format == .q8_0 }

    /// y[r] = dot(row r, x) for r in rows. `rows` must start at a multiple of 16 (pal4 table groups).
    /// `quantizedX` must hold `x` quantized (`QuantizedVector.quantize`) for q8_0.
    ///
    /// The f32, f16 and q8_0 kernels run two rows at a time, so each activation load feeds both
    /// rows, with two independent accumulators per row; products are fused multiply-adds (`addingProduct`).
    ///
    /// Each kernel prefetches the rows it will read next (the next pair, contiguous after this one)
    /// while it works on the current ones. Without that, a core only has the misses its out-of-order
    /// window happens to cover in flight: the quantized kernels spend more instructions per byte than
    /// f32, so their window covers fewer cache lines, and without the prefetch a core reads q8_0 from
    /// DRAM at under half the rate it reads f32 (docs/WORKLOADS.md gives the figures).
    func multiply(rows range: Range<Int>, x: UnsafePointer<Float>, quantizedX: QuantizedVector, y: UnsafeMutablePointer<Float>) {
        switch format {
        case .f32: multiplyRowsF32(UnsafeRawPointer(values), columns: columns, range, UnsafeRawPointer(x), y)
        case .f16: multiplyRowsF16(UnsafeRawPointer(values), columns: columns, range, UnsafeRawPointer(x), y)
        case .q8_0: multiplyQ8(range, quantizedX, y)
        case .pal4: multiplyPal4(range, x, y)
        }
    }

    /// q8_0 uses integer dot products: `x` is quantized once per op to int16 blocks of 32
    /// (`QuantizedVector`, 15-bit precision), so a block of a row is two vpmaddwd (16 multiplies and 8
    /// adds each), a vpaddd, a conversion and one fused multiply-add by the product of the two scales.
    private func multiplyQ8(_ range: Range<Int>, _ xq: QuantizedVector, _ y: UnsafeMutablePointer<Float>) {
        multiplyBlocks(range, xq, y, Q8Products(activations: UnsafeRawPointer(xq.values)))
    }

    /// The q8_0 driver: two rows at a time, `products` gives both rows' int32 lane sums for one
    /// block. Scales are combined eight blocks at a time (vcvtph2ps of eight f16 weight
    /// scales times eight activation scales), so each block only broadcasts its factor.
    @inline(__always)
    private func multiplyBlocks(_ range: Range<Int>, _ xq: QuantizedVector, _ y: UnsafeMutablePointer<Float>, _ products: Q8Products) {
        let blockBytes = Q8Products.blockBytes
        let blocks = blocksPerRow, rowBytes = blocks &* blockBytes
        // Prefetch whole pairs at least 4 KB ahead: short rows (q8_0 at dim 1536 is 1536 bytes) would
        // otherwise leave too little in flight to cover the memory latency.
        let aheadRows = 2 &* max(1, (4096 &+ 2 &* rowBytes &- 1) / (2 &* rowBytes))
        let xs = UnsafeRawPointer(xq.scales)
        var row = range.lowerBound
        while row < range.upperBound {
            let pair = row &+ 1 < range.upperBound
            let w0 = UnsafeRawPointer(values) + row &* rowBytes
            let w1 = pair ? w0 + rowBytes : w0
            let s0 = UnsafeRawPointer(tables + row &* blocks)
            let s1 = pair ? s0 + blocks &* 2 : s0
            let next = w0 + aheadRows &* rowBytes, nextScales = s0 + aheadRows &* blocks &* 2
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>(), b0 = SIMD8<Float>(), b1 = SIMD8<Float>()
            var block = 0
            while block < blocks {
                let group = min(8, blocks &- block)
                var c0 = SIMD8<Float>(), c1 = SIMD8<Float>()
                if group == 8 {
                    let activation = load8(xs + block &* 4)
                    c0 = loadHalves8(s0 + block &* 2) * activation
                    c1 = loadHalves8(s1 + block &* 2) * activation
                } else {
                    for k in 0..<group {
                        let activation = xq.scales[block &+ k]
                        c0[k] = halfToFloat(s0.load(fromByteOffset: (block &+ k) &* 2, as: UInt16.self)) * activation
                        c1[k] = halfToFloat(s1.load(fromByteOffset: (block &+ k) &* 2, as: UInt16.self)) * activation
                    }
                }
                prefetch(nextScales + block &* 4)
                for k in 0..<group {
                    let b = block &+ k
                    prefetch(next + b &* 2 &* blockBytes)
                    let (p0, p1) = products.products(w0 + b &* blockBytes, w1 + b &* blockBytes, block: b)
                    // Alternate accumulators so consecutive FMAs don't wait on each other.
                    if k & 1 == 0 {
                        a0 = a0.addingProduct(toFloat(p0), SIMD8(repeating: c0[k]))
                        b0 = b0.addingProduct(toFloat(p1), SIMD8(repeating: c1[k]))
                    } else {
                        a1 = a1.addingProduct(toFloat(p0), SIMD8(repeating: c0[k]))
                        b1 = b1.addingProduct(toFloat(p1), SIMD8(repeating: c1[k]))
                    }
                }
                block &+= group
            }
            y[row] = (a0 + a1).sum()
            if pair { y[row &+ 1] = (b0 + b1).sum() }
            row &+= 2
        }
    }

    /// pal4: the 16-entry f16 table lives in two registers (low bytes, high bytes); a byte shuffle
    /// (vpshufb, see `paletteLookup`) turns 16 indices into 16 halves, then vcvtph2ps and FMAs.
    private func multiplyPal4(_ range: Range<Int>, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>) {
        let rowBytes = columns / 2
        let xr = UnsafeRawPointer(x)
        var group = -1
        var lowBytes = SIMD16<UInt8>(), highBytes = SIMD16<UInt8>()
        for row in range {
            let rowGroup = row / WeightFormat.pal4RowsPerTable
            if rowGroup != group {
                group = rowGroup
                let table = tables + rowGroup * 16
                for k in 0..<16 {
                    lowBytes[k] = UInt8(truncatingIfNeeded: table[k])
                    highBytes[k] = UInt8(truncatingIfNeeded: table[k] >> 8)
                }
            }
            let w = UnsafeRawPointer(values) + row &* rowBytes
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>()
            var i = 0
            while i < rowBytes {
                if i & 63 == 0 { prefetch(w + (2 &* rowBytes &+ i)) }
                let b = (w + i).loadUnaligned(as: SIMD16<UInt8>.self)
                let v = paletteLookup(lowBytes, highBytes, b & 15, b &>> 4)
                let xb = xr + i &* 8
                a0 = a0.addingProduct(halvesToFloat(v.lowLow, v.lowHigh, upper: false), load8(xb))
                a1 = a1.addingProduct(halvesToFloat(v.lowLow, v.lowHigh, upper: true), load8(xb + 32))
                a0 = a0.addingProduct(halvesToFloat(v.highLow, v.highHigh, upper: false), load8(xb + 64))
                a1 = a1.addingProduct(halvesToFloat(v.highLow, v.highHigh, upper: true), load8(xb + 96))
                i &+= 16
            }
            y[row] = (a0 + a1).sum()
        }
    }
}

/// q8_0's integer dot products of a block of two rows with the quantized activations.
struct Q8Products {
    /// The quantized activations (`QuantizedVector.values`): 32 int16 words (64 bytes) a block.
    let activations: UnsafeRawPointer
    static var blockBytes: Int { 32 }

    /// A block's activations: its first 16 words and its last 16.
    @inline(__always)
    func activationHalves(block: Int) -> (SIMD16<Int16>, SIMD16<Int16>) {
        let xb = activations + block &* 64
        return (xb.loadUnaligned(as: SIMD16<Int16>.self), (xb + 32).loadUnaligned(as: SIMD16<Int16>.self))
    }

    @inline(__always)
    func products(_ q0: UnsafeRawPointer, _ q1: UnsafeRawPointer, block: Int) -> (SIMD8<Int32>, SIMD8<Int32>) {
        let (xl, xh) = activationHalves(block: block)
        let p0 = multiplyAddPairs(widenSigned(q0.loadUnaligned(as: SIMD16<Int8>.self)), xl)
            &+ multiplyAddPairs(widenSigned((q0 + 16).loadUnaligned(as: SIMD16<Int8>.self)), xh)
        let p1 = multiplyAddPairs(widenSigned(q1.loadUnaligned(as: SIMD16<Int8>.self)), xl)
            &+ multiplyAddPairs(widenSigned((q1 + 16).loadUnaligned(as: SIMD16<Int8>.self)), xh)
        return (p0, p1)
    }
}

/// Table lookups of two index vectors (values 0..<16) in a 16-entry table of halves split into low
/// and high bytes. Kept out of line on purpose: inlined, the optimizer scalarizes the lookups into 64
/// byte loads; out of line, each lane loop becomes one vpshufb (after a range check of the indices).
@inline(never)
func paletteLookup(_ lowBytes: SIMD16<UInt8>, _ highBytes: SIMD16<UInt8>, _ first: SIMD16<UInt8>, _ second: SIMD16<UInt8>)
    -> (lowLow: SIMD16<UInt8>, lowHigh: SIMD16<UInt8>, highLow: SIMD16<UInt8>, highHigh: SIMD16<UInt8>) {
    var a = SIMD16<UInt8>(), b = SIMD16<UInt8>(), c = SIMD16<UInt8>(), d = SIMD16<UInt8>()
    for i in 0..<16 { a[i] = lowBytes[Int(first[i])] }
    for i in 0..<16 { b[i] = highBytes[Int(first[i])] }
    for i in 0..<16 { c[i] = lowBytes[Int(second[i])] }
    for i in 0..<16 { d[i] = highBytes[Int(second[i])] }
    return (a, b, c, d)
}

/// Eight halves assembled from their low and high bytes (lanes 0..<8, or 8..<16 when `upper`), as floats.
@inline(__always)
func halvesToFloat(_ low: SIMD16<UInt8>, _ high: SIMD16<UInt8>, upper: Bool) -> SIMD8<Float> {
    let base = upper ? 8 : 0
    var r = SIMD8<Float>()
    for i in 0..<8 { r[i] = Float(Float16(bitPattern: UInt16(low[base &+ i]) | UInt16(high[base &+ i]) << 8)) }
    return r
}
