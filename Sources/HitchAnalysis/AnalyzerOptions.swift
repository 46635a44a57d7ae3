import HitchTrace

public struct AnalyzerOptions: Sendable, Equatable {
    /// Refresh rates to judge/replay at (Hz), in the order they are reported.
    public var refreshRatesHz: [Double]
    /// The device memory budget the LLM memory figures are compared with.
    public var deviceBudgetBytes: UInt64
    /// Sampled functions keep their full demangled names (default: simplified, `Symbol.displayName`).
    public var fullSymbolNames: Bool
    public init(refreshRatesHz: [Double] = [60, 120], deviceBudgetBytes: UInt64 = 1_200_000_000, fullSymbolNames: Bool = false) {
        self.refreshRatesHz = refreshRatesHz
        self.deviceBudgetBytes = deviceBudgetBytes
        self.fullSymbolNames = fullSymbolNames
    }
}
