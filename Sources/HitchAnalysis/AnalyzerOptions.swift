import HitchTrace

public struct AnalyzerOptions: Sendable, Equatable {
    /// Refresh rates to judge/replay at (Hz), in the order they are reported.
    public var refreshRatesHz: [Double]
    /// The device memory budget the LLM memory figures are compared with.
    public var deviceBudgetBytes: UInt64
    /// Sampled functions keep their full demangled names (default: simplified, `Symbol.displayName`).
    public var fullSymbolNames: Bool
    /// The shortest stretch away from the frame loop that is a hang (docs/METRICS.md "Hangs"):
    /// Apple's, `HangThresholdDefaults.hangMs` unless told otherwise.
    public var hangThresholdMs: Double
    /// The shortest stretch that is brief unresponsiveness (below `hangThresholdMs`): Apple's,
    /// `HangThresholdDefaults.briefMs` unless told otherwise.
    public var briefHangThresholdMs: Double
    public static let defaultHangThresholdMs = HangThresholdDefaults.hangMs
    public static let defaultBriefHangThresholdMs = HangThresholdDefaults.briefMs
    public init(refreshRatesHz: [Double] = [60, 120], deviceBudgetBytes: UInt64 = 1_200_000_000, fullSymbolNames: Bool = false,
                hangThresholdMs: Double = AnalyzerOptions.defaultHangThresholdMs,
                briefHangThresholdMs: Double = AnalyzerOptions.defaultBriefHangThresholdMs) {
        self.refreshRatesHz = refreshRatesHz
        self.deviceBudgetBytes = deviceBudgetBytes
        self.fullSymbolNames = fullSymbolNames
        self.hangThresholdMs = hangThresholdMs
        self.briefHangThresholdMs = briefHangThresholdMs
    }
}
