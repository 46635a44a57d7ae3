// A weight matrix read in place from a GGUF file's mapping, in ggml's block layout (scales interleaved
// with the quantized values), never copied; q4_0 matrices of a multiple of 8 rows (not the token
// embedding) are first interleaved in place eight rows at a time (`GGUFFile.interleavedQ4_0Rows8`),
// as llama.cpp repacks them. One matrix may be several tensors stacked by rows (the
// fused q|k|v and gate|up products of the decoder), each a segment with its own type.
//
// Quantized types take the activations as ggml does (`QuantizedVector.quantize8`: int8 blocks with an
// f16 scale) and run the kernels of CHitchKernels (vpdpbusd where the CPU has it), so a product equals
// llama.cpp's up to the order of the float additions:
//   q8_0: sum_blocks d_w * d_x * sum(q_w * q_x)
//   q4_0: sum_blocks d_w * d_x * sum((q_w - 8) * q_x)
//   q4_1: sum_blocks d_w * d_x * sum(q_w * q_x) + m_w * s_x     (w = d * q + m, s_x = d_x * sum q_x)
//   q5_0, q5_1: as q4_0 (centred on 16) and q4_1 with 5-bit q
//   q4_K, q5_K: sum_blocks d_x * (d_w * sum_s scale_s * sum(q_w * q_x) - dmin_w * sum_s min_s * sum_s(q_x))
//   q6_K: sum_blocks d_w * d_x * sum_s scale_s * sum((q_w - 32) * q_x)
// where the K-quants take ggml's q8_K activations (blocks of 256, `QuantizedVector.quantizeK`).

import CHitchKernels

struct MappedSegment {
    let type: GGMLType
    let base: UnsafeRawPointer
    let firstRow: Int
    let rows: Int
    let rowBytes: Int
    /// The kernel that multiplies its rows (nil for float types), in the float order llama.cpp
    /// uses for this tensor (`MappedSegment.kernelType`).
    let kernel: hitch_matvec_fn?
    /// Whether `base` holds the rows interleaved eight at a time (`HITCH_Q4_0_ROWS8`'s layout).
    let interleaved: Bool

    /// The kernel id for a tensor of `type` with `rows` rows: llama.cpp repacks a q4_0 matrix whose
    /// rows are a multiple of 8 (on any AVX2 machine) and sums it in that layout's order, one float
    /// per row (`HITCH_Q4_0_ROWS8`); the token embedding it keeps as it is (a row lookup uses it, so
    /// a tied output head multiplies it in vec_dot's order, as every other type).
    static func kernelType(_ type: GGMLType, rows: Int, name: String) -> Int32 {
        type == .q4_0 && rows % 8 == 0 && name != "token_embd.weight" ? HITCH_Q4_0_ROWS8 : Int32(type.rawValue)
    }
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
            let kernelType = MappedSegment.kernelType(tensor.type, rows: tensor.rows, name: tensor.name)
            let kernel = tensor.type.isFloat ? nil : hitch_matvec_for_type(kernelType)
            guard tensor.type.isFloat || kernel != nil else { throw GGUFError.unsupportedModel("no kernel multiplies \(tensor.type.name) rows") }
            let interleaved = kernelType == HITCH_Q4_0_ROWS8
            segments.append(MappedSegment(type: tensor.type, base: interleaved ? try file.interleavedQ4_0Rows8(tensor) : file.data(of: tensor),
                                          firstRow: row, rows: tensor.rows, rowBytes: tensor.type.rowBytes(columns: columns), kernel: kernel,
                                          interleaved: interleaved))
            row += tensor.rows
        }
        rows = row
        self.segments = segments
        let types = Set(segments.map(\.type.isFloat))
        guard types.count == 1 else { throw GGUFError.unsupportedModel("\(tensors.map(\.name)) mix float and quantized types") }
    }

    var byteCount: Int { segments.reduce(0) { $0 + $1.rows * $1.rowBytes } }
    var rowByteCount: Int { segments[0].rowBytes }
    var activationQuantization: ActivationQuantization {
        if segments[0].type.isFloat { return .none }
        let blocks256 = segments.contains { $0.type.blockSize == 256 }, blocks32 = segments.contains { $0.type.blockSize == 32 }
        return blocks256 ? (blocks32 ? .ggml8AndK : .ggmlK) : .ggml8
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
            case .bf16: multiplyRowsBF16(segment.base, columns: columns, local, UnsafeRawPointer(x), out)
            case .q4_0 where segment.interleaved:
                multiplyInterleaved(segment, local, quantizedX.ggml, out)
            case .q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q4_K, .q5_K, .q6_K:
                let rows = segment.base + local.lowerBound * segment.rowBytes
                // Every quantized segment has its kernel (checked in init).
                segment.kernel!(rows.assumingMemoryBound(to: UInt8.self), segment.rowBytes, local.count, columns / segment.type.blockSize,
                                quantizedX.ggml, out + local.lowerBound)
            }
        }
    }

    /// Rows `local` of an interleaved segment into `out + local.lowerBound`: its whole groups of 8 in
    /// one call; a group the range only partly covers (a chunk boundary inside it) computed whole
    /// into scratch, keeping the range's rows.
    @_optimize(speed)
    private func multiplyInterleaved(_ segment: MappedSegment, _ local: Range<Int>, _ x: UnsafePointer<hitch_q8_activations>,
                                     _ out: UnsafeMutablePointer<Float>) {
        let blocks = columns / 32, kernel = segment.kernel!
        let wholeStart = (local.lowerBound + 7) / 8 * 8, wholeEnd = local.upperBound / 8 * 8
        if wholeStart < wholeEnd {
            kernel((segment.base + wholeStart * segment.rowBytes).assumingMemoryBound(to: UInt8.self), segment.rowBytes,
                   wholeEnd - wholeStart, blocks, x, out + wholeStart)
        }
        let edge = { (group: Int) in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: 8) { scratch in
                kernel((segment.base + 8 * group * segment.rowBytes).assumingMemoryBound(to: UInt8.self), segment.rowBytes, 8, blocks, x,
                       scratch.baseAddress!)
                for r in max(8 * group, local.lowerBound)..<min(8 * group + 8, local.upperBound) { out[r] = scratch[r - 8 * group] }
            }
        }
        let firstGroup = local.lowerBound / 8, lastGroup = (local.upperBound - 1) / 8
        if local.lowerBound % 8 != 0 { edge(firstGroup) }
        if local.upperBound % 8 != 0 && (lastGroup != firstGroup || local.lowerBound % 8 == 0) { edge(lastGroup) }
    }

    @_optimize(speed)
    func dequantizeRow(_ row: Int, into out: UnsafeMutablePointer<Float>) {
        guard let segment = segments.last(where: { $0.firstRow <= row }) else { return }
        guard segment.interleaved else {
            segment.type.dequantizeRow(segment.base + (row - segment.firstRow) * segment.rowBytes, columns: columns, into: out)
            return
        }
        withUnsafeTemporaryAllocation(byteCount: segment.rowBytes, alignment: 16) { blocks in
            hitch_q4_0_rows8_row(segment.base, segment.rowBytes, row - segment.firstRow, columns / 32, blocks.baseAddress!)
            segment.type.dequantizeRow(UnsafeRawPointer(blocks.baseAddress!), columns: columns, into: out)
        }
    }
}

/// The instruction set of GGUF models' quantized kernels (CHitchKernels chooses it at load time:
/// the best the CPU runs, at most the one the environment variable `HITCH_KERNELS_ISA` names).
public enum QuantizedKernels {
    /// "avx512vnni", "avx512", "avxvnni", "avx2" or "portable".
    public static var instructionSet: String { String(cString: hitch_kernels_isa()) }
    /// Every version, best first (the order `HITCH_KERNELS_ISA` caps).
    public static let all = ["avx512vnni", "avx512", "avxvnni", "avx2", "portable"]
    /// The environment variable that caps the version, so each can be measured on one machine.
    public static let capVariable = "HITCH_KERNELS_ISA"
    /// Why the cap was ignored (it names no version), nil when it was not.
    public static var capProblem: String? {
        guard let value = hitch_kernels_unknown_cap() else { return nil }
        return "\(capVariable)='\(String(cString: value))' names no kernel version (\(all.joined(separator: ", ")))"
    }
    /// The versions this CPU runs, best first.
    public static var available: [String] { all.filter { hitch_kernel($0, Int32(GGMLType.q8_0.rawValue)) != nil } }
    /// The `name` version of `type`'s kernel, nil when the CPU lacks it (tests compare every version).
    static func kernel(_ name: String, for type: GGMLType) -> hitch_matvec_fn? { hitch_kernel(name, Int32(type.rawValue)) }
    /// The `name` version of the q8_K activation quantizer, nil when the CPU lacks it.
    static func quantizerK(_ name: String) -> hitch_quantize_fn? { hitch_quantizer_q8_K(name) }
    /// The `name` version of the q8_0/q8_1 activation quantizer, nil when the CPU lacks it.
    static func quantizer8(_ name: String) -> hitch_quantize_fn? { hitch_quantizer_q8(name) }
}
