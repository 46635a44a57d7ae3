// IEEE half <-> float conversions and the small lane-widening helpers the kernels share. Written as
// lane loops over Float16 / fixed-width integers: with the workloads built for Haswell-level x86
// (Package.swift), the optimizer turns each into one instruction (vcvtph2ps, vcvtps2ph, vpmovsxbw,
// vpmovzxbw, vcvtdq2ps); the standard library's generic SIMD conversion initializers stay out-of-line
// calls. On a baseline x86-64 build they stay correct, only slower.

import CHitchSupport

@inline(__always)
func halfToFloat(_ bits: UInt16) -> Float { Float(Float16(bitPattern: bits)) }

/// Float to half bits, round to nearest even.
@inline(__always)
func floatToHalf(_ value: Float) -> UInt16 { Float16(value).bitPattern }

/// Eight halves at `pointer` as floats (one vcvtph2ps).
@inline(__always)
func loadHalves8(_ pointer: UnsafeRawPointer) -> SIMD8<Float> {
    let h = pointer.loadUnaligned(as: SIMD8<Float16>.self)
    var r = SIMD8<Float>()
    for i in 0..<8 { r[i] = Float(h[i]) }
    return r
}

@inline(__always)
func load8(_ pointer: UnsafeRawPointer) -> SIMD8<Float> { pointer.loadUnaligned(as: SIMD8<Float>.self) }

/// Sign-extends 16 int8 lanes (vpmovsxbw).
@inline(__always)
func widenSigned(_ v: SIMD16<Int8>) -> SIMD16<Int16> {
    var r = SIMD16<Int16>()
    for i in 0..<16 { r[i] = Int16(v[i]) }
    return r
}

/// r[i] = a[2i] * b[2i] + a[2i+1] * b[2i+1] in 32 bits: the shape x86's vpmaddwd computes in one instruction.
@inline(__always)
func multiplyAddPairs(_ a: SIMD16<Int16>, _ b: SIMD16<Int16>) -> SIMD8<Int32> {
    var wa = SIMD16<Int32>(), wb = SIMD16<Int32>()
    for i in 0..<16 { wa[i] = Int32(a[i]); wb[i] = Int32(b[i]) }
    let p = wa &* wb
    let even = SIMD8<Int32>(p[0], p[2], p[4], p[6], p[8], p[10], p[12], p[14])
    let odd = SIMD8<Int32>(p[1], p[3], p[5], p[7], p[9], p[11], p[13], p[15])
    return even &+ odd
}

@inline(__always)
func toFloat(_ v: SIMD8<Int32>) -> SIMD8<Float> {
    var r = SIMD8<Float>()
    for i in 0..<8 { r[i] = Float(v[i]) }
    return r
}

/// Asks for the cache line holding `address` without waiting for it (prefetcht0).
@inline(__always)
func prefetch(_ address: UnsafeRawPointer) { hitch_prefetch(address) }

/// Asks for every cache line of `count` floats from `start` (prefetcht0 each 64 bytes).
@inline(__always)
func prefetch(_ start: UnsafePointer<Float>, count: Int) {
    var offset = 0
    while offset < count * 4 {
        hitch_prefetch(UnsafeRawPointer(start) + offset)
        offset &+= 64
    }
}
