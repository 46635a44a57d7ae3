// Every trace event HeadlessUI records goes through here, so the runtime has one place that
// knows the recording API.
#if canImport(Glibc)
import Glibc
#endif
import HitchTrace

/// The frame loop's clock: the recorder's clock in nanoseconds (`Trace.now()`), so vsync,
/// target and present times land in the trace exactly as the loop used them.
public enum MonotonicClock {
    public static func nowNs() -> Int64 { Trace.now().nanoseconds }

    /// Sleeps until a time on this clock: the display link's wait for a vsync. The deadline is
    /// mapped onto CLOCK_MONOTONIC for an absolute `clock_nanosleep`.
    public static func sleep(untilNs deadline: Int64) {
        let remaining = deadline - nowNs()
        guard remaining > 0 else { return }
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let target = Int64(monotonic.tv_sec) * 1_000_000_000 + Int64(monotonic.tv_nsec) + remaining
        var time = timespec(tv_sec: Int(target / 1_000_000_000), tv_nsec: Int(target % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}

/// A view type's name for the trace, interned once per type.
struct ViewTypeName: Sendable {
    var traceName: TraceName
    var string: String { traceName.string }
}

/// What the runtime needs to know about a view type, found once per type: its trace name, how to
/// read its `Primitive` and how to compare two of its values. The runtime's conformance checks
/// (`as? any PrimitiveView`, `as? any Equatable`) are slow when they miss its cache; these
/// readers cast to the concrete type instead.
@MainActor
struct ViewTypeInfo {
    let name: ViewTypeName
    /// Nil for a composite view (one with a body).
    let primitive: ((any View) -> Primitive)?
    /// Nil for a view type that is not Equatable (its values always count as changed).
    let equals: ((any View, any View) -> Bool)?
}

@MainActor
enum ViewTypeNames {
    private static var cache: [ObjectIdentifier: ViewTypeInfo] = [:]

    static func name(of view: any View) -> ViewTypeName { info(of: view).name }

    static func info(of view: any View) -> ViewTypeInfo {
        let type = type(of: view)
        if let info = cache[ObjectIdentifier(type)] { return info }
        var primitive: ((any View) -> Primitive)?
        if let view = view as? any PrimitiveView { primitive = primitiveReader(view) }
        var equals: ((any View, any View) -> Bool)?
        if let view = view as? any Equatable { equals = equalityChecker(view) }
        let info = ViewTypeInfo(name: ViewTypeName(traceName: TraceName.intern(shortTypeName(type))),
                                primitive: primitive, equals: equals)
        cache[ObjectIdentifier(type)] = info
        return info
    }

    private static func primitiveReader<P: PrimitiveView>(_: P) -> (any View) -> Primitive {
        { ($0 as! P).primitive }
    }

    private static func equalityChecker<E: Equatable>(_: E) -> (any View, any View) -> Bool {
        { a, b in
            guard let a = a as? E, let b = b as? E else { return false }
            return a == b
        }
    }

    /// `FeedRow` rather than `HitchWorkloads.FeedRow`; generic arguments dropped.
    static func shortTypeName(_ type: Any.Type) -> String {
        var name = String(describing: type)
        if let angle = name.firstIndex(of: "<") { name = String(name[..<angle]) }
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
        return name
    }
}

enum Instrument {
    static let unknownWriter: TraceName = "unknown"

    // Vsync-grid times go to the trace as ticks and come back as nanoseconds; rounding either way
    // could make an on-time frame read as presented 1 ns late. Targets round up and presents
    // round down, so on time stays on time and late is late by whole periods.
    static func frameBegan(frameID: UInt64, vsyncNs: Int64, targetNs: Int64, periodNs: Int64) {
        Trace.frameBegan(frameID: frameID, vsync: timestamp(atOrAfter: vsyncNs),
                         target: timestamp(atOrAfter: targetNs), periodNs: periodNs)
    }

    static func timestamp(atOrAfter nanoseconds: Int64) -> TraceTimestamp {
        var time = TraceTimestamp(nanoseconds: nanoseconds)
        while time.nanoseconds < nanoseconds { time.ticks += 1 }
        return time
    }

    static func timestamp(atOrBefore nanoseconds: Int64) -> TraceTimestamp {
        var time = TraceTimestamp(nanoseconds: nanoseconds)
        while time.nanoseconds > nanoseconds, time.ticks > 0 { time.ticks -= 1 }
        return time
    }
    static func frameCommitted(frameID: UInt64) { Trace.frameCommitted(frameID: frameID) }
    static func frameRenderBegan(frameID: UInt64) { Trace.frameRenderBegan(frameID: frameID) }
    static func frameRenderEnded(frameID: UInt64) { Trace.frameRenderEnded(frameID: frameID) }
    static func framePresented(frameID: UInt64, atNs: Int64) {
        Trace.framePresented(frameID: frameID, at: timestamp(atOrBefore: atNs))
    }
    static func bodyEvaluation<T>(_ type: ViewTypeName, identity: UInt64, _ body: () -> T) -> T {
        Trace.bodyEvaluation(viewType: type.traceName, identity: identity, body)
    }
    static func invalidation(source: TraceName?, target: ViewTypeName, identity: UInt64, captureStack: Bool) {
        guard Trace.isRecording else { return }
        let stack: StackID? = captureStack ? WriterStacks.capture() : nil
        Trace.invalidation(source: source ?? unknownWriter, target: target.traceName, targetIdentity: identity, stack: stack)
    }
    /// A node built or torn down, with where it sits (parent identity, position) and why.
    @MainActor
    static func viewLifetime(_ change: ViewLifetimeChange, _ node: ViewNode, reason: ViewLifetimeReason) {
        guard Trace.isRecording else { return }
        Trace.viewLifetime(change, viewType: node.typeName.traceName, identity: node.identity,
                           parentIdentity: node.parent?.identity ?? 0, position: node.position, reason: reason)
    }
    static func layoutPass<T>(viewCount: Int, _ body: () -> T) -> T {
        Trace.layoutPass(viewCount: UInt32(clamping: viewCount), body)
    }
    static func stage<T>(_ name: TraceName, _ body: () throws -> T) rethrows -> T {
        let interval = Trace.beginInterval(name, category: .stage)
        defer { Trace.endInterval(interval) }
        return try body()
    }
    static func counter(_ name: TraceName, _ value: Double) { Trace.counter(name, value: value) }
    static func nameCurrentThread(_ name: String) { Trace.setCurrentThreadName(name) }
    /// The analyzer reads roles, not names (docs/METRICS.md "Trace inputs").
    static func setCurrentThreadRole(_ role: ThreadRole) { Trace.setThreadRole(role) }
}

/// The writer's stack for an invalidation: captured in the onChange callback, which runs inside
/// the setter, so the innermost frames below the runtime name the property's setter.
enum WriterStacks {
    /// Skips this helper and `Instrument.invalidation`, so the stack starts in the runtime's onChange.
    static func capture() -> StackID? {
        Backtrace.capture(skipping: 2)
    }
}
