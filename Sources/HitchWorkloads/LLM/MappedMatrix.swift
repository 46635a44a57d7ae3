// A weight matrix read in place from a GGUF file's mapping, in ggml's block layout (scales interleaved
// with the quantized values), never copied. One matrix may be several tensors stacked by rows (the
// fused q|k|v and gate|up products of the decoder), each a segment with its own type.
//
// Quantized types take the activations as ggml does (`QuantizedVector.quantize8`: int8 blocks with an
// f16 scale) and run the kernels of CHitchKernels (vpdpbusd where the CPU has it), so a product equals
// llama.cpp's up to the order of the float additions:
//   q8_0: sum_blocks d_w * d_x * sum(q_w * q_x)
//   q4_0: sum_blocks d_w * d_x * sum((q_w - 8) * q_x)
//   q4_1: sum_blocks d_w * d_x * sum(q_w * q_x) + m_w * s_x     (w = d * q + m, s_x = d_x * sum q_x)

import CHitchKernels

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
            case .f32: multiplyRowsF32(segment.base, columns: columns, local, UnsafeRawPointer(x), out)
            case .f16: multiplyRowsF16(segment.base, columns: columns, local, UnsafeRawPointer(x), out)
            case .q8_0, .q4_0, .q4_1:
                let rows = segment.base + local.lowerBound * segment.rowBytes, blocks = columns / 32
                let kernel = segment.type == .q8_0 ? hitch_matvec_q8_0 : segment.type == .q4_0 ? hitch_matvec_q4_0 : hitch_matvec_q4_1
                kernel(rows, segment.rowBytes, local.count, blocks, quantizedX.ggml, out + local.lowerBound)
            }
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

/// The instruction set of GGUF models' quantized kernels (CHitchKernels chooses it at load time).
public enum QuantizedKernels {
    /// "avx512vnni", "avxvnni", "avx2" or "portable".
    public static var instructionSet: String { String(cString: hitch_kernels_isa()) }
    /// Every version, best first.
    static let all = ["avx512vnni", "avxvnni", "avx2", "portable"]
    /// The `name` version of `type`'s kernel, nil when the CPU lacks it (tests compare every version).
    static func kernel(_ name: String, for type: GGMLType) -> hitch_matvec_fn? { hitch_kernel(name, Int32(type.rawValue)) }
}
