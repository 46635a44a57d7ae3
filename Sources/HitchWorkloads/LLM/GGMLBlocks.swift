// ggml's block layouts in plain scalar Swift: a row of any type read back as floats (the embedding
// lookup, the prefill's dequantized rows, and the reference the kernels are tested against), and
// f32 rows encoded into each type (the synthetic model written as GGUF, and tests). The layouts
// (one block each):
//   q4_0  f16 d, 16 bytes: weight i < 16 is the low nibble of byte i, weight 16 + i its high nibble; w = d (q - 8)
//   q4_1  f16 d, f16 m, 16 bytes as q4_0; w = d q + m
//   q5_0  f16 d, 4 bytes of fifth bits (bit i for weight i), 16 bytes as q4_0; w = d (q - 16)
//   q5_1  f16 d, f16 m, fifth bits, nibbles; w = d q + m
//   q8_0  f16 d, 32 int8; w = d q
//   q4_K  256 weights: f16 d, f16 dmin, 12 bytes of eight 6-bit scales and minimums (unpackKScales),
//         128 bytes: weight 64j + i (i < 32) the low nibble of byte 32j + i, 64j + 32 + i its high
//         nibble; sub-block s of 32: w = d scale_s q - dmin min_s
//   q5_K  q4_K with 32 bytes of fifth bits before the nibbles: bit 2j of byte i for weight 64j + i,
//         bit 2j + 1 for weight 64j + 32 + i
//   q6_K  256 weights: 128 bytes of low nibbles, 64 of top bit pairs, 16 int8 scales, f16 d; in half
//         h, weight 128h + 32k + i takes its nibble from byte 64h + 32(k % 2) + i (low for k < 2),
//         its top bits from bits 2k, 2k + 1 of byte 128 + 32h + i; w = d scale_(8h + 2k + i/16) (q - 32)
//   bf16  the top half of an f32

extension GGMLType {
    /// Row `columns` of this type at `w`, as floats.
    func dequantizeRow(_ w: UnsafeRawPointer, columns: Int, into out: UnsafeMutablePointer<Float>) {
        func half(_ offset: Int) -> Float { halfToFloat(w.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
        func byte(_ offset: Int) -> Int { Int(w.load(fromByteOffset: offset, as: UInt8.self)) }
        switch self {
        case .f32:
            for i in 0..<columns { out[i] = w.loadUnaligned(fromByteOffset: i * 4, as: Float.self) }
        case .f16:
            for i in 0..<columns { out[i] = half(i * 2) }
        case .bf16:
            for i in 0..<columns { out[i] = Float(bitPattern: UInt32(w.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self)) << 16) }
        case .q8_0:
            for block in 0..<(columns / 32) {
                let b = block * 34, d = half(b)
                for j in 0..<32 { out[block * 32 + j] = Float(w.load(fromByteOffset: b + 2 + j, as: Int8.self)) * d }
            }
        case .q4_0, .q4_1, .q5_0, .q5_1:
            let hasMinimum = self == .q4_1 || self == .q5_1, five = self == .q5_0 || self == .q5_1
            let bitsOffset = hasMinimum ? 4 : 2, nibblesOffset = bitsOffset + (five ? 4 : 0)
            let center = hasMinimum ? 0 : five ? 16 : 8
            for block in 0..<(columns / 32) {
                let b = block * blockBytes, d = half(b), m = hasMinimum ? half(b + 2) : 0
                let fifth = five ? w.loadUnaligned(fromByteOffset: b + bitsOffset, as: UInt32.self) : 0
                for i in 0..<32 {
                    let packed = byte(b + nibblesOffset + i % 16)
                    var q = i < 16 ? packed & 15 : packed >> 4
                    q |= Int((fifth >> UInt32(i)) & 1) << 4
                    out[block * 32 + i] = hasMinimum ? d * Float(q) + m : d * Float(q - center)
                }
            }
        case .q4_K, .q5_K:
            let five = self == .q5_K, nibbles = five ? 48 : 16
            for block in 0..<(columns / 256) {
                let b = block * blockBytes, d = half(b), dmin = half(b + 2)
                let (scales, minimums) = unpackKScales(w + b + 4)
                for s in 0..<8 {
                    let scale = d * Float(scales[s]), minimum = dmin * Float(minimums[s])
                    for i in 0..<32 {
                        let packed = byte(b + nibbles + 32 * (s / 2) + i)
                        var q = s % 2 == 0 ? packed & 15 : packed >> 4
                        if five { q |= (byte(b + 16 + i) >> s & 1) << 4 }
                        out[block * 256 + 32 * s + i] = scale * Float(q) - minimum
                    }
                }
            }
        case .q6_K:
            for block in 0..<(columns / 256) {
                let b = block * 210, d = half(b + 208)
                for h in 0..<2 {
                    for k in 0..<4 {
                        for i in 0..<32 {
                            let packed = byte(b + 64 * h + 32 * (k % 2) + i)
                            let low = k < 2 ? packed & 15 : packed >> 4
                            let top = byte(b + 128 + 32 * h + i) >> (2 * k) & 3
                            let scale = Float(w.load(fromByteOffset: b + 192 + 8 * h + 2 * k + i / 16, as: Int8.self))
                            out[block * 256 + 128 * h + 32 * k + i] = d * scale * Float((low | top << 4) - 32)
                        }
                    }
                }
            }
        }
    }
}

/// A q4_K/q5_K block's eight 6-bit scales and minimums from their 12 packed bytes: bytes 0-3 and
/// 4-7 hold scales and minimums 0-3 in their low 6 bits; bytes 8-11 hold the low 4 bits of scales
/// 4-7 (low nibble) and minimums 4-7 (high nibble), whose top 2 bits are the top bits of bytes 0-3
/// and 4-7.
func unpackKScales(_ packed: UnsafeRawPointer) -> (scales: [UInt8], minimums: [UInt8]) {
    var scales = [UInt8](repeating: 0, count: 8), minimums = [UInt8](repeating: 0, count: 8)
    func byte(_ i: Int) -> UInt8 { packed.load(fromByteOffset: i, as: UInt8.self) }
    for j in 0..<4 {
        scales[j] = byte(j) & 63
        minimums[j] = byte(j + 4) & 63
        scales[j + 4] = byte(j + 8) & 15 | (byte(j) >> 6) << 4
        minimums[j + 4] = byte(j + 8) >> 4 | (byte(j + 4) >> 6) << 4
    }
    return (scales, minimums)
}

/// Packs eight 6-bit scales and minimums as `unpackKScales` reads them.
func packKScales(scales: [UInt8], minimums: [UInt8]) -> [UInt8] {
    var packed = [UInt8](repeating: 0, count: 12)
    for j in 0..<4 {
        packed[j] = scales[j] & 63 | (scales[j + 4] >> 4) << 6
        packed[j + 4] = minimums[j] & 63 | (minimums[j + 4] >> 4) << 6
        packed[j + 8] = scales[j + 4] & 15 | (minimums[j + 4] & 15) << 4
    }
    return packed
}

extension GGMLType {
    /// Encodes one block (`blockSize` values) of the types without a simpler encoder in
    /// `encode(_:into:)`: q5_0, q5_1 (as q4_0 and q4_1 with 32 levels), the K-quants (sub-block
    /// scales and minimums from each sub-block's range, rounded to the block's 6- or 8-bit grid,
    /// then each weight rounded against its rounded scale) and bf16 (round to nearest even).
    func encodeBlock(_ x: UnsafeBufferPointer<Float>, into out: inout [UInt8]) {
        func half(_ v: Float) { let h = Float16(v).bitPattern; out.append(UInt8(h & 0xFF)); out.append(UInt8(h >> 8)) }
        func clamp(_ v: Float, _ top: Int) -> Int { v.isNaN ? 0 : min(top, max(0, Int(v.rounded()))) }
        switch self {
        case .bf16:
            let bits = x[0].bitPattern
            let rounded = x[0].isNaN ? bits >> 16 | 0x40 : (bits &+ 0x7FFF &+ (bits >> 16 & 1)) >> 16
            out.append(UInt8(rounded & 0xFF)); out.append(UInt8(rounded >> 8 & 0xFF))
        case .q5_0, .q5_1:
            var q = [Int](repeating: 0, count: 32)
            if self == .q5_0 {
                // The value of largest magnitude maps to -16, so its sign is kept exactly.
                var extreme: Float = 0
                for v in x where abs(v) > abs(extreme) { extreme = v }
                let d = extreme / -16, inverse: Float = d == 0 ? 0 : 1 / d
                half(d)
                for i in 0..<32 { q[i] = clamp(x[i] * inverse + 16, 31) }
            } else {
                let low = x.min()!, high = x.max()!
                let d = (high - low) / 31, inverse: Float = d == 0 ? 0 : 1 / d
                half(d); half(low)
                for i in 0..<32 { q[i] = clamp((x[i] - low) * inverse, 31) }
            }
            var fifth: UInt32 = 0
            for i in 0..<32 where q[i] & 16 != 0 { fifth |= 1 << UInt32(i) }
            for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(fifth >> UInt32(shift) & 0xFF)) }
            for i in 0..<16 { out.append(UInt8(q[i] & 15 | (q[i + 16] & 15) << 4)) }
        case .q4_K, .q5_K:
            let levels = self == .q4_K ? 15 : 31
            var scales = [Float](repeating: 0, count: 8), minimums = [Float](repeating: 0, count: 8)
            for s in 0..<8 {
                let run = UnsafeBufferPointer(rebasing: x[(32 * s)..<(32 * s + 32)])
                let low = min(0, run.min()!), high = run.max()!
                scales[s] = (high - low) / Float(levels); minimums[s] = -low
            }
            let d = scales.max()! / 63, dmin = minimums.max()! / 63
            let qScales = scales.map { UInt8(clamp(d == 0 ? 0 : $0 / d, 63)) }
            let qMinimums = minimums.map { UInt8(clamp(dmin == 0 ? 0 : $0 / dmin, 63)) }
            half(d); half(dmin)
            out += packKScales(scales: qScales, minimums: qMinimums)
            // Against the stored (f16-rounded) scales, so decoding sees the grid each weight was rounded on.
            let storedD = Float(Float16(d)), storedMin = Float(Float16(dmin))
            var q = [Int](repeating: 0, count: 256)
            for s in 0..<8 {
                let scale = storedD * Float(qScales[s]), minimum = storedMin * Float(qMinimums[s])
                for i in 0..<32 { q[32 * s + i] = scale == 0 ? 0 : clamp((x[32 * s + i] + minimum) / scale, levels) }
            }
            if self == .q5_K {
                for i in 0..<32 {
                    var bits = 0
                    for s in 0..<8 where q[32 * s + i] & 16 != 0 { bits |= 1 << s }
                    out.append(UInt8(bits))
                }
            }
            for j in 0..<4 {
                for i in 0..<32 { out.append(UInt8(q[64 * j + i] & 15 | (q[64 * j + 32 + i] & 15) << 4)) }
            }
        case .q6_K:
            // Per run of 16: the value of largest magnitude maps to -32; the run scales to int8 with
            // the largest (by magnitude) mapping to -128.
            var runScales = [Float](repeating: 0, count: 16)
            for run in 0..<16 {
                var extreme: Float = 0
                for v in x[(16 * run)..<(16 * run + 16)] where abs(v) > abs(extreme) { extreme = v }
                runScales[run] = extreme / -32
            }
            var largest: Float = 0
            for s in runScales where abs(s) > abs(largest) { largest = s }
            let d = largest / -128, storedD = Float(Float16(d))
            let qScales = runScales.map { d == 0 ? Int8(0) : Int8(max(-128, min(127, ($0 / d).rounded()))) }
            var q = [Int](repeating: 32, count: 256)
            for i in 0..<256 {
                let scale = storedD * Float(qScales[i / 16])
                if scale != 0 { q[i] = clamp(x[i] / scale + 32, 63) }
            }
            var low = [UInt8](repeating: 0, count: 128), top = [UInt8](repeating: 0, count: 64)
            for h in 0..<2 {
                for k in 0..<4 {
                    for i in 0..<32 {
                        let v = q[128 * h + 32 * k + i]
                        low[64 * h + 32 * (k % 2) + i] |= UInt8(v & 15) << (k < 2 ? 0 : 4)
                        top[32 * h + i] |= UInt8(v >> 4) << (2 * k)
                    }
                }
            }
            out += low; out += top
            out += qScales.map { UInt8(bitPattern: $0) }
            half(d)
        case .f32, .f16, .q4_0, .q4_1, .q8_0:
            preconditionFailure("\(name) is encoded by encode(_:into:)")
        }
    }
}
