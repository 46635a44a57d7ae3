// The decoder's shape and weight format, and the byte accounting both imply. Every byte figure the
// workload records or prints comes from here, so the bench, the budget and the trace agree.

/// How the synthetic model's weights are stored in this decoder's own planes (`WeightMatrix`). Bytes
/// per weight follow from the layout exactly (see `bytes(rows:columns:)`). The ggml block types (q4_0
/// among them) are not formats: the synthetic model is written in them as GGUF (`SyntheticWeights`).
public enum WeightFormat: String, CaseIterable, Sendable, Codable {
    /// 4 bytes per weight.
    case f32
    /// IEEE half: 2 bytes per weight.
    case f16
    /// Blocks of 32 int8 weights with one f16 scale: 34 bytes per 32 weights (8.5 bits/weight).
    case q8_0
    /// 4-bit indices into a 16-entry f16 lookup table shared by a block of `pal4RowsPerTable` rows
    /// (Core ML palettization, grouped by output channel).
    case pal4

    /// Weights per quantization block (q8_0) along a row.
    public static let blockSize = 32
    /// Rows that share one pal4 lookup table.
    public static let pal4RowsPerTable = 16

    /// Exact storage of a rows x columns matrix in this format.
    public func bytes(rows: Int, columns: Int) -> Int {
        switch self {
        case .f32: return rows * columns * 4
        case .f16: return rows * columns * 2
        case .q8_0: return rows * (columns / Self.blockSize) * (Self.blockSize + 2)
        case .pal4:
            let tables = (rows + Self.pal4RowsPerTable - 1) / Self.pal4RowsPerTable
            return rows * columns / 2 + tables * 16 * 2
        }
    }

    /// Storage bits per weight for a large matrix (lookup tables amortized).
    public var bitsPerWeight: Double {
        Double(bytes(rows: 4096, columns: 4096)) * 8 / Double(4096 * 4096)
    }
}

/// A Llama-style decoder's dimensions.
public struct ModelShape: Sendable, Equatable, Codable {
    public var dim: Int
    public var layers: Int
    public var heads: Int
    public var kvHeads: Int
    public var ffn: Int
    public var vocab: Int
    /// Positions the KV cache holds.
    public var context: Int
    /// Dimensions per attention head when not dim / heads (Gemma 3: 256 with dim 640 and 4 heads).
    public var attentionHeadDim: Int?
    /// The output head is the embedding matrix (Llama 3.2 1B and 3B): its weights are stored once.
    public var tiedEmbeddings = false

    public init(dim: Int = 1536, layers: Int = 12, heads: Int = 12, kvHeads: Int = 4,
                ffn: Int = 4096, vocab: Int = 32000, context: Int = 512) {
        self.dim = dim; self.layers = layers; self.heads = heads; self.kvHeads = kvHeads
        self.ffn = ffn; self.vocab = vocab; self.context = context
    }

    /// The bundled model: 0.40 B parameters, so even q4_0 weights are several times the 32 MB LLC.
    public static let bundled = ModelShape()

    public var headDim: Int { attentionHeadDim ?? dim / heads }
    /// Query (and attention output) width: heads * headDim.
    public var queryDim: Int { heads * headDim }
    public var kvDim: Int { kvHeads * headDim }
    /// Rows of the fused q|k|v projection.
    public var qkvRows: Int { queryDim + 2 * kvDim }

    /// Why a shape cannot be built, naming the offending flag.
    public func validationError() -> String? {
        if dim <= 0 || layers <= 0 || heads <= 0 || kvHeads <= 0 || ffn <= 0 || vocab <= 0 || context <= 0 {
            return "every dimension must be positive"
        }
        if dim % heads != 0 { return "--dim (\(dim)) must be a multiple of --heads (\(heads))" }
        if heads % kvHeads != 0 { return "--heads (\(heads)) must be a multiple of --kv-heads (\(kvHeads))" }
        if headDim % 2 != 0 { return "head dimension (--dim / --heads = \(headDim)) must be even for RoPE" }
        if dim % 64 != 0 { return "--dim (\(dim)) must be a multiple of 64 (SIMD blocks of 32 weights, pairs of nibbles)" }
        if ffn % 64 != 0 { return "--ffn (\(ffn)) must be a multiple of 64" }
        if vocab < 256 { return "--vocab (\(vocab)) must be at least 256 (the byte-level tokens)" }
        return nil
    }

    /// Matrices per layer as (rows, columns): qkv, attention output, gate|up, down.
    public var layerMatrices: [(rows: Int, columns: Int)] {
        [(qkvRows, dim), (dim, queryDim), (2 * ffn, dim), (dim, ffn)]
    }

    public var parameterCount: Int {
        let perLayer = layerMatrices.reduce(0) { $0 + $1.rows * $1.columns } + 2 * dim
        return vocab * dim /* embedding */ + layers * perLayer + dim /* final norm */ + (tiedEmbeddings ? 0 : vocab * dim) /* output head */
    }

    /// Bytes of all weights: matrices in `weights`, norm gains in f32.
    public func weightBytes(_ weights: SyntheticWeights) -> Int {
        let perLayer = layerMatrices.reduce(0) { $0 + weights.bytes(rows: $1.rows, columns: $1.columns) } + 2 * dim * 4
        return (tiedEmbeddings ? 1 : 2) * weights.bytes(rows: vocab, columns: dim) + layers * perLayer + dim * 4
    }

    /// Why this shape's matrices cannot be stored in `weights` (a row not a whole number of blocks).
    public func blockingError(_ weights: SyntheticWeights) -> String? {
        guard case .ggml(let type) = weights else { return nil }
        let widths = Set(layerMatrices.map(\.columns) + [dim])
        guard let width = widths.sorted().first(where: { $0 % type.blockSize != 0 }) else { return nil }
        return "\(type.name) stores rows in blocks of \(type.blockSize) weights; this shape has rows of \(width)"
    }

    /// Bytes of the f32 KV cache holding `positions` positions (keys and values, every layer).
    public func kvCacheBytes(positions: Int) -> Int { layers * positions * kvDim * 2 * 4 }
}

/// What a `--weights` word names for the synthetic model: a `WeightFormat` (matrices in this
/// decoder's own planes and kernels), or a ggml tensor type (q4_0, q4_K, ...), in which the synthetic
/// model is written as GGUF (`TransformerWeights.writeGGUF`) and read back in place through the GGUF
/// kernels (int8 activations, llama.cpp's summation order), so its bytes per token are the type's true
/// bits per weight.
public enum SyntheticWeights: Sendable, Equatable {
    case format(WeightFormat)
    case ggml(GGMLType)

    /// A format name ("q8_0") or a ggml type name, any case ("q4_k").
    public init?(name: String) {
        if let format = WeightFormat(rawValue: name) { self = .format(format); return }
        guard let type = GGMLType(name: name) else { return nil }
        self = .ggml(type)
    }

    public var name: String {
        switch self {
        case .format(let format): return format.rawValue
        case .ggml(let type): return type.name
        }
    }

    /// Exact storage of a rows x columns matrix (`columns` a multiple of the block size).
    public func bytes(rows: Int, columns: Int) -> Int {
        switch self {
        case .format(let format): return format.bytes(rows: rows, columns: columns)
        case .ggml(let type): return rows * type.rowBytes(columns: columns)
        }
    }

    /// Storage bits per weight for a large matrix.
    public var bitsPerWeight: Double {
        switch self {
        case .format(let format): return format.bitsPerWeight
        case .ggml(let type): return type.bitsPerWeight
        }
    }

    /// Every name accepted: the formats, then the ggml types that are not also formats.
    public static var allNames: [String] {
        let formats = WeightFormat.allCases.map(\.rawValue)
        return formats + GGMLType.allCases.map(\.name).filter { !formats.contains($0) }
    }

    /// Parses a comma-separated list such as "q4_0,q4_k".
    public static func parseList(_ text: String) -> [SyntheticWeights]? {
        var list: [SyntheticWeights] = []
        for word in text.split(separator: ",") {
            guard let weights = SyntheticWeights(name: String(word)) else { return nil }
            list.append(weights)
        }
        return list.isEmpty ? nil : list
    }
}
