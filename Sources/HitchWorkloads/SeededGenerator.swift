// The workloads' one deterministic generator: the feed's data and the LLM's weights and sampling.

/// SplitMix64: small, fast, and the same sequence on every platform for a seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SeededGenerator {
    /// Uniform in [-1, 1): the LLM's deterministic weights.
    mutating func nextSigned() -> Float {
        Float(Int32(truncatingIfNeeded: next() >> 32)) * (1.0 / 2_147_483_648.0)
    }
    /// Uniform in [0, 1): top-k sampling's draw.
    mutating func nextUnit() -> Float { Float(next() >> 40) * (1.0 / 16_777_216.0) }
}
