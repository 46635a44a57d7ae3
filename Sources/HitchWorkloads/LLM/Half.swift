// IEEE half <-> float conversions written with integer SIMD so they vectorize on the package's
// default x86-64 target (no F16C there: `Float(Float16)` would call a library routine per element).

/// Half bits to float for finite values (normals and subnormals exact; weights are never inf/NaN).
@inline(__always)
func halfToFloat(_ bits: SIMD16<UInt16>) -> SIMD16<Float> {
    let wide = widen(bits)
    let sign = (wide & 0x8000) &<< 16
    let magnitude = (wide & 0x7FFF) &<< 13
    // Re-biasing the exponent from 15 to 127 is a multiply by 2^112; subnormals come out exact too.
    let scaled = unsafeBitCast(magnitude, to: SIMD16<Float>.self) * Float(bitPattern: 0x7780_0000)
    return unsafeBitCast(unsafeBitCast(scaled, to: SIMD16<UInt32>.self) | sign, to: SIMD16<Float>.self)
}

@inline(__always)
func halfToFloat(_ bits: UInt16) -> Float {
    let wide = UInt32(bits)
    let scaled = Float(bitPattern: (wide & 0x7FFF) &<< 13) * Float(bitPattern: 0x7780_0000)
    return Float(bitPattern: scaled.bitPattern | ((wide & 0x8000) &<< 16))
}

/// Float to half bits, round to nearest even, for the value ranges weights and scales use.
@inline(__always)
func floatToHalf(_ value: Float) -> UInt16 {
    let bits = value.bitPattern
    let sign = UInt16(truncatingIfNeeded: (bits >> 16) & 0x8000)
    let magnitude = bits & 0x7FFF_FFFF
    // Normal half range: exponent 2^-14 ... 65504. Outside it, defer to the (slow, exact) library path.
    guard magnitude >= 0x3880_0000, magnitude < 0x477F_E000 else {
        return Float16(value).bitPattern
    }
    let rebased = magnitude &- 0x3800_0000 // exponent 127 -> 15
    let roundBit: UInt32 = 0x1000, lowMask: UInt32 = 0x1FFF
    var half = rebased >> 13
    let low = rebased & lowMask
    if low > roundBit || (low == roundBit && half & 1 == 1) { half += 1 }
    return sign | UInt16(truncatingIfNeeded: half)
}

// Lane-by-lane widening written as loops: the optimizer turns these into inline unpack/shift/convert
// sequences, while the standard library's generic SIMD conversion initializers stay out-of-line calls.

@inline(__always)
func widen(_ v: SIMD16<UInt16>) -> SIMD16<UInt32> {
    var r = SIMD16<UInt32>()
    for i in 0..<16 { r[i] = UInt32(v[i]) }
    return r
}

@inline(__always)
func widenToFloat(_ v: SIMD16<Int8>) -> SIMD16<Float> {
    var r = SIMD16<Float>()
    for i in 0..<16 { r[i] = Float(v[i]) }
    return r
}
