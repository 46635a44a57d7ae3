#if canImport(Glibc)
import Glibc
#endif
import CHitchKernels

/// An activation vector quantized once per op for the integer dot products: to int16 in blocks of
/// 32 with a float scale (`quantize`: the synthetic q8_0 kernel), or to int8 blocks as
/// ggml's q8_0/q8_1 (`quantize8`: GGUF models' kernels in CHitchKernels). Allocated once, reused.
public final class QuantizedVector: @unchecked Sendable {
    // @unchecked: written by the dispatching thread before an op is published, read-only during it.
    let values: UnsafeMutablePointer<Int16>
    let scales: UnsafeMutablePointer<Float>
    /// The int8 form (`quantize8`), in the layout the C kernels read.
    let ggml: UnsafeMutablePointer<hitch_q8_activations>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        let blocks = max(capacity / 32, 1)
        values = .allocate(capacity: max(capacity, 32))
        scales = .allocate(capacity: blocks)
        ggml = .allocate(capacity: 1)
        let superBlocks = max(capacity / 256, 1)
        ggml.initialize(to: hitch_q8_activations(values: .allocate(capacity: blocks * 32), scales: .allocate(capacity: blocks),
                                                 sums: .allocate(capacity: blocks), offsets: .allocate(capacity: blocks * 8),
                                                 block_offsets: .allocate(capacity: blocks),
                                                 k_values: .allocate(capacity: superBlocks * 256), k_scales: .allocate(capacity: superBlocks),
                                                 k_sums: .allocate(capacity: superBlocks * 16), q4_K_gemm: 0, q6_K_tiled: 0))
    }
    deinit {
        values.deallocate(); scales.deallocate()
        ggml.pointee.values.deallocate(); ggml.pointee.scales.deallocate(); ggml.pointee.sums.deallocate()
        ggml.pointee.offsets.deallocate(); ggml.pointee.block_offsets.deallocate(); ggml.pointee.k_values.deallocate(); ggml.pointee.k_scales.deallocate()
        ggml.pointee.k_sums.deallocate(); ggml.deallocate()
    }

    /// As ggml's quantize_row_q8_1 (hitch_quantize_q8): per block d = max|x| / 127 kept as f16,
    /// q = round-to-nearest-even(x * 127 / max|x|), and the block's f16(d * sum q).
    func quantize8(_ x: UnsafePointer<Float>, count: Int) {
        precondition(count <= capacity && count % 32 == 0)
        hitch_quantize_q8(x, count, ggml)
    }

    /// As ggml's quantize_row_q8_K (hitch_quantize_q8_K), for the K-quants: `count` a multiple of 256.
    func quantizeK(_ x: UnsafePointer<Float>, count: Int) {
        precondition(count <= capacity && count % 256 == 0)
        hitch_quantize_q8_K(x, count, ggml)
    }

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
            for j in 0..<32 { values[block * 32 + j] = saturatingInt16((xb[j] * inverse).rounded()) }
        }
    }
}

/// A rounded quantized value as int16, never trapping: a non-finite activation (a model file whose
/// weights hold NaN or infinity) becomes 0 or the nearest bound, as garbage in, not a crash.
@inline(__always) func saturatingInt16(_ value: Float) -> Int16 {
    value.isNaN ? 0 : Int16(max(-32767, min(32767, value)))
}

@inline(__always) func abs16(_ v: SIMD16<Float>) -> SIMD16<Float> {
    unsafeBitCast(unsafeBitCast(v, to: SIMD16<UInt32>.self) & 0x7FFF_FFFF, to: SIMD16<Float>.self)
}
