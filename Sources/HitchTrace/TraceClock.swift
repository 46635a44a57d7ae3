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
@usableFromInline package struct TickConverter: Sendable {
    @usableFromInline package let ticksPerSecond: UInt64
    /// Nanoseconds per tick as an integer part and a 64-bit binary fraction (64.64 fixed point).
    /// 32.32 was not enough: its rounding error grows with the tick count, and after a few hours of
    /// uptime a round trip through nanoseconds was off by over a microsecond.
    @usableFromInline let nanosecondsPerTick: (whole: UInt64, fraction: UInt64)
    /// Ticks per nanosecond, the same way.
    @usableFromInline let ticksPerNanosecond: (whole: UInt64, fraction: UInt64)

    package init(ticksPerSecond: UInt64) {
        let tps = max(ticksPerSecond, 1)
        self.ticksPerSecond = tps
        nanosecondsPerTick = Self.ratio(1_000_000_000, tps)
        ticksPerNanosecond = Self.ratio(tps, 1_000_000_000)
    }

    /// numerator / denominator in 64.64 fixed point, exact to the last bit of the fraction.
    private static func ratio(_ numerator: UInt64, _ denominator: UInt64) -> (whole: UInt64, fraction: UInt64) {
        let remainder = numerator % denominator
        return (numerator / denominator, denominator.dividingFullWidth((high: remainder, low: 0)).quotient)
    }

    @inlinable @inline(__always)
    static func scale(_ value: UInt64, by factor: (whole: UInt64, fraction: UInt64)) -> UInt64 {
        value &* factor.whole &+ value.multipliedFullWidth(by: factor.fraction).high
    }

    @inlinable @inline(__always)
    package func nanoseconds(fromTicks ticks: UInt64) -> Int64 {
        Int64(truncatingIfNeeded: Self.scale(ticks, by: nanosecondsPerTick))
    }

    /// The same, saturating at Int64.max for a tick count whose time does not fit (a corrupt or
    /// hostile timestamp) instead of wrapping to a negative or small time.
    @inlinable @inline(__always)
    package func saturatingNanoseconds(fromTicks ticks: UInt64) -> Int64 {
        let (whole, overflowed) = ticks.multipliedReportingOverflow(by: nanosecondsPerTick.whole)
        let (sum, carried) = whole.addingReportingOverflow(ticks.multipliedFullWidth(by: nanosecondsPerTick.fraction).high)
        return overflowed || carried || sum > UInt64(Int64.max) ? .max : Int64(sum)
    }

    /// The first tick whose time is `nanoseconds`, so that `nanoseconds(fromTicks:)` gives it back
    /// exactly (for a clock of at least one tick per nanosecond; the fixed-point product can be
    /// one tick off either way, which the two short loops correct).
    package func ticks(fromNanoseconds nanoseconds: Int64) -> UInt64 {
        guard nanoseconds >= 0 else { return 0 &- Self.scale(nanoseconds.magnitude, by: ticksPerNanosecond) }
        let target = UInt64(nanoseconds)
        var ticks = Self.scale(target, by: ticksPerNanosecond)
        while UInt64(bitPattern: self.nanoseconds(fromTicks: ticks)) < target && ticks < .max { ticks += 1 }
        while ticks > 0 && UInt64(bitPattern: self.nanoseconds(fromTicks: ticks - 1)) >= target { ticks -= 1 }
        return ticks
    }
}
