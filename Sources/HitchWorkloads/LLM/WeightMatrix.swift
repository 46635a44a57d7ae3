// One weight matrix in one storage format, plus the row kernels that read it. Storage is two planes,
// allocated once: `values` (f32 / f16 / int8 / packed nibbles) and `tables` (f16 block scales, or pal4
// lookup tables). Kernels read exactly `byteCount` bytes for a full matrix-vector product.

#if canImport(Glibc)
import Glibc
#endif

@inline(__always) func load16(_ pointer: UnsafePointer<Float>) -> SIMD16<Float> {
    UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Float>.self)
}

@inline(__always) func dotF32(_ w: UnsafePointer<Float>, _ x: UnsafePointer<Float>, _ count: Int) -> Float {
    var a0 = SIMD16<Float>(), a1 = SIMD16<Float>()
    var i = 0
    while i < count {
        a0 += load16(w + i) * load16(x + i)
        a1 += load16(w + (i &+ 16)) * load16(x + (i &+ 16))
        i &+= 32
    }
    return (a0 + a1).sum()
}

public final class WeightMatrix: @unchecked Sendable {
    // @unchecked: the planes are written only while the matrix is being built (before it is shared)
    // and read-only afterwards.
    public let format: WeightFormat
    public let rows: Int
    public let columns: Int
    let values: UnsafeMutableRawPointer
    let tables: UnsafeMutablePointer<UInt16>
    let tableCount: Int

    public var byteCount: Int { format.bytes(rows: rows, columns: columns) }
    var blocksPerRow: Int { columns / WeightFormat.blockSize }

    public init(format: WeightFormat, rows: Int, columns: Int) {
        precondition(columns % 64 == 0, "columns must be a multiple of 64")
        self.format = format; self.rows = rows; self.columns = columns
        let valueBytes: Int
        switch format {
        case .f32: valueBytes = rows * columns * 4; tableCount = 0
        case .f16: valueBytes = rows * columns * 2; tableCount = 0
        case .q8_0: valueBytes = rows * columns; tableCount = rows * columns / WeightFormat.blockSize
        case .q4_0: valueBytes = rows * columns / 2; tableCount = rows * columns / WeightFormat.blockSize
        case .pal4:
            valueBytes = rows * columns / 2
            tableCount = 16 * ((rows + WeightFormat.pal4RowsPerTable - 1) / WeightFormat.pal4RowsPerTable)
        }
        values = UnsafeMutableRawPointer.allocate(byteCount: max(valueBytes, 64), alignment: 64)
        tables = UnsafeMutablePointer<UInt16>.allocate(capacity: max(tableCount, 1))
    }

    deinit {
        values.deallocate()
        tables.deallocate()
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
        case .q4_0:
            let out = values.assumingMemoryBound(to: UInt8.self) + firstRow * n / 2
            let scales = tables + firstRow * blocksPerRow
            for block in 0..<(rowCount * blocksPerRow) {
                let x = source + block * 32
                // As ggml: the value of largest magnitude maps to -8, so its sign is kept exactly.
                var extreme: Float = 0
                for j in 0..<32 where abs(x[j]) > abs(extreme) { extreme = x[j] }
                let d = extreme / -8
                let inverse: Float = d == 0 ? 0 : 1 / d
                scales[block] = floatToHalf(d)
                for j in 0..<16 {
                    let lo = UInt8(min(15, max(0, Int(x[j] * inverse + 8.5))))
                    let hi = UInt8(min(15, max(0, Int(x[j + 16] * inverse + 8.5))))
                    out[block * 16 + j] = lo | (hi << 4)
                }
            }
        case .pal4:
            encodePalettized(firstRow: firstRow, rowCount: rowCount, source: source)
        }
    }

    /// One 16-entry table per row group, spaced uniformly over the group's [min, max] (a linear
    /// palette: each value's index is arithmetic, so generating a 0.45 B-weight model stays fast).
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
        let out = values.assumingMemoryBound(to: UInt8.self) + firstRow * columns / 2
        for pair in 0..<(count / 2) {
            out[pair] = index(source[2 * pair]) | (index(source[2 * pair + 1]) << 4)
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
        switch format {
        case .f32:
            out.update(from: values.assumingMemoryBound(to: Float.self) + row * n, count: n)
        case .f16:
            let source = UnsafeRawPointer(values) + row * n * 2
            var i = 0
            while i < n {
                let h = (source + i * 2).loadUnaligned(as: SIMD16<UInt16>.self)
                UnsafeMutableRawPointer(out + i).storeBytes(of: halfToFloat(h), as: SIMD16<Float>.self)
                i += 16
            }
        case .q8_0:
            let source = UnsafeRawPointer(values) + row * n
            let scales = tables + row * blocksPerRow
            for block in 0..<blocksPerRow {
                let d = halfToFloat(scales[block])
                for half in 0..<2 {
                    let q = (source + block * 32 + half * 16).loadUnaligned(as: SIMD16<Int8>.self)
                    UnsafeMutableRawPointer(out + block * 32 + half * 16).storeBytes(of: widenToFloat(q) * d, as: SIMD16<Float>.self)
                }
            }
        case .q4_0:
            let source = UnsafeRawPointer(values) + row * n / 2
            let scales = tables + row * blocksPerRow
            for block in 0..<blocksPerRow {
                let d = halfToFloat(scales[block])
                let b = (source + block * 16).loadUnaligned(as: SIMD16<UInt8>.self)
                let lo = SIMD16<Int8>(truncatingIfNeeded: b & 0x0F) &- 8
                let hi = SIMD16<Int8>(truncatingIfNeeded: b &>> 4) &- 8
                UnsafeMutableRawPointer(out + block * 32).storeBytes(of: widenToFloat(lo) * d, as: SIMD16<Float>.self)
                UnsafeMutableRawPointer(out + block * 32 + 16).storeBytes(of: widenToFloat(hi) * d, as: SIMD16<Float>.self)
            }
        case .pal4:
            let source = values.assumingMemoryBound(to: UInt8.self) + row * n / 2
            let table = tables + (row / WeightFormat.pal4RowsPerTable) * 16
            for pair in 0..<(n / 2) {
                let b = source[pair]
                out[2 * pair] = halfToFloat(table[Int(b & 15)])
                out[2 * pair + 1] = halfToFloat(table[Int(b >> 4)])
            }
        }
    }

    /// Whether `multiply` reads the int16-quantized input.
    var usesQuantizedInput: Bool { format == .q8_0 || format == .q4_0 }

    /// y[r] = dot(row r, x) for r in rows. `rows` must start at a multiple of 16 (pal4 table groups).
    /// `quantizedX` must hold `x` quantized (`QuantizedVector.quantize`) for q8_0 and q4_0.
    func multiply(rows range: Range<Int>, x: UnsafePointer<Float>, quantizedX: QuantizedVector, y: UnsafeMutablePointer<Float>) {
        switch format {
        case .f32: multiplyF32(range, x, y)
        case .f16: multiplyF16(range, x, y)
        case .q8_0: multiplyQ8(range, quantizedX, y)
        case .q4_0: multiplyQ4(range, quantizedX, y)
        case .pal4: multiplyPal4(range, x, y)
        }
    }

    private func multiplyF32(_ range: Range<Int>, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>) {
        let base = UnsafePointer(values.assumingMemoryBound(to: Float.self))
        for row in range { y[row] = dotF32(base + row * columns, x, columns) }
    }

    private func multiplyF16(_ range: Range<Int>, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>) {
        let n = columns
        for row in range {
            let w = UnsafeRawPointer(values) + row * n * 2
            var a0 = SIMD16<Float>(), a1 = SIMD16<Float>()
            var i = 0
            while i < n {
                a0 += halfToFloat((w + (i &* 2)).loadUnaligned(as: SIMD16<UInt16>.self)) * load16(x + i)
                a1 += halfToFloat((w + (i &* 2 &+ 32)).loadUnaligned(as: SIMD16<UInt16>.self)) * load16(x + (i &+ 16))
                i &+= 32
            }
            y[row] = (a0 + a1).sum()
        }
    }

    /// q8_0 and q4_0 use integer dot products: `x` is quantized once per op to int16 blocks of 32
    /// (`QuantizedVector`, 15-bit precision), so a block is 4 pmaddwd (8 multiplies and 4 adds each)
    /// and one float multiply-add by the two scales, with no per-weight int-to-float conversion.
    private func multiplyQ8(_ range: Range<Int>, _ xq: QuantizedVector, _ y: UnsafeMutablePointer<Float>) {
        let n = columns, blocks = blocksPerRow
        let xv = UnsafeRawPointer(xq.values), xs = xq.scales
        for row in range {
            let w = UnsafeRawPointer(values) + row * n
            let scales = tables + row * blocks
            var acc = SIMD4<Float>()
            var block = 0
            while block < blocks {
                let q = w + (block &* 32), xb = xv + (block &* 64)
                let q0 = q.loadUnaligned(as: SIMD16<Int8>.self), q1 = (q + 16).loadUnaligned(as: SIMD16<Int8>.self)
                var sum = multiplyAddPairs(widenLow(q0), xb.loadUnaligned(as: SIMD8<Int16>.self))
                sum &+= multiplyAddPairs(widenHigh(q0), (xb + 16).loadUnaligned(as: SIMD8<Int16>.self))
                sum &+= multiplyAddPairs(widenLow(q1), (xb + 32).loadUnaligned(as: SIMD8<Int16>.self))
                sum &+= multiplyAddPairs(widenHigh(q1), (xb + 48).loadUnaligned(as: SIMD8<Int16>.self))
                acc += toFloat(sum) * (halfToFloat(scales[block]) * xs[block])
                block &+= 1
            }
            y[row] = acc.sum()
        }
    }

    private func multiplyQ4(_ range: Range<Int>, _ xq: QuantizedVector, _ y: UnsafeMutablePointer<Float>) {
        let n = columns, blocks = blocksPerRow
        let xv = UnsafeRawPointer(xq.values), xs = xq.scales
        for row in range {
            let w = UnsafeRawPointer(values) + row * n / 2
            let scales = tables + row * blocks
            var acc = SIMD4<Float>()
            var block = 0
            while block < blocks {
                let b = (w + (block &* 16)).loadUnaligned(as: SIMD16<UInt8>.self)
                let lo = SIMD16<Int8>(truncatingIfNeeded: b & 0x0F) &- 8
                let hi = SIMD16<Int8>(truncatingIfNeeded: (b &>> 4) & 0x0F) &- 8
                let xb = xv + (block &* 64)
                var sum = multiplyAddPairs(widenLow(lo), xb.loadUnaligned(as: SIMD8<Int16>.self))
                sum &+= multiplyAddPairs(widenHigh(lo), (xb + 16).loadUnaligned(as: SIMD8<Int16>.self))
                sum &+= multiplyAddPairs(widenLow(hi), (xb + 32).loadUnaligned(as: SIMD8<Int16>.self))
                sum &+= multiplyAddPairs(widenHigh(hi), (xb + 48).loadUnaligned(as: SIMD8<Int16>.self))
                acc += toFloat(sum) * (halfToFloat(scales[block]) * xs[block])
                block &+= 1
            }
            y[row] = acc.sum()
        }
    }

    private func multiplyPal4(_ range: Range<Int>, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>) {
        let n = columns
        // Each byte holds two indices: one 256-entry table of value pairs turns a byte into two weights
        // with a single load. It is rebuilt once per 16-row group (2 KB, stays in L1).
        withUnsafeTemporaryAllocation(of: SIMD2<Float>.self, capacity: 256) { pairs in
            var group = -1
            for row in range {
                let rowGroup = row / WeightFormat.pal4RowsPerTable
                if rowGroup != group {
                    group = rowGroup
                    let table = tables + rowGroup * 16
                    for b in 0..<256 { pairs[b] = SIMD2(halfToFloat(table[b & 15]), halfToFloat(table[b >> 4])) }
                }
                let w = UnsafeRawPointer(values) + row * n / 2
                let p = pairs.baseAddress!
                var a0 = SIMD16<Float>(), a1 = SIMD16<Float>()
                var i = 0
                while i < n {
                    let b = (w + (i &>> 1)).loadUnaligned(as: SIMD16<UInt8>.self)
                    let v0 = SIMD16<Float>(lowHalf: SIMD8(lowHalf: SIMD4(lowHalf: p[Int(b[0])], highHalf: p[Int(b[1])]),
                                                          highHalf: SIMD4(lowHalf: p[Int(b[2])], highHalf: p[Int(b[3])])),
                                           highHalf: SIMD8(lowHalf: SIMD4(lowHalf: p[Int(b[4])], highHalf: p[Int(b[5])]),
                                                           highHalf: SIMD4(lowHalf: p[Int(b[6])], highHalf: p[Int(b[7])])))
                    let v1 = SIMD16<Float>(lowHalf: SIMD8(lowHalf: SIMD4(lowHalf: p[Int(b[8])], highHalf: p[Int(b[9])]),
                                                          highHalf: SIMD4(lowHalf: p[Int(b[10])], highHalf: p[Int(b[11])])),
                                           highHalf: SIMD8(lowHalf: SIMD4(lowHalf: p[Int(b[12])], highHalf: p[Int(b[13])]),
                                                           highHalf: SIMD4(lowHalf: p[Int(b[14])], highHalf: p[Int(b[15])])))
                    a0 += v0 * load16(x + i)
                    a1 += v1 * load16(x + (i &+ 16))
                    i &+= 32
                }
                y[row] = (a0 + a1).sum()
            }
        }
    }
}

/// An activation vector quantized to int16 in blocks of 32 (one float scale each), for the integer
/// dot products of the q8_0 and q4_0 kernels. Allocated once, reused for every op.
public final class QuantizedVector: @unchecked Sendable {
    // @unchecked: written by the dispatching thread before an op is published, read-only during it.
    let values: UnsafeMutablePointer<Int16>
    let scales: UnsafeMutablePointer<Float>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        values = .allocate(capacity: max(capacity, 32))
        scales = .allocate(capacity: max(capacity / 32, 1))
    }
    deinit { values.deallocate(); scales.deallocate() }

    func quantize(_ x: UnsafePointer<Float>, count: Int) {
        precondition(count <= capacity && count % 32 == 0)
        for block in 0..<(count / 32) {
            let xb = x + block * 32
            var amax = SIMD16<Float>()
            amax = pointwiseMax(amax, abs16(load16(xb)))
            amax = pointwiseMax(amax, abs16(load16(xb + 16)))
            let largest = amax.max()
            let scale = largest / 32767
            scales[block] = scale
            let inverse: Float = largest == 0 ? 0 : 1 / scale
            for j in 0..<32 { values[block * 32 + j] = Int16((xb[j] * inverse).rounded()) }
        }
    }
}

@inline(__always) func abs16(_ v: SIMD16<Float>) -> SIMD16<Float> {
    unsafeBitCast(unsafeBitCast(v, to: SIMD16<UInt32>.self) & 0x7FFF_FFFF, to: SIMD16<Float>.self)
}

/// r[i] = a[2i] * b[2i] + a[2i+1] * b[2i+1] in 32 bits: the shape x86's pmaddwd computes in one instruction.
@inline(__always) func multiplyAddPairs(_ a: SIMD8<Int16>, _ b: SIMD8<Int16>) -> SIMD4<Int32> {
    var wa = SIMD8<Int32>(), wb = SIMD8<Int32>()
    for i in 0..<8 { wa[i] = Int32(a[i]); wb[i] = Int32(b[i]) }
    let products = wa &* wb
    var r = SIMD4<Int32>()
    for i in 0..<4 { r[i] = products[2 * i] &+ products[2 * i + 1] }
    return r
}

@inline(__always) func widenLow(_ v: SIMD16<Int8>) -> SIMD8<Int16> {
    var r = SIMD8<Int16>()
    for i in 0..<8 { r[i] = Int16(v[i]) }
    return r
}

@inline(__always) func widenHigh(_ v: SIMD16<Int8>) -> SIMD8<Int16> {
    var r = SIMD8<Int16>()
    for i in 0..<8 { r[i] = Int16(v[i + 8]) }
    return r
}

@inline(__always) func toFloat(_ v: SIMD4<Int32>) -> SIMD4<Float> {
    var r = SIMD4<Float>()
    for i in 0..<4 { r[i] = Float(v[i]) }
    return r
}
