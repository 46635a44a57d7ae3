import HitchTrace

// The decoded event model: what every importer (FXT reader, Chrome JSON importer) yields and what
// every analysis pass consumes. Strings are interned ids so decoding allocates nothing per event;
// resolve them through the reader's `TraceStrings`.

/// An interned string in one trace (category, name, view type, op, symbol, metadata key/value).
public struct StringID: Hashable, Sendable, Comparable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: StringID, b: StringID) -> Bool { a.rawValue < b.rawValue }
}

/// A dense index into the trace's thread table (`TraceThread`).
public struct ThreadID: Hashable, Sendable, Comparable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: ThreadID, b: ThreadID) -> Bool { a.rawValue < b.rawValue }
}

/// One event of a trace, with its time in nanoseconds on the trace's monotonic clock.
public struct TraceEvent: Sendable {
    public var timestampNs: Int64
    public var thread: ThreadID
    public var payload: Payload

    public init(timestampNs: Int64, thread: ThreadID, payload: Payload) {
        self.timestampNs = timestampNs
        self.thread = thread
        self.payload = payload
    }

    public enum Payload: Sendable {
        /// A duration from any producer. Pipeline stages use category `stage`; other
        /// categories are generic durations (they count as stages for the analyzer too).
        case intervalBegin(category: StringID, name: StringID)
        case intervalEnd(category: StringID, name: StringID)
        case intervalComplete(category: StringID, name: StringID, endNs: Int64)
        case instant(category: StringID, name: StringID)
        case counter(name: StringID, value: Double)

        /// Frame lifecycle, joined by `frameID`. A frame's begin carries the display link's
        /// vsync and target timestamps and the refresh period in force.
        case frameBegan(FrameBegan)
        case frameCommitted(frameID: UInt64)
        case frameRenderEnded(frameID: UInt64)
        case framePresented(frameID: UInt64)

        /// A view body evaluation [timestampNs, endNs].
        case bodyEvaluation(BodyEvaluation)
        /// A write to an observed property invalidated a view.
        case invalidation(Invalidation)
        /// A view node was built or torn down (its identity is new, its structure changed, or its
        /// parent came or went).
        case viewLifetime(ViewLifetime)
        /// A layout pass [timestampNs, endNs].
        case layoutPass(endNs: Int64, viewCount: UInt32)
        /// An inference op [timestampNs, endNs].
        case inferenceOp(InferenceOp)
        /// A token's life: produced by the model, delivered to the consumer, shown on a frame, or dropped.
        case token(TokenEvent)
        /// A user-visible animation (scroll, typing, streaming); their union is the animating time.
        case interactionBegin(kind: StringID)
        case interactionEnd(kind: StringID)
        /// An interval that may end on another thread than the one it began on (an `async`
        /// `Trace.interval`): FXT async begin/end events joined by `id`.
        case asyncIntervalBegin(category: StringID, name: StringID, id: UInt64)
        case asyncIntervalEnd(AsyncIntervalEnd)

        /// A sampled call stack of `thread`.
        case sample(stack: StackID)
        /// Defines a stack id: return addresses, innermost first. Precedes every use.
        case stackDefinition(stack: StackID, addresses: [UInt64])
        /// Names an address range's function (demangled), image and offset.
        case symbol(Symbol)

        /// Trace-wide key/value metadata (host, CPU, refresh rate, workload configuration, peaks).
        case metadata(key: StringID, value: StringID)
        /// The recorder dropped `count` events because its writer could not keep up.
        case droppedEvents(count: UInt64)

        /// One thread's scheduler counters, read by that thread at a frame phase. Values are cumulative
        /// since the thread started; the analyzer differences consecutive readings of the same thread.
        /// `thread` is the thread that was read.
        case threadState(ThreadStateReading)
        /// Machine-wide counters, read at a lower rate than frames. Cumulative; nil = unavailable here.
        case machineState(MachineStateReading)
        /// An exact context switch of a recorded thread (perf_event_open context_switch records).
        /// `thread` is the thread switched in or out.
        case schedSwitch(SchedSwitch)
    }
}

/// The arguments an app wrote on an interval or instant (at most two, docs/FORMAT.md §5
/// "Arguments"), held inline: an input hands them out beside the event (`TraceInput.arguments`).
public struct EventArguments: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case int(Int64)
        case uint(UInt64)
        case double(Double)
        case string(StringID)
    }
    public struct Argument: Sendable, Equatable {
        public var name: StringID
        public var value: Value
        public init(name: StringID, value: Value) { self.name = name; self.value = value }
    }
    public var first: Argument?
    public var second: Argument?
    public init(first: Argument? = nil, second: Argument? = nil) { self.first = first; self.second = second }
    public var isEmpty: Bool { first == nil }
    /// The arguments in order (allocates; for renderers, not per event).
    public var all: [Argument] { [first, second].compactMap { $0 } }
}

public struct FrameBegan: Sendable, Equatable {
    public var frameID: UInt64
    public var vsyncNs: Int64
    public var targetNs: Int64
    public var periodNs: Int64
    public init(frameID: UInt64, vsyncNs: Int64, targetNs: Int64, periodNs: Int64) {
        self.frameID = frameID; self.vsyncNs = vsyncNs; self.targetNs = targetNs; self.periodNs = periodNs
    }
}

/// One thread's scheduler counters at a frame phase (docs/FORMAT.md "Thread states").
public struct ThreadStateReading: Sendable, Equatable {
    public var frameID: UInt64
    public var phase: FramePhase
    /// On-CPU time of the thread (CLOCK_THREAD_CPUTIME_ID).
    public var cpuNs: Int64
    /// Time runnable but waiting for a CPU (/proc/self/task/TID/schedstat field 2); nil = unavailable.
    public var runnableWaitNs: Int64?
    /// Switches out while asleep: getrusage(RUSAGE_THREAD).ru_nvcsw, or with the perf source the
    /// thread's own switch records (docs/FORMAT.md "Thread states"); nil = unavailable.
    public var voluntarySwitches: Int64?
    /// Switches out while runnable (preempted): ru_nivcsw, or the preempted switch records; nil = unavailable.
    public var involuntarySwitches: Int64?
    public init(frameID: UInt64, phase: FramePhase, cpuNs: Int64, runnableWaitNs: Int64?,
                voluntarySwitches: Int64?, involuntarySwitches: Int64?) {
        self.frameID = frameID; self.phase = phase; self.cpuNs = cpuNs; self.runnableWaitNs = runnableWaitNs
        self.voluntarySwitches = voluntarySwitches; self.involuntarySwitches = involuntarySwitches
    }
}

/// Machine-wide scheduler counters (docs/FORMAT.md "Thread states").
public struct MachineStateReading: Sendable, Equatable {
    /// /proc/stat, the steal column summed over CPUs, in ns.
    public var stealNs: Int64?
    /// /proc/pressure/cpu "some total=" (µs).
    public var cpuPressureSomeUs: Int64?
    /// cgroup v2 cpu.stat throttled_usec (v1: throttled_time / 1000).
    public var cgroupThrottledUs: Int64?
    public var onlineCPUs: Int32
    public init(stealNs: Int64?, cpuPressureSomeUs: Int64?, cgroupThrottledUs: Int64?, onlineCPUs: Int32) {
        self.stealNs = stealNs; self.cpuPressureSomeUs = cpuPressureSomeUs
        self.cgroupThrottledUs = cgroupThrottledUs; self.onlineCPUs = onlineCPUs
    }
}

/// A context switch of a recorded thread.
public struct SchedSwitch: Sendable, Equatable {
    public var direction: SwitchDirection
    /// A switch-out while runnable (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT); false for switch-ins.
    public var preempted: Bool
    /// The CPU the thread left or took (`unknownCPU` when the source does not say).
    public var cpu: UInt16
    public static let unknownCPU: UInt16 = .max
    public init(direction: SwitchDirection, preempted: Bool, cpu: UInt16 = SchedSwitch.unknownCPU) {
        self.direction = direction; self.preempted = preempted; self.cpu = cpu
    }
}

public struct BodyEvaluation: Sendable, Equatable {
    public var viewType: StringID
    public var identity: UInt64
    public var endNs: Int64
    public init(viewType: StringID, identity: UInt64, endNs: Int64) {
        self.viewType = viewType; self.identity = identity; self.endNs = endNs
    }
}

public struct Invalidation: Sendable, Equatable {
    /// The written property, e.g. `FeedModel.query`.
    public var source: StringID
    /// The invalidated view's type.
    public var target: StringID
    public var targetIdentity: UInt64
    /// The writer's stack, when backtraces were on.
    public var stack: StackID?
    public init(source: StringID, target: StringID, targetIdentity: UInt64, stack: StackID?) {
        self.source = source; self.target = target; self.targetIdentity = targetIdentity; self.stack = stack
    }
}

/// A view node's build or teardown: what the identity-churn pass reads.
public struct ViewLifetime: Sendable, Equatable {
    public var change: ViewLifetimeChange
    public var viewType: StringID
    public var identity: UInt64
    /// The parent node's identity (0 for the root).
    public var parentIdentity: UInt64
    /// The node's index among its parent's children; for lazy list rows, the row's index in the data.
    public var position: Int64
    public var reason: ViewLifetimeReason
    public init(change: ViewLifetimeChange, viewType: StringID, identity: UInt64, parentIdentity: UInt64, position: Int64,
                reason: ViewLifetimeReason) {
        self.change = change; self.viewType = viewType; self.identity = identity
        self.parentIdentity = parentIdentity; self.position = position; self.reason = reason
    }
}

public struct InferenceOp: Sendable, Equatable {
    public var name: StringID
    public var computeUnit: StringID
    public var layer: Int32
    public var tokenIndex: Int32
    public var bytesRead: UInt64
    public var bytesWritten: UInt64
    public var flops: UInt64
    public var endNs: Int64
    public var byteKind: InferenceByteKind
    public init(name: StringID, computeUnit: StringID, layer: Int32, tokenIndex: Int32,
                bytesRead: UInt64, bytesWritten: UInt64, flops: UInt64, endNs: Int64, byteKind: InferenceByteKind = .unspecified) {
        self.name = name; self.computeUnit = computeUnit; self.layer = layer; self.tokenIndex = tokenIndex
        self.bytesRead = bytesRead; self.bytesWritten = bytesWritten; self.flops = flops; self.endNs = endNs
        self.byteKind = byteKind
    }
}

public struct TokenEvent: Sendable, Equatable {
    public var stage: TokenStage
    public var index: Int64
    public init(stage: TokenStage, index: Int64) { self.stage = stage; self.index = index }
}

public struct Symbol: Sendable, Equatable {
    public var address: UInt64
    public var size: UInt64
    public var function: StringID
    public var image: StringID
    public var offset: UInt64
    public init(address: UInt64, size: UInt64, function: StringID, image: StringID, offset: UInt64) {
        self.address = address; self.size = size; self.function = function; self.image = image; self.offset = offset
    }

    /// How a frame is shown: its function (C++ names demangled), simplified as Instruments shows
    /// Swift names (`SwiftNames.simplified`, C++ names alike) unless `fullNames`, or `file+0xoffset` when the image had no symbol
    /// for it (the file address `addr2line -e IMAGE` takes).
    public static func displayName(function: String, image: String, offset: UInt64, fullNames: Bool = false) -> String {
        guard function.isEmpty else {
            // Traces recorded before C++ names were demangled at recording keep them mangled.
            let function = function.hasPrefix("_Z") ? Symbolicator.demangle(function) : function
            return fullNames ? function : SwiftNames.simplified(function)
        }
        let file = image.split(separator: "/").last.map(String.init) ?? image
        return (file.isEmpty ? "?" : file) + "+0x" + String(offset, radix: 16)
    }
}

/// The end of an async interval: its duration and its self time per task (the duration minus the
/// async intervals awaited inside it, wherever they ran), both measured by the recorder.
public struct AsyncIntervalEnd: Sendable, Equatable {
    public var category: StringID
    public var name: StringID
    public var id: UInt64
    public var durationNs: Int64
    public var selfNs: Int64
    public init(category: StringID, name: StringID, id: UInt64, durationNs: Int64, selfNs: Int64) {
        self.category = category; self.name = name; self.id = id; self.durationNs = durationNs; self.selfNs = selfNs
    }
}

extension TraceEvent.Payload {
    /// The payload's kind as one stable word (as `hitch info` and docs/FORMAT.md name it).
    public var kindName: String {
        switch self {
        case .intervalBegin: "intervalBegin"
        case .intervalEnd: "intervalEnd"
        case .intervalComplete: "intervalComplete"
        case .instant: "instant"
        case .counter: "counter"
        case .frameBegan: "frameBegan"
        case .frameCommitted: "frameCommitted"
        case .frameRenderEnded: "frameRenderEnded"
        case .framePresented: "framePresented"
        case .bodyEvaluation: "bodyEvaluation"
        case .invalidation: "invalidation"
        case .viewLifetime: "viewLifetime"
        case .layoutPass: "layoutPass"
        case .inferenceOp: "inferenceOp"
        case .token: "token"
        case .interactionBegin: "interactionBegin"
        case .interactionEnd: "interactionEnd"
        case .asyncIntervalBegin: "asyncIntervalBegin"
        case .asyncIntervalEnd: "asyncIntervalEnd"
        case .sample: "sample"
        case .stackDefinition: "stackDefinition"
        case .symbol: "symbol"
        case .metadata: "metadata"
        case .droppedEvents: "droppedEvents"
        case .threadState: "threadState"
        case .machineState: "machineState"
        case .schedSwitch: "schedSwitch"
        }
    }

    /// When the event ends, for payloads that span time (complete intervals, bodies, layout passes, ops).
    public var endNs: Int64? {
        switch self {
        case let .intervalComplete(_, _, endNs): endNs
        case let .bodyEvaluation(body): body.endNs
        case let .layoutPass(endNs, _): endNs
        case let .inferenceOp(op): op.endNs
        default: nil
        }
    }
}
