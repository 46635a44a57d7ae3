import HitchReader

// The shape every analysis pass has (docs/METRICS.md "Passes"): it reads some kinds of events,
// ends a run, and contributes its figures to the `Analysis`. Passes talk to each other only
// through what they publish in `PassContext` (finished stage instances, body evaluations,
// main-thread samples, judged frames) and through the `Analysis` the earlier passes have filled.
// To add a pass: write a type conforming to `AnalysisPass` and register it in `AnalysisPasses`
// (the one list).

/// The payload kinds a pass reads (the dispatcher hands it only those).
struct PayloadKinds: OptionSet, Sendable {
    let rawValue: UInt32

    static let intervals = PayloadKinds(rawValue: 1 << 0)   // begin, end, complete; async begin, end
    static let instant = PayloadKinds(rawValue: 1 << 1)
    static let counter = PayloadKinds(rawValue: 1 << 2)
    static let frames = PayloadKinds(rawValue: 1 << 3)      // began, committed, render ended, presented
    static let body = PayloadKinds(rawValue: 1 << 4)
    static let invalidation = PayloadKinds(rawValue: 1 << 5)
    static let layoutPass = PayloadKinds(rawValue: 1 << 6)
    static let inferenceOp = PayloadKinds(rawValue: 1 << 7)
    static let token = PayloadKinds(rawValue: 1 << 8)
    static let interaction = PayloadKinds(rawValue: 1 << 9)  // begin, end
    static let sample = PayloadKinds(rawValue: 1 << 10)
    static let viewLifetime = PayloadKinds(rawValue: 1 << 12)   // view built, torn down
    static let threadState = PayloadKinds(rawValue: 1 << 13)    // a thread's scheduler counters at a frame phase
    static let machineState = PayloadKinds(rawValue: 1 << 14)   // machine-wide scheduler counters
    static let schedSwitch = PayloadKinds(rawValue: 1 << 15)    // an exact context switch
    /// What others publish, read in `takePublished` (`PassContext`): finished stage instances,
    /// body evaluations, main-thread samples, judged hitching frames.
    static let publishedStages = PayloadKinds(rawValue: 1 << 11)
    static let publishedBody = PayloadKinds(rawValue: 1 << 16)
    static let publishedFrames = PayloadKinds(rawValue: 1 << 17)
    static let publishedSamples = PayloadKinds(rawValue: 1 << 18)
    static let published: PayloadKinds = [.publishedStages, .publishedBody, .publishedFrames, .publishedSamples]
}

extension TraceEvent.Payload {
    /// The one kind bit of this payload (0 for records the dispatcher keeps to itself).
    @inline(__always)
    var passKind: PayloadKinds {
        switch self {
        case .intervalBegin, .intervalEnd, .intervalComplete, .asyncIntervalBegin, .asyncIntervalEnd: .intervals
        case .instant: .instant
        case .counter: .counter
        case .frameBegan, .frameCommitted, .frameRenderEnded, .framePresented: .frames
        case .bodyEvaluation: .body
        case .invalidation: .invalidation
        case .layoutPass: .layoutPass
        case .inferenceOp: .inferenceOp
        case .token: .token
        case .interactionBegin, .interactionEnd: .interaction
        case .sample: .sample
        case .viewLifetime: .viewLifetime
        case .threadState: .threadState
        case .machineState: .machineState
        case .schedSwitch: .schedSwitch
        case .stackDefinition, .symbol, .metadata, .droppedEvents: []
        }
    }
}

/// One event as the dispatcher hands it to passes: times clamped (docs/METRICS.md "Hostile
/// timestamps"), the thread's role known, the payload's names resolved to `NameTable` indexes.
struct PassEvent: Sendable {
    var startNs: Int64
    /// The end of a payload that spans time, else `startNs`.
    var endNs: Int64
    var thread: ThreadID
    var role: FrameThreadRole
    /// The payload's first name (interval, instant category, counter, body view type, op, invalidation
    /// source), -1 when it has none.
    var name: Int32
    /// The payload's second name (op compute unit, invalidation target, instant name), -1 when it has none.
    var secondName: Int32
}

/// What passes share: the run's tables, and what passes publish for the ones after them.
struct PassContext: Sendable {
    let options: AnalyzerOptions
    /// Strings interned across runs.
    var names = NameTable()
    var threadNames = NameTable()
    /// Dense thread name index per ThreadID (this run).
    var threadNameIndex: [Int32] = []
    var roles = FrameThreadRoles()
    /// This run's stack definitions and symbols (prepared before passes end the run).
    var stacks = StackStore()
    var run = -1
    /// The run's first event time (final only at `endRun`).
    var runStartNs: Int64 = .max
    /// How far this run is known to be complete (`EventOrder`); its `latestNs` is the run's last event time.
    var order = EventOrder()
    var runMetadata: [String: String] = [:]
    /// No frame judged from now on in this run has a window that starts before this (`FramePass`;
    /// .min while unknown): attribution drops history that ended earlier. Moves only on frame events.
    var frameWindowsFromNs: Int64 = .min
    /// The stage name (`NameTable` index) of each of `Analysis.stages`, in their order (set when
    /// StageCostPass contributes): later passes add to a stage's figures by position.
    var stageFigureNames: [Int32] = []

    // Published, in order, and handed to the passes that read them (`takePublished`) in batches:
    // after an event that judged frames (the instances published before them first) or that filled
    // a batch, and at the end of a run. A pass called every event for every instance cost more than
    // what it did with them.
    var finishedStages = EventScratch<StageInstance>()
    var bodies = EventScratch<BodyInstance>()
    var mainThreadSamples = EventScratch<SampleInstance>()
    /// Judged hitching frames: handed over in the event that judged them.
    var judgedFrames = EventScratch<(FrameRecord, JudgedFrame)>()
    /// Instances held before they are handed over (a power of two: `publishedAreDue`).
    static let publishedBatch = 256

    init(options: AnalyzerOptions) { self.options = options }

    /// Whether the readers of what was published are due now (at the end of an event): a judged frame,
    /// or a full batch. One compare per event: the batch is a power of two, so a count reaches it exactly
    /// when the count has a bit at or above the batch's, and or-ing the counts keeps every such bit.
    @inline(__always)
    var publishedAreDue: Bool {
        (judgedFrames.endIndex &* Self.publishedBatch | finishedStages.endIndex | bodies.endIndex | mainThreadSamples.endIndex)
            >= Self.publishedBatch
    }

    @inline(__always)
    mutating func clearPublished() {
        finishedStages.removeAll()
        bodies.removeAll()
        mainThreadSamples.removeAll()
        judgedFrames.removeAll()
    }
}

/// A list refilled for every batch: emptying it only resets its count (the storage stays and is
/// overwritten), where `Array.removeAll(keepingCapacity:)` cost more than the attribution it fed.
/// Elements past the count are kept until overwritten: at most one batch's worth.
struct EventScratch<Element: Sendable>: Sendable, RandomAccessCollection {
    private var storage: [Element] = []
    private(set) var endIndex = 0
    var startIndex: Int { 0 }

    @inline(__always)
    subscript(index: Int) -> Element { storage[index] }

    @inline(__always)
    mutating func append(_ element: Element) {
        if endIndex < storage.count { storage[endIndex] = element } else { storage.append(element) }
        endIndex += 1
    }

    /// The elements, for a tight loop without a bounds check per element.
    @inline(__always)
    func withElements<Result>(_ body: (UnsafeBufferPointer<Element>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[..<endIndex])) }
    }

    @inline(__always)
    mutating func removeAll() { endIndex = 0 }
}

protocol AnalysisPass: Sendable {
    /// The payload kinds `consume` is called for.
    static var reads: PayloadKinds { get }
    mutating func beginRun(_ context: inout PassContext)
    /// `event` is inout only so it is passed by address: read, never changed.
    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext)
    /// What the passes before this one published (`PassContext`), for a pass whose `reads` has a
    /// `published…` kind; the dispatcher empties it afterwards. A pass ending a run takes the rest
    /// in its `endRun`.
    mutating func takePublished(_ context: inout PassContext)
    mutating func endRun(_ context: inout PassContext)
    /// Adds this pass's figures (and warnings) to `analysis`; earlier passes' figures are already in.
    func contribute(to analysis: inout Analysis, _ context: inout PassContext)
}

extension AnalysisPass {
    mutating func beginRun(_ context: inout PassContext) {}
    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {}
    mutating func takePublished(_ context: inout PassContext) {}
    mutating func endRun(_ context: inout PassContext) {}
}

/// An operation applied to every registered pass, in registration order.
protocol PassVisitor {
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass)
}

/// Every pass, in the order they see each event and contribute (a pass reads what the passes before
/// it published or contributed). The one place to register a pass.
struct AnalysisPasses: Sendable {
    var stages = StageCostPass()
    var frames: FramePass
    var views = ViewUpdatesPass()
    var identityChurn = IdentityChurnPass()
    var invalidations = InvalidationGraphPass()
    var decode = DecodeBandwidthPass()
    var tokens = TokenDeliveryPass()
    var samples = SampleProfilePass()
    var attribution = HitchAttributionPass()
    var threadStates = ThreadStatePass()

    init(options: AnalyzerOptions) { frames = FramePass(options: options) }

    @inline(__always)
    mutating func visit<Visitor: PassVisitor>(_ visitor: inout Visitor) {
        visitor.visit(&stages)
        visitor.visit(&frames)
        visitor.visit(&views)
        visitor.visit(&identityChurn)
        visitor.visit(&invalidations)
        visitor.visit(&decode)
        visitor.visit(&tokens)
        visitor.visit(&samples)
        visitor.visit(&attribution)
        visitor.visit(&threadStates)
    }

    /// Hands one event to every pass that reads its kind, and what was published to the passes
    /// reading it when due (`PassContext`). The kind is switched on once and passed on as a type, so
    /// each case's `Pass.reads` checks fold at compile time: a case calls exactly its readers.
    @inline(__always)
    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        switch event.payload.passKind {
        case .intervals: consume(IntervalsKind.self, &event, resolved, &context)
        case .instant: consume(InstantKind.self, &event, resolved, &context)
        case .counter: consume(CounterKind.self, &event, resolved, &context)
        case .frames: consume(FramesKind.self, &event, resolved, &context)
        case .body: consume(BodyKind.self, &event, resolved, &context)
        case .invalidation: consume(InvalidationKind.self, &event, resolved, &context)
        case .layoutPass: consume(LayoutPassKind.self, &event, resolved, &context)
        case .inferenceOp: consume(InferenceOpKind.self, &event, resolved, &context)
        case .token: consume(TokenKind.self, &event, resolved, &context)
        case .interaction: consume(InteractionKind.self, &event, resolved, &context)
        case .sample: consume(SampleKind.self, &event, resolved, &context)
        case .viewLifetime: consume(ViewLifetimeKind.self, &event, resolved, &context)
        case .threadState: consume(ThreadStateKind.self, &event, resolved, &context)
        case .machineState: consume(MachineStateKind.self, &event, resolved, &context)
        case .schedSwitch: consume(SchedSwitchKind.self, &event, resolved, &context)
        case let kind: assert(kind.isEmpty, "a payload kind without a case in AnalysisPasses.consume")
        }
        if context.publishedAreDue { handOverPublished(&context) }
    }

    /// One kind's readers, in registration order.
    @inline(__always)
    private mutating func consume<Kind: StaticPayloadKind>(_ kind: Kind.Type, _ event: inout TraceEvent, _ resolved: PassEvent,
                                                           _ context: inout PassContext) {
        withUnsafeMutablePointer(to: &event) { event in
            withUnsafeMutablePointer(to: &context) { context in
                var visitor = Consume<Kind>(event: event, context: context, resolved: resolved)
                visit(&visitor)
            }
        }
    }

    /// Out of the per-event path: once per batch.
    @inline(never)
    mutating func handOverPublished(_ context: inout PassContext) {
        withUnsafeMutablePointer(to: &context) { context in
            var visitor = TakePublished(context: context)
            visit(&visitor)
        }
        context.clearPublished()
    }
}

// The dispatcher's operations over every pass.

struct BeginRun: PassVisitor {
    var context: PassContext
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) { pass.beginRun(&context) }
}

struct Consume<Kind: StaticPayloadKind>: PassVisitor {
    let event: UnsafeMutablePointer<TraceEvent>
    let context: UnsafeMutablePointer<PassContext>
    let resolved: PassEvent
    @inline(__always)
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) {
        if Pass.reads.contains(Kind.kind) { pass.consume(&event.pointee, resolved, &context.pointee) }
    }
}

/// A payload kind as a type: the dispatcher's per-kind code is specialized for it, so
/// `Pass.reads.contains(Kind.kind)` is a constant there.
protocol StaticPayloadKind { static var kind: PayloadKinds { get } }
enum IntervalsKind: StaticPayloadKind { static var kind: PayloadKinds { .intervals } }
enum InstantKind: StaticPayloadKind { static var kind: PayloadKinds { .instant } }
enum CounterKind: StaticPayloadKind { static var kind: PayloadKinds { .counter } }
enum FramesKind: StaticPayloadKind { static var kind: PayloadKinds { .frames } }
enum BodyKind: StaticPayloadKind { static var kind: PayloadKinds { .body } }
enum InvalidationKind: StaticPayloadKind { static var kind: PayloadKinds { .invalidation } }
enum LayoutPassKind: StaticPayloadKind { static var kind: PayloadKinds { .layoutPass } }
enum InferenceOpKind: StaticPayloadKind { static var kind: PayloadKinds { .inferenceOp } }
enum TokenKind: StaticPayloadKind { static var kind: PayloadKinds { .token } }
enum InteractionKind: StaticPayloadKind { static var kind: PayloadKinds { .interaction } }
enum SampleKind: StaticPayloadKind { static var kind: PayloadKinds { .sample } }
enum ViewLifetimeKind: StaticPayloadKind { static var kind: PayloadKinds { .viewLifetime } }
enum ThreadStateKind: StaticPayloadKind { static var kind: PayloadKinds { .threadState } }
enum MachineStateKind: StaticPayloadKind { static var kind: PayloadKinds { .machineState } }
enum SchedSwitchKind: StaticPayloadKind { static var kind: PayloadKinds { .schedSwitch } }

struct TakePublished: PassVisitor {
    let context: UnsafeMutablePointer<PassContext>
    @inline(__always)
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) {
        if !Pass.reads.isDisjoint(with: .published) { pass.takePublished(&context.pointee) }
    }
}

struct EndRun: PassVisitor {
    var context: PassContext
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) { pass.endRun(&context) }
}

struct Contribute: PassVisitor {
    var analysis: Analysis
    var context: PassContext
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) { pass.contribute(to: &analysis, &context) }
}
