// The row kernels of the float formats (f32, bf16, f16): matrix-vector products over rows of floats.

/// y[r] = dot(row r, x) for r in `range`, rows of `columns` f32 (a multiple of 16) from `base`: the
/// synthetic model's plane and a GGUF file's mapped f32 tensors.
@inline(__always)
func multiplyRowsF32(_ base: UnsafeRawPointer, columns: Int, _ range: Range<Int>, _ x: UnsafeRawPointer, _ y: UnsafeMutablePointer<Float>) {
    multiplyRows(base, columns: columns, range, x, y, elementBytes: 4, widen: load8)
}

/// As `multiplyRowsF32`, rows of bfloat16 (each the top half of an f32: widened by a shift).
@inline(__always)
func multiplyRowsBF16(_ base: UnsafeRawPointer, columns: Int, _ range: Range<Int>, _ x: UnsafeRawPointer, _ y: UnsafeMutablePointer<Float>) {
    multiplyRows(base, columns: columns, range, x, y, elementBytes: 2) {
        unsafeBitCast(SIMD8<UInt32>(truncatingIfNeeded: $0.loadUnaligned(as: SIMD8<UInt16>.self)) &<< 16, to: SIMD8<Float>.self)
    }
}

/// As `multiplyRowsF32`, rows of IEEE halves (vcvtph2ps).
@inline(__always)
func multiplyRowsF16(_ base: UnsafeRawPointer, columns: Int, _ range: Range<Int>, _ x: UnsafeRawPointer, _ y: UnsafeMutablePointer<Float>) {
    multiplyRows(base, columns: columns, range, x, y, elementBytes: 2, widen: loadHalves8)
}

/// Rows of floats of `elementBytes` bytes (4 for f32, 2 for the 16-bit formats), `widen` turning
/// eight of them into f32: two rows per pass, each activation load feeding both, two accumulators per
/// row, the next pair prefetched along the way (each step, the next pair's bytes at twice its offset).
@inline(__always)
func multiplyRows(_ base: UnsafeRawPointer, columns: Int, _ range: Range<Int>, _ x: UnsafeRawPointer,
                  _ y: UnsafeMutablePointer<Float>, elementBytes: Int, widen: (UnsafeRawPointer) -> SIMD8<Float>) {
    let rowBytes = columns &* elementBytes
    let vectorBytes = 8 &* elementBytes
    let activationScale = 4 / elementBytes   // activation bytes (f32) per weight byte
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
            if elementBytes == 4 { prefetch(next + (2 &* i &+ 64)) }   // f32: two cache lines a step
            let x0 = load8(x + i &* activationScale), x1 = load8(x + (i &* activationScale &+ 32))
            a0 = a0.addingProduct(widen(w0 + i), x0)
            b0 = b0.addingProduct(widen(w1 + i), x0)
            a1 = a1.addingProduct(widen(w0 + (i &+ vectorBytes)), x1)
            b1 = b1.addingProduct(widen(w1 + (i &+ vectorBytes)), x1)
            i &+= 2 &* vectorBytes
        }
        y[row] = (a0 + a1).sum()
        if pair { y[row &+ 1] = (b0 + b1).sum() }
        row &+= 2
    }
}
