import HitchAlgorithms

// The workloads' draws from the one deterministic generator: the feed's data and the LLM's
// weights and sampling.
extension SeededGenerator {
    /// Uniform in [-1, 1): the LLM's deterministic weights.
    mutating func nextSigned() -> Float {
        Float(Int32(truncatingIfNeeded: next() >> 32)) * (1.0 / 2_147_483_648.0)
    }
    /// Uniform in [0, 1): top-k sampling's draw.
    mutating func nextUnit() -> Float { Float(next() >> 40) * (1.0 / 16_777_216.0) }
}
