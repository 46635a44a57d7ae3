import HitchTrace

// The shape every analysis pass has (docs/METRICS.md "Passes"): it reads some kinds of events,
// ends a run, and contributes its figures to the `Analysis`. Passes talk to each other only
// through what they publish in `PassContext` (finished stage instances, body evaluations, judged
// frames) and through the `Analysis` the earlier passes have filled. To add a pass: write a type
// conforming to `AnalysisPass` and register it in `AnalysisPasses` (the one list).

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
    /// Passes that read what others publish are called after every event that published it:
    /// finished stage instances (`PassContext.finishedStages`), a body evaluation (`.body`), judged
    /// hitching frames (`.judgedFrames`). Three bits, so a pass that reads only judged frames is not
    /// called for every finished stage.
    static let publishedStages = PayloadKinds(rawValue: 1 << 11)
    static let publishedBody = PayloadKinds(rawValue: 1 << 16)
    static let publishedFrames = PayloadKinds(rawValue: 1 << 17)
    static let published: PayloadKinds = [.publishedStages, .publishedBody, .publishedFrames]
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
    var role: ThreadRole
    /// The payload's first name (interval, instant category, counter, body view type, op, invalidation
    /// source), -1 when it has none.
    var name: Int32
    /// The payload's second name (op compute unit, invalidation target), -1 when it has none.
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
    var roles = ThreadRoles()
    /// This run's stack definitions and symbols (prepared before passes end the run).
    var stacks = StackStore()
    var run = -1
    /// The run's first and last event times (final only at `endRun`).
    var runStartNs: Int64 = .max
    var runLastNs: Int64 = .min
    var runMetadata: [String: String] = [:]
    /// No frame judged from now on in this run has a window that starts before this (`FramePass`;
    /// .min while unknown): attribution drops history that ended earlier.
    var frameWindowsFromNs: Int64 = .min

    // Published during one event (emptied by the dispatcher after every pass has seen them).
    var finishedStages = EventScratch<StageInstance>()
    var body: BodyInstance?
    var judgedFrames = EventScratch<(FrameRecord, JudgedFrame)>()

    init(options: AnalyzerOptions) { self.options = options }

    @inline(__always)
    var hasPublished: Bool { !finishedStages.isEmpty || body != nil || !judgedFrames.isEmpty }

    /// Whether something a pass reading `kinds` reads was published for the current event.
    @inline(__always)
    func hasPublished(for kinds: PayloadKinds) -> Bool {
        (kinds.contains(.publishedStages) && !finishedStages.isEmpty) || (kinds.contains(.publishedBody) && body != nil)
            || (kinds.contains(.publishedFrames) && !judgedFrames.isEmpty)
    }

    @inline(__always)
    mutating func clearPublished() {
        finishedStages.removeAll()
        body = nil
        judgedFrames.removeAll()
    }
}

/// A list refilled for every event: emptying it only resets its count (the storage stays and is
/// overwritten), where `Array.removeAll(keepingCapacity:)` cost more than the attribution it fed.
/// Elements past the count are kept until overwritten: at most one event's worth.
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

    mutating func append(contentsOf other: EventScratch<Element>) {
        for element in other { append(element) }
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
    mutating func endRun(_ context: inout PassContext)
    /// Adds this pass's figures (and warnings) to `analysis`; earlier passes' figures are already in.
    func contribute(to analysis: inout Analysis, _ context: PassContext)
}

extension AnalysisPass {
    mutating func beginRun(_ context: inout PassContext) {}
    mutating func endRun(_ context: inout PassContext) {}
}

/// An operation applied to every registered pass, in registration order.
protocol PassVisitor {
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass)
}

/// Every pass, in the order they see each event and contribute (a pass reads what the passes before
/// it published or contributed). The one place to register a pass.
struct AnalysisPasses: Sendable {
    var stages = StageCost()
    var frames: FramePass
    var views = ViewUpdates()
    var identityChurn = IdentityChurn()
    var invalidations = InvalidationGraph()
    var decode = DecodeBandwidth()
    var tokens = TokenDelivery()
    var samples = SampleProfile()
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
}

// The dispatcher's operations over every pass.

struct BeginRun: PassVisitor {
    var context: PassContext
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) { pass.beginRun(&context) }
}

struct Consume: PassVisitor {
    let event: UnsafeMutablePointer<TraceEvent>
    let context: UnsafeMutablePointer<PassContext>
    let resolved: PassEvent
    let kind: PayloadKinds
    @inline(__always)
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) {
        if Pass.reads.contains(kind) || (!Pass.reads.isDisjoint(with: .published) && context.pointee.hasPublished(for: Pass.reads)) {
            pass.consume(&event.pointee, resolved, &context.pointee)
        }
    }
}

struct EndRun: PassVisitor {
    var context: PassContext
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) { pass.endRun(&context) }
}

struct Contribute: PassVisitor {
    var analysis: Analysis
    let context: PassContext
    mutating func visit<Pass: AnalysisPass>(_ pass: inout Pass) { pass.contribute(to: &analysis, context) }
}
