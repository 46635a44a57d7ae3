// The row kernels of the float formats (f32, bf16, f16): matrix-vector products over rows of floats.

/// y[r] = dot(row r, x) for r in `range`, rows of `columns` f32 (a multiple of 16) from `base`: the
/// synthetic model's plane and a GGUF file's mapped f32 tensors. Two rows per pass, each activation
/// load feeding both, two accumulators per row, the next pair prefetched.
@inline(__always)
func multiplyRowsF32(_ base: UnsafeRawPointer, columns: Int, _ range: Range<Int>, _ x: UnsafeRawPointer, _ y: UnsafeMutablePointer<Float>) {
    let rowBytes = columns &* 4
    var row = range.lowerBound
    while row < range.upperBound {
        let pair = row &+ 1 < range.upperBound
        let w0 = base + row &* rowBytes
        let w1 = pair ? w0 + rowBytes : w0
        var a0 = SIMD8<Float>(), a1 = SIMD8<Float>(), b0 = SIMD8<Float>(), b1 = SIMD8<Float>()
        let next = w0 + 2 &* rowBytes
        var i = 0
        while i < rowBytes {
            prefetch(next + 2 &* i)
            prefetch(next + (2 &* i &+ 64))
            let x0 = load8(x + i), x1 = load8(x + (i &+ 32))
            a0 = a0.addingProduct(load8(w0 + i), x0)
            b0 = b0.addingProduct(load8(w1 + i), x0)
            a1 = a1.addingProduct(load8(w0 + (i &+ 32)), x1)
            b1 = b1.addingProduct(load8(w1 + (i &+ 32)), x1)
            i &+= 64
        }
        y[row] = (a0 + a1).sum()
        if pair { y[row &+ 1] = (b0 + b1).sum() }
        row &+= 2
    }
}

/// As `multiplyRowsF32`, rows of bfloat16 (each the top half of an f32: widened by a shift).
@inline(__always)
func multiplyRowsBF16(_ base: UnsafeRawPointer, columns: Int, _ range: Range<Int>, _ x: UnsafeRawPointer, _ y: UnsafeMutablePointer<Float>) {
    multiplyRowsOfHalves(base, columns: columns, range, x, y) {
        unsafeBitCast(SIMD8<UInt32>(truncatingIfNeeded: $0.loadUnaligned(as: SIMD8<UInt16>.self)) &<< 16, to: SIMD8<Float>.self)
    }
}

/// As `multiplyRowsF32`, rows of IEEE halves (vcvtph2ps).
@inline(__always)
func multiplyRowsF16(_ base: UnsafeRawPointer, columns: Int, _ range: Range<Int>, _ x: UnsafeRawPointer, _ y: UnsafeMutablePointer<Float>) {
    multiplyRowsOfHalves(base, columns: columns, range, x, y, widen: loadHalves8)
}

/// Rows of 16-bit floats, `widen` turning eight of them into f32: two rows per pass, each activation
/// load feeding both, two accumulators per row, the next pair prefetched.
@inline(__always)
func multiplyRowsOfHalves(_ base: UnsafeRawPointer, columns: Int, _ range: Range<Int>, _ x: UnsafeRawPointer,
                          _ y: UnsafeMutablePointer<Float>, widen: (UnsafeRawPointer) -> SIMD8<Float>) {
    let rowBytes = columns &* 2
    var row = range.lowerBound
    while row < range.upperBound {
        let pair = row &+ 1 < range.upperBound
        let w0 = base + row &* rowBytes
        let w1 = pair ? w0 + rowBytes : w0
        var a0 = SIMD8<Float>(), a1 = SIMD8<Float>(), b0 = SIMD8<Float>(), b1 = SIMD8<Float>()
        let next = w0 + 2 &* rowBytes
        var i = 0
        while i < rowBytes {
            prefetch(next + 2 &* i)
            let x0 = load8(x + i &* 2), x1 = load8(x + (i &* 2 &+ 32))
            a0 = a0.addingProduct(widen(w0 + i), x0)
            b0 = b0.addingProduct(widen(w1 + i), x0)
            a1 = a1.addingProduct(widen(w0 + (i &+ 16)), x1)
            b1 = b1.addingProduct(widen(w1 + (i &+ 16)), x1)
            i &+= 32
        }
        y[row] = (a0 + a1).sum()
        if pair { y[row &+ 1] = (b0 + b1).sum() }
        row &+= 2
    }
}
