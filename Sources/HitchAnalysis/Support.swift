import HitchTrace

/// Maps one run's dense ids (StringID, ThreadID raw values) to analyzer-wide indexes, so the per-event
/// path is an array load. Ids beyond `denseLimit` (a hostile or odd trace) fall back to a dictionary.
struct DenseIndex: Sendable {
    static let denseLimit: UInt32 = 1 << 22
    private var table: [Int32] = []
    private var overflow: [UInt32: Int32] = [:]

    @inline(__always)
    func lookup(_ raw: UInt32) -> Int32 {
        // Compared as Int: `UInt32(table.count)` would check the count's range on every lookup.
        let dense = Int(raw)
        if dense < table.count { return table[dense] }
        if raw < Self.denseLimit { return -1 }
        return overflow[raw] ?? -1
    }

    mutating func set(_ raw: UInt32, _ value: Int32) {
        if raw < Self.denseLimit {
            if raw >= UInt32(table.count) {
                table.append(contentsOf: repeatElement(-1, count: Int(raw) + 1 - table.count))
            }
            table[Int(raw)] = value
        } else {
            overflow[raw] = value
        }
    }

    mutating func removeAll() { table.removeAll(keepingCapacity: true); overflow.removeAll() }
}

/// Strings interned across runs: one index per distinct text.
struct NameTable: Sendable {
    private(set) var names: [String] = []
    private var indexByName: [String: Int32] = [:]

    mutating func index(of name: String) -> Int32 {
        if let index = indexByName[name] { return index }
        let index = Int32(names.count)
        names.append(name)
        indexByName[name] = index
        return index
    }

    subscript(index: Int32) -> String { names[Int(index)] }
    var count: Int { names.count }
}

extension Double {
    /// Rounds to a fixed number of decimals, so JSON output is stable and readable.
    func rounded(decimals: Int) -> Double {
        guard isFinite else { return 0 }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

@inline(__always) func milliseconds(_ ns: Int64) -> Double { Double(ns) / 1e6 }
@inline(__always) func milliseconds(_ ns: Double) -> Double { ns / 1e6 }

// MARK: Safe time arithmetic (docs/METRICS.md "Hostile timestamps")
//
// Every timestamp the analyzer reads is clamped into ±`analyzerTimeLimitNs` (±36.5 years: any real
// clock fits) and every frame period into 0...`maxFramePeriodNs`, so the difference of any two
// clamped times, and a time plus a few periods or durations, cannot overflow Int64. Sums over many
// events (totals, unions, windows) saturate instead of trapping.

/// The range timestamps are clamped into.
let analyzerTimeLimitNs: Int64 = 1 << 60
/// Longer frame periods are not frames (10 s: a 0.1 Hz display); such frames go unjudged.
let maxFramePeriodNs: Int64 = 10_000_000_000

/// A trace timestamp (or end time) moved into ±`analyzerTimeLimitNs`.
@inline(__always) func clampedTime(_ t: Int64) -> Int64 {
    t > analyzerTimeLimitNs ? analyzerTimeLimitNs : (t < -analyzerTimeLimitNs ? -analyzerTimeLimitNs : t)
}

/// A frame period from a trace, or 0 (no usable period) when it is not positive or beyond `maxFramePeriodNs`.
@inline(__always) func sanePeriod(_ periodNs: Int64) -> Int64 {
    periodNs > 0 && periodNs <= maxFramePeriodNs ? periodNs : 0
}

extension FixedWidthInteger {
    /// `self + other`, stuck at the ends of the type instead of trapping.
    @inline(__always) func addingSaturated(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, stuck at the ends of the type instead of trapping.
    @inline(__always) func subtractingSaturated(_ other: Self) -> Self {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    /// `self * other`, stuck at the ends of the type instead of trapping (hostile counters).
    @inline(__always) func multipliedSaturated(by other: Self) -> Self {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : product
    }
}

extension Int64 {
    /// A Double (nanoseconds, counts) as Int64, clamped, NaN as 0.
    @inline(__always) init(clampingDouble value: Double) {
        if value.isNaN { self = 0 } else if value >= 9.2e18 { self = .max } else if value <= -9.2e18 { self = .min } else { self = Int64(value) }
    }
}

infix operator +|= : AssignmentPrecedence
/// Saturating accumulation: `total +|= duration`.
@inline(__always) func +|= <T: FixedWidthInteger>(total: inout T, value: T) { total = total.addingSaturated(value) }
