// The project's event vocabulary, spelled once: the categories, fixed event names, argument names,
// string-argument words, thread roles and metadata keys of the typed events (docs/FORMAT.md §3 is its table, and
// `VocabularyTests` checks that table against `HitchEventSchema.all`). The FXT writer
// (HitchEventEncoding.swift), the reader (HitchEventDecoding.swift), the Chrome importer and the Chrome
// exporter all take their words from here. A word is an enum case and its text is the case's name,
// so a list cannot drift out of step with the cases that index it; the reader's fixed string ids are
// derived from these enums in one place (`FixedStringIDs`).

/// A closed set of words a trace spells as the case names (`frameBegan`, `kvCache`, ...), in
/// raw-value order 0, 1, 2, ... (`CaseIterable` order).
public protocol TraceWord: CaseIterable, Sendable, Hashable, RawRepresentable where RawValue: BinaryInteger {
    /// Every word's text, in case order: the case's name (`caseName`; categories and blobs with
    /// "hitch." before it), spelled once per set.
    static var spelled: [String] { get }
}

extension TraceWord {
    /// The word as the trace formats spell it.
    public var name: String { Self.spelled[Int(rawValue)] }
    /// The case whose word is `name`, if any.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
    /// Every word of the set, in case order.
    public static var names: [String] { allCases.map(\.name) }
}

/// The case's own name: the one spelling of a word (no table to keep in step with the cases).
func caseName(_ value: some Any) -> String { String(describing: value) }

/// The category of each of the project's typed events: "hitch." and the case name.
public enum HitchCategory: UInt32, TraceWord {
    case frame, body, layout, invalidation, op, token, interaction, sample, meta, view
    /// Scheduler records: thread states, machine states, context switches.
    case sched
    /// Hangs and the watchdog's captures during them.
    case hang
    public static let spelled = allCases.map { "hitch." + caseName($0) }

    /// The generic category of pipeline stages (intervals any producer may write).
    public static let stage = "stage"
    /// Instants in this category are input arrivals (keystrokes, scroll deltas): they release
    /// replayed frames.
    public static let input: TraceName = "input"
}

/// The fixed event names of typed events whose name is not the event's own (a view type, an op).
public enum HitchEventName: UInt32, TraceWord {
    case frameBegan, frameCommitted, frameRenderEnded, framePresented, layout, sample, metadata, droppedEvents
    case threadState, machineState, schedSwitch
    case hang, hangStack
    public static let spelled = allCases.map { caseName($0) }
}

/// The names of the project's blob records: "hitch." and the case name.
public enum HitchBlobName: UInt32, TraceWord {
    case stack, symbol
    public static let spelled = allCases.map { "hitch." + caseName($0) }
}

/// Every argument name the project's events carry, in FXT and in Chrome JSON. The reader decodes
/// these into slots indexed by `rawValue` (at most 64: the reader's slot mask is one word).
public enum HitchArgument: UInt32, TraceWord {
    // FXT and Chrome.
    case frameID, vsyncTicks, targetTicks, periodNs, identity, target, targetIdentity, stack
    case viewCount, layer, computeUnit, tokenIndex, bytesRead, bytesWritten, flops, byteKind, index
    case value, key, count, process, change, parentIdentity, position, reason, parent, durationNs, selfNs
    /// On a thread's kernel object record (§2): its role (`ThreadRole`).
    case role
    // Scheduler records (`hitch.sched`).
    case phase, cpuNs, runnableWaitNs, voluntarySwitches, involuntarySwitches
    case stealNs, cpuPressureSomeUs, cgroupThrottledUs, onlineCPUs, direction, preempted
    // Chrome JSON only (frames carry nanoseconds there; invalidations name their source in args;
    // definitions travel as M events).
    case vsyncNs, targetNs, source, presented, addresses, address, size, function, image, offset
    /// A context switch's CPU (Chrome JSON; FXT keeps it in the record's header).
    case cpu
    // Hangs (`hitch.hang`): the producer's word for a hang; a capture's hang start (ticks in FXT,
    // nanoseconds in Chrome JSON) and the kernel's word on the thread.
    case type, sinceTicks, sinceNs, systemCall, waitChannel, schedState
    /// A frame's expected present where the trace states it (imports: the vsync the platform aimed
    /// the frame at), in ticks in FXT and nanoseconds in Chrome JSON.
    case expectedPresentTicks, expectedPresentNs
    public static let spelled = allCases.map { caseName($0) }
}

/// A token's life: produced by the model, delivered to the consumer, shown on a frame, or dropped
/// (the event name of a `hitch.token` instant).
public enum TokenStage: UInt8, TraceWord {
    case produced, delivered, shown, dropped
    public static let spelled = allCases.map { caseName($0) }
}

/// Whether a view node was built or torn down (the `change` argument of a `hitch.view` instant).
public enum ViewLifetimeChange: UInt8, TraceWord {
    case built, tornDown
    public static let spelled = allCases.map { caseName($0) }
}

/// Why the runtime built or tore a view node down (the `reason` argument).
public enum ViewLifetimeReason: UInt8, TraceWord {
    /// Built: an explicit id (`ForEach`) its parent did not have before.
    case newIdentity
    /// Torn down: its explicit id is gone from its parent's children.
    case identityRemoved
    /// Built or torn down because the structure changed: another type or branch at a position,
    /// or a position that came or went.
    case structuralChange
    /// Built as part of a subtree whose root was built.
    case parentBuilt
    /// Torn down as part of a subtree whose root was torn down.
    case parentRemoved
    public static let spelled = allCases.map { caseName($0) }
}

/// The frame phase at which a thread's scheduler counters were read (the `phase` argument of a
/// `threadState` event). `frameBegan` is also an event name, so the reader matches phases by text,
/// not by a fixed id.
public enum FramePhase: UInt8, TraceWord {
    case frameBegan, committed, renderBegan, renderEnded, presented
    public static let spelled = allCases.map { caseName($0) }
}

/// Whether a context switch took a thread off its CPU or put it on one (the `direction` argument).
public enum SwitchDirection: UInt8, TraceWord {
    case switchedOut, switchedIn
    public static let spelled = allCases.map { caseName($0) }
}

/// What an inference op's `bytesRead` are, as the producer knows it (the `byteKind` argument;
/// `unspecified` is never written).
public enum InferenceByteKind: UInt8, TraceWord {
    /// Not recorded (older traces, other producers): the analyzer judges by the op's name.
    case unspecified
    /// Model weights streamed from memory.
    case weights
    /// The KV cache.
    case kvCache
    /// Activations and other working buffers.
    case activations
    public static let spelled = allCases.map { caseName($0) }
}

/// Words only the Chrome trace-event mapping uses (docs/REPORTS.md, "Chrome trace-event JSON"):
/// frames are async slices with steps, drops are global instants, definitions are M events.
public enum ChromeWord {
    /// A frame's async slice, and its two steps.
    public static let frameSlice = "frame"
    public static let commitStep = "commit"
    public static let renderEndStep = "render end"
    /// The category and name of a dropped-events instant.
    public static let droppedCategory = "hitch.dropped"
    public static let droppedName = "dropped events"
    /// `M` (metadata) event names that carry trace metadata, stack definitions and symbols.
    public static let metadataEvent = "hitch_metadata"
    public static let stackEvent = "hitch_stack"
    public static let symbolEvent = "hitch_symbol"
    /// The flow arrows from an invalidation to the view's next body evaluation.
    public static let invalidationFlow = "invalidation"
    /// Chrome's own metadata event naming a thread, and its argument.
    public static let threadName = "thread_name"
    public static let threadNameArgument = "name"
}

/// The platform's own judgement of an imported frame (Android's jank verdict, Apple's hitches), carried
/// beside the frame so the analysis can show where Hitch and the platform agree (docs/IMPORT.md
/// "Platform verdicts"). It is an instant of category `platform.verdict` on the frame's thread at the
/// frame's start, right after the frame's begin, named by its label: the verdict and the platform's
/// reason (`janky: App Deadline Missed`, `on time: Buffer Stuffing`), with arguments `frameID` and
/// Apple's hitch duration `hitchNs` where the platform gives one. `janky` is a frame the platform
/// blames on the app (or names no culprit for); `janky elsewhere` one it blames on its own
/// pipeline: SurfaceFlinger, the display, the scheduler's prediction (Android's Other Jank), a
/// system hitch (Apple's `is-system`).
public enum PlatformVerdict: UInt8, CaseIterable, Sendable {
    case janky, jankyElsewhere, onTime
    public static let category = "platform.verdict"
    public static let frameIDArgument = HitchArgument.frameID.name
    public static let hitchNsArgument = "hitchNs"

    /// The word as the label spells it.
    public var name: String {
        switch self {
        case .janky: "janky"
        case .jankyElsewhere: "janky elsewhere"
        case .onTime: "on time"
        }
    }

    /// Whether the platform called the frame janky, whoever it blames.
    public var isJanky: Bool { self != .onTime }

    /// The instant's name: the verdict, and the platform's reason after a colon.
    public func label(detail: String?) -> String { name + (detail.map { ": " + $0 } ?? "") }

    /// The verdict a label names (its text before the first colon), if it is one.
    public init?(label: String) {
        let word = label.prefix { $0 != ":" }
        guard let match = Self.allCases.first(where: { $0.name == word }) else { return nil }
        self = match
    }
}

/// One of the platform's own hitches where the trace has no frames to join it to (Instruments'
/// `hitches` table exported alone): an instant of category `platform.hitch` at the hitch's start on
/// the app's main thread, named by its label (`janky: <Apple's narrative>`, or `janky elsewhere:
/// …` for a system hitch, `PlatformVerdict`), and one named `end` at its end. The analysis sums
/// them into the platform's figures (docs/METRICS.md "Platform hitches").
public enum PlatformHitch {
    public static let category = "platform.hitch"
    public static let endName = "end"
    /// Marks the export's last time, where a row names one after the last hitch's end (the span the
    /// platform's hitch time ratio is over).
    public static let exportEndName = "export end"
}

/// The type of an argument value as docs/FORMAT.md §3 names it.
public enum HitchArgumentType: String, Sendable {
    case uint, int, double, string, bool
}

/// One typed event's shape in FXT: its payload, category, fixed name (nil: the event's own name) and
/// arguments. `HitchEventSchema.all` is the table docs/FORMAT.md §3 shows, checked by a test.
/// (`schedSwitch` is an FXT context switch record, not an event record: not listed; in Chrome JSON it
/// is a `hitch.sched` instant `schedSwitch` with `direction`, `preempted` and `cpu`.)
public struct HitchEventSchema: Sendable {
    public struct Argument: Sendable, Equatable {
        public var argument: HitchArgument
        public var type: HitchArgumentType
    }
    /// `TraceEvent.Payload.kindName`.
    public var payload: String
    public var category: HitchCategory
    public var name: HitchEventName?
    public var arguments: [Argument]

    init(_ payload: String, _ category: HitchCategory, _ name: HitchEventName?, _ arguments: [(HitchArgument, HitchArgumentType)]) {
        self.payload = payload; self.category = category; self.name = name
        self.arguments = arguments.map { Argument(argument: $0.0, type: $0.1) }
    }

    public static let all: [HitchEventSchema] = [
        .init("frameBegan", .frame, .frameBegan, [(.frameID, .uint), (.vsyncTicks, .uint), (.targetTicks, .uint), (.periodNs, .int),
                                                  (.expectedPresentTicks, .uint)]),
        .init("frameCommitted", .frame, .frameCommitted, [(.frameID, .uint)]),
        .init("frameRenderEnded", .frame, .frameRenderEnded, [(.frameID, .uint)]),
        .init("framePresented", .frame, .framePresented, [(.frameID, .uint)]),
        .init("bodyEvaluation", .body, nil, [(.identity, .uint)]),
        .init("viewLifetime", .view, nil, [(.change, .string), (.identity, .uint), (.parentIdentity, .uint), (.position, .int), (.reason, .string)]),
        .init("invalidation", .invalidation, nil, [(.target, .string), (.targetIdentity, .uint), (.stack, .uint)]),
        .init("layoutPass", .layout, .layout, [(.viewCount, .uint)]),
        .init("inferenceOp", .op, nil, [(.layer, .int), (.computeUnit, .string), (.tokenIndex, .int), (.bytesRead, .uint),
                                         (.bytesWritten, .uint), (.flops, .uint), (.byteKind, .string)]),
        .init("token", .token, nil, [(.index, .int)]),
        .init("interactionBegin", .interaction, nil, []),
        .init("interactionEnd", .interaction, nil, []),
        .init("sample", .sample, .sample, [(.stack, .uint)]),
        .init("metadata", .meta, .metadata, [(.key, .string), (.value, .string)]),
        .init("droppedEvents", .meta, .droppedEvents, [(.count, .uint)]),
        .init("threadState", .sched, .threadState, [(.frameID, .uint), (.phase, .string), (.cpuNs, .int), (.runnableWaitNs, .int),
                                                   (.voluntarySwitches, .int), (.involuntarySwitches, .int)]),
        .init("machineState", .sched, .machineState, [(.stealNs, .int), (.cpuPressureSomeUs, .int), (.cgroupThrottledUs, .int),
                                                     (.onlineCPUs, .int)]),
        .init("hang", .hang, .hang, [(.source, .string), (.type, .string)]),
        .init("hangStack", .hang, .hangStack, [(.sinceTicks, .uint), (.stack, .uint), (.systemCall, .string), (.waitChannel, .string),
                                               (.schedState, .string)]),
    ]
}

/// The `source` words of hangs (docs/FORMAT.md "Hangs"): the recorder's watchdog writes `watchdog`
/// on its `hitch.hang` events (an importer writes its platform's word), and the analysis says
/// `frameLoop` for a hang it found from a frame's main-thread work.
public enum HangSourceWord {
    public static let watchdog = "watchdog"
    public static let frameLoop = "frameLoop"
    /// An xctrace `potential-hangs` or `hang-risks` row (its `type`: Apple's word, unchanged).
    public static let instruments = "instruments"
    /// An Android trace: an ANR system_server marked, or a long slice of the app's main thread.
    public static let perfetto = "perfetto"
}

/// The default tiers of a hang (docs/METRICS.md "Hangs"), Apple's thresholds: a stretch away from
/// the loop of at least `hangMs` is a hang (Xcode Organizer's hang rate counts only these), one of at
/// least `briefMs` brief unresponsiveness (a delay in answering a discrete interaction becomes
/// noticeable there). The analysis applies them unless told otherwise (`--hang-ms`,
/// `--brief-hang-ms`); an importer that must pick stretches out of a platform's trace (long
/// main-thread slices) picks those of at least `briefMs`.
public enum HangThresholdDefaults {
    public static let hangMs = 250.0
    public static let briefMs = 100.0
}

/// What a thread does, as the analyzer reads it (docs/METRICS.md "Trace inputs").
public struct ThreadRole: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    /// At most 15 bytes are kept.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Runs the frame loop: begins and commits frames.
    public static let main = ThreadRole(rawValue: "main")
    /// Renders and presents frames.
    public static let render = ThreadRole(rawValue: "render")
}

/// Where a trace's thread states come from (metadata `schedSource`): exact context switches from
/// perf_event_open, counters read from procfs at frame phases, an imported Perfetto trace's ftrace
/// scheduling events (docs/IMPORT.md), or nothing.
public enum SchedSource: String, CaseIterable, Sendable, Hashable {
    case perfContextSwitch = "perf-context-switch"
    case procfs
    case ftrace
    case none
    /// The word as metadata spells it.
    public var name: String { rawValue }
}

/// The trace-wide metadata keys the project's producers write (`TraceRecorder.setMetadata`) and its
/// readers look up (docs/FORMAT.md "Metadata"). A key's text is the case's name.
public enum MetadataKey: UInt32, TraceWord {
    // What was recorded, and where (an app's own recorder may say `host` and `cpu`).
    case workload, variant, refreshRateHz, rows, seed, seconds, backtraces, host, cpu
    // The LLM workload.
    case model, prompt, promptTokens, output, weights, parameterCount, weightsBytes, kvCacheBytes
    case dim, layers, heads, kvHeads, ffn, vocab, context, tokens, buffering, computeUnit, decodeThreads
    // The bandwidth probe.
    case peakBandwidthGBps, triadGBps, readGBps, peakGFLOPS, bandwidthProbeThreads, bandwidthProbeArrayBytes
    case lastLevelCacheBytes, lastLevelCacheLevel, lastLevelCacheSource
    /// "false" when the bandwidth probe's arrays were below 4x the last-level cache.
    case bandwidthProbeMeetsCacheRule
    case bandwidthProbeShortfall
    /// Where the thread states came from (`SchedSource`).
    case schedSource
    /// Why perf was refused, or why the reads are unavailable.
    case schedSourceReason
    /// Context-switch records the kernel dropped for a full ring.
    case schedSwitchesLost
    /// Whose context switches the trace has: `everyRecordingThread` when every thread that recorded
    /// events had a switch ring (docs/FORMAT.md "Thread states").
    case schedSwitchThreads
    /// Dynamic names evicted from the recorder's name table during the recording.
    case dynamicNameEvictions
    /// The recorder's flush interval in milliseconds: how late an event may reach the file
    /// (docs/FORMAT.md "Flushing"), the analyzer's ordering bound (`EventOrder`).
    case flushIntervalMs
    // The sampling profiler.
    case samplerRateHz, samplerSource, samplerSourceReason, samplerStackCopyBytes
    case samplerSamplesTaken, samplerSamplesDropped, samplerPerfSamplesLost, samplerPerfFallbackThreads
    case samplerPerfFallbackReason, samplerTimerOverruns, samplerSamplesUnwound, samplerSamplesDiscarded
    case samplerUnwindFailures, samplerUnwindStackUnknown, samplerUnwindOffCopyEnd, samplerUnwindModulesChanged
    case samplerUnwindNoModule, samplerUnwindErrors, samplerHandlerNsP50, samplerHandlerNsP99
    case samplerUnwindNsP50, samplerUnwindNsP99, samplerStackBytesNeededP99
    // Imports: the format a trace was imported from, and the process its frames came from.
    case importedFrom, process
    /// Written at start: the trace will end with a `recordingEnded` record (its value names that key).
    /// A trace that says so and has none was cut short: the process was killed or crashed.
    case endMarker
    /// The end-of-recording marker: how the recording ended (`stop`, `exit`, or the terminating
    /// signal: `SIGTERM`, `SIGINT`, `SIGHUP`). Written last, after every event.
    case recordingEnded
    /// `none` when the trace's frames carry no work times of their own (an import of a tool that
    /// records only when frames were shown): nothing to replay at another refresh rate.
    case frameWorkTimes
    /// Where a recording came from, which fleet figures break down by (docs/FLEET.md "Dimensions"):
    /// an app sets them with `setMetadata`; `hitch summarize --dimension KEY=VALUE` supplies or overrides them.
    case appVersion, device, os, commit, branch
    /// The hang watchdog's threshold in milliseconds, when it watched the main thread.
    case hangWatchdogMs
    /// The LLM workload: why `decodeThreads` (a sentence), and the decode rate measured per thread
    /// count before the recording's decode ("1:38.2,2:70.9" tokens per second).
    case decodeThreadChoice, decodeTokensPerSecondByThreads
    /// The LLM workload, when its background inference threads starved (waited for a CPU more than
    /// half of a second) and were raised to normal priority, or could not be: a sentence saying so.
    /// Absent while they ran in the background throughout.
    case decodePriority
    /// The value of `schedSwitchThreads` when every thread that recorded events had a switch ring.
    public static let everyRecordingThread = "recording"
    public static let spelled = allCases.map { caseName($0) }
}

extension Dictionary where Key == String {
    /// The value of one of the project's own metadata keys.
    public subscript(key: MetadataKey) -> Value? { self[key.name] }
}
