import CHitchSupport

/// The recorder's clock: the CPU's invariant TSC where there is one, else CLOCK_MONOTONIC in ns.
/// Ticks per second are measured once per process (about 20 ms, on first use) and stored in
/// every trace's initialization record.
public enum TraceClock {
    /// True when timestamps are TSC ticks; false when they are CLOCK_MONOTONIC nanoseconds.
    public static var usesTSC: Bool { hitch_clock_is_tsc() != 0 }

    /// Ticks per second of `Trace.now()`, measured against CLOCK_MONOTONIC.
    public static var ticksPerSecond: UInt64 { calibration.ticksPerSecond }

    static var converter: TickConverter { calibration }

    private static let calibration = TickConverter(
        ticksPerSecond: UInt64(hitch_clock_calibrate(20_000_000).rounded()))
}

/// A point on the recorder's clock, in ticks.
public struct TraceTimestamp: Hashable, Comparable, Sendable {
    public var ticks: UInt64

    @inlinable public init(ticks: UInt64) { self.ticks = ticks }

    /// The timestamp `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) {
        ticks = TraceClock.converter.ticks(fromNanoseconds: nanoseconds)
    }

    /// The current time. Same as `Trace.now()`.
    @inlinable public static var now: TraceTimestamp { TraceTimestamp(ticks: hitch_now()) }

    /// Nanoseconds since the clock's origin (the unit every decoded event uses).
    public var nanoseconds: Int64 { TraceClock.converter.nanoseconds(fromTicks: ticks) }

    /// This timestamp moved by `nanoseconds` (negative moves back).
    public func advanced(byNanoseconds nanoseconds: Int64) -> TraceTimestamp {
        TraceTimestamp(nanoseconds: self.nanoseconds + nanoseconds)
    }

    @inlinable public static func < (a: TraceTimestamp, b: TraceTimestamp) -> Bool { a.ticks < b.ticks }
}

/// Converts between ticks and nanoseconds with one 128-bit multiply (no division per event).
struct TickConverter: Sendable {
    let ticksPerSecond: UInt64
    /// Nanoseconds per tick in 32.32 fixed point.
    private let nanosecondsPerTickQ32: UInt64
    /// Ticks per nanosecond in 32.32 fixed point.
    private let ticksPerNanosecondQ32: UInt64

    init(ticksPerSecond: UInt64) {
        let tps = max(ticksPerSecond, 1)
        self.ticksPerSecond = tps
        nanosecondsPerTickQ32 = UInt64(min((1e9 * 4294967296.0 / Double(tps)).rounded(), Double(UInt64.max / 2)))
        ticksPerNanosecondQ32 = UInt64(min((Double(tps) * 4294967296.0 / 1e9).rounded(), Double(UInt64.max / 2)))
    }

    @inline(__always)
    func nanoseconds(fromTicks ticks: UInt64) -> Int64 {
        if ticksPerSecond == 1_000_000_000 { return Int64(truncatingIfNeeded: ticks) }
        let product = ticks.multipliedFullWidth(by: nanosecondsPerTickQ32)
        return Int64(truncatingIfNeeded: (product.high << 32) | (product.low >> 32))
    }

    func ticks(fromNanoseconds nanoseconds: Int64) -> UInt64 {
        if ticksPerSecond == 1_000_000_000 { return UInt64(truncatingIfNeeded: nanoseconds) }
        let magnitude = nanoseconds.magnitude.multipliedFullWidth(by: ticksPerNanosecondQ32)
        let ticks = (magnitude.high << 32) | (magnitude.low >> 32)
        return nanoseconds < 0 ? 0 &- ticks : ticks
    }
}
