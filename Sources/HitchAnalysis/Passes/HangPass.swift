import HitchReader
import HitchTrace

/// Hangs (docs/METRICS.md "Hangs"): stretches in which the main thread did not get back to its frame
/// loop or run loop for at least the brief threshold. Found from the frame loop (a frame's main-thread
/// work, its begin to its commit), from hang events (the recorder's watchdog, or a platform's hang
/// table, imported: docs/FORMAT.md "Hangs"), and from the watchdog's captures of a hang the recording
/// ended in. Each gets the main thread's states over it (the frame's readings, as the hitch causes
/// read them), what it waited on, who woke it, and the stack seen most often during it. Everything is
/// collected per run and resolved when the run ends, so file order does not matter.
struct HangPass: AnalysisPass {
    static var reads: PayloadKinds { [.frames, .hang, .sample, .schedSwitch, .publishedFrames] }
    /// Bounds for a hostile trace, per run: stretches, captures and frames still open; main-thread samples.
    static let perRunLimit = 1 << 16
    static let sampleLimit = 1 << 20
    /// The source word of a stretch found from the frame loop.
    static let frameLoopSource = HangSourceWord.frameLoop

    /// One stretch away from the loop, as one source saw it.
    private struct Stretch: Sendable {
        var thread: UInt32
        var startNs: Int64
        var endNs: Int64
        var sources: [String]
        var type: String?
        var frameID: UInt64?
        var unfinished = false
    }
    /// One watchdog capture (`hangStack`).
    private struct Capture: Sendable {
        var thread: UInt32
        var atNs: Int64
        var sinceNs: Int64
        var stack: UInt32?
        var systemCall: String
        var waitChannel: String
        var schedState: UInt8
    }

    private let hangThresholdNs: Int64
    private let briefThresholdNs: Int64

    // Per run.
    /// Main-thread frames begun and not yet committed, one per thread: a loop that begins a frame is
    /// back from the one before (committed or not). A few slots, searched linearly (no hashing per
    /// frame); past them the oldest thread's is let go.
    private var openFrames: [(frameID: UInt64, thread: UInt32, beganNs: Int64)] = []
    static let openFrameSlots = 8
    private var stretches: [Stretch] = []
    private var captures: [Capture] = []
    private var samples: [(atNs: Int64, stack: UInt32)] = []
    /// The main thread's states in frames whose work was at least the brief threshold, by frame id.
    private var frameStates: [UInt64: StateSplit] = [:]
    private var switches = SwitchHistory(perThread: 1 << 16)
    /// Records past the bounds above (a hostile trace), over every run.
    private var dropped = 0

    // Over every run.
    private var sawLoop = false
    private var hangs = HangTotals.Tier(), briefs = HangTotals.Tier()
    private var recordedNs: Int64 = 0
    private var list: [HangDetail] = []
    private var listTruncated = false
    private var watchdogThresholdMs: Double?
    /// Hang events that name a type, per (source, type), as written (`HangFigures.byType`).
    private var byType: [HangTotals.TypeKey: HangTotals.Tier] = [:]

    init(options: AnalyzerOptions) {
        hangThresholdNs = Int64((options.hangThresholdMs * 1e6).rounded())
        briefThresholdNs = min(Int64((options.briefHangThresholdMs * 1e6).rounded()), hangThresholdNs)
    }

    mutating func beginRun(_ context: inout PassContext) {
        openFrames.removeAll(keepingCapacity: true)
        stretches.removeAll(keepingCapacity: true)
        captures.removeAll(keepingCapacity: true)
        samples.removeAll(keepingCapacity: true)
        frameStates.removeAll(keepingCapacity: true)
        switches.removeAll()
    }

    mutating func consume(_ event: inout TraceEvent, _ resolved: PassEvent, _ context: inout PassContext) {
        let thread = resolved.thread.rawValue
        switch event.payload {
        case .frameBegan(let began) where resolved.role == .main:
            sawLoop = true
            openFrames.removeAll { $0.thread == thread }
            if openFrames.count == Self.openFrameSlots { openFrames.removeFirst() }
            openFrames.append((began.frameID, thread, resolved.startNs))
        case .frameCommitted(let id):
            guard let index = openFrames.lastIndex(where: { $0.frameID == id }) else { break }
            let open = openFrames.remove(at: index)
            guard resolved.startNs - open.beganNs >= briefThresholdNs else { break }
            add(Stretch(thread: open.thread, startNs: open.beganNs, endNs: resolved.startNs, sources: [Self.frameLoopSource], frameID: id))
        case .hang:
            sawLoop = true
            let source = resolved.name >= 0 ? context.names[resolved.name] : ""
            let type = resolved.secondName >= 0 ? context.names[resolved.secondName] : ""
            add(Stretch(thread: thread, startNs: resolved.startNs, endNs: max(resolved.startNs, resolved.endNs),
                        sources: source.isEmpty ? [] : [source], type: type.isEmpty ? nil : type))
            if !type.isEmpty {
                let key = HangTotals.TypeKey(source: source, type: type)
                if byType[key] != nil || byType.count < HangTotals.typeLimit { byType[key, default: .init()].add(max(0, resolved.endNs - resolved.startNs)) } else { dropped += 1 }
            }
        case .hangStack(let capture):
            sawLoop = true
            guard captures.count < Self.perRunLimit else { dropped += 1; break }
            captures.append(Capture(thread: thread, atNs: resolved.startNs, sinceNs: clampedTime(capture.sinceNs), stack: capture.stack?.rawValue,
                                    systemCall: resolved.name >= 0 ? context.names[resolved.name] : "",
                                    waitChannel: resolved.secondName >= 0 ? context.names[resolved.secondName] : "",
                                    schedState: capture.schedState))
        case .sample(let stack) where resolved.role == .main:
            if samples.count < Self.sampleLimit { samples.append((resolved.startNs, stack.rawValue)) } else { dropped += 1 }
        case .schedSwitch(let change):
            switches.add(.init(atNs: resolved.startNs, out: change.direction == .switchedOut, preempted: change.preempted, cpu: change.cpu),
                         thread: thread)
        default:
            break
        }
    }

    private mutating func add(_ stretch: Stretch) {
        if stretches.count < Self.perRunLimit { stretches.append(stretch) } else { dropped += 1 }
    }

    mutating func takePublished(_ context: inout PassContext) {
        for (frame, judged) in context.judgedFrames where judged.mainWorkNs >= briefThresholdNs {
            if let states = judged.mainStates, frameStates.count < Self.perRunLimit { frameStates[frame.frameID] = states }
        }
    }

    mutating func endRun(_ context: inout PassContext) {
        takePublished(&context)
        if watchdogThresholdMs == nil, let text = context.runMetadata[MetadataKey.hangWatchdogMs], let ms = Double(text) { watchdogThresholdMs = ms }
        let runStart = context.runStartNs == .max ? 0 : context.runStartNs
        let runEnd = max(runStart, context.order.latestNs)
        recordedNs +|= runEnd - runStart
        // A frame begun on the main thread and never committed: the recording ended inside it.
        for open in openFrames where runEnd - open.beganNs >= briefThresholdNs {
            add(Stretch(thread: open.thread, startNs: open.beganNs, endNs: runEnd, sources: [Self.frameLoopSource], frameID: open.frameID, unfinished: true))
        }
        // The watchdog caught each stretch it captured; one no stretch holds never ended: to the run's end.
        for capture in captures {
            if let i = stretches.firstIndex(where: { $0.thread == capture.thread && $0.startNs <= capture.sinceNs && capture.sinceNs < $0.endNs }) {
                if !stretches[i].sources.contains(HangSourceWord.watchdog) { stretches[i].sources.append(HangSourceWord.watchdog) }
            } else {
                add(Stretch(thread: capture.thread, startNs: capture.sinceNs, endNs: max(runEnd, capture.atNs), sources: [HangSourceWord.watchdog], unfinished: true))
            }
        }
        samples.sort { ($0.atNs, $0.stack) < ($1.atNs, $1.stack) }
        for stretch in Self.merged(stretches) where stretch.endNs - stretch.startNs >= briefThresholdNs {
            let durationNs = stretch.endNs - stretch.startNs
            let tier: HangTier = durationNs >= hangThresholdNs ? .hang : .brief
            if tier == .hang { hangs.add(durationNs) } else { briefs.add(durationNs) }
            guard list.count < HangDetail.limit else { listTruncated = true; continue }
            list.append(detail(stretch, tier: tier, tierThresholdNs: tier == .hang ? hangThresholdNs : briefThresholdNs, runStart: runStart, context))
        }
    }

    /// Stretches of one thread that overlap are one: the union of their times and sources.
    private static func merged(_ stretches: [Stretch]) -> [Stretch] {
        let sorted = stretches.sorted { ($0.thread, $0.startNs, $0.endNs) < ($1.thread, $1.startNs, $1.endNs) }
        var result: [Stretch] = []
        for s in sorted {
            if var last = result.last, last.thread == s.thread, s.startNs < last.endNs || (s.startNs == last.startNs && s.endNs == last.endNs) {
                if s.endNs > last.endNs { last.endNs = s.endNs; last.unfinished = s.unfinished } else if s.endNs == last.endNs { last.unfinished = last.unfinished && s.unfinished }
                for source in s.sources where !last.sources.contains(source) { last.sources.append(source) }
                last.type = last.type ?? s.type
                last.frameID = last.frameID ?? s.frameID
                result[result.count - 1] = last
            } else {
                result.append(s)
            }
        }
        return result.sorted { ($0.startNs, $0.thread) < ($1.startNs, $1.thread) }
    }

    private func detail(_ s: Stretch, tier: HangTier, tierThresholdNs: Int64, runStart: Int64, _ context: PassContext) -> HangDetail {
        var d = HangDetail()
        d.run = context.run
        d.startMs = milliseconds(s.startNs - runStart)
        d.durationMs = milliseconds(s.endNs - s.startNs)
        d.tier = tier
        d.thread = context.threadName(s.thread)
        d.sources = s.sources.sorted()
        d.type = s.type
        d.frameID = s.frameID
        d.unfinished = s.unfinished
        let inHang = captures.filter { $0.thread == s.thread && $0.atNs >= s.startNs && $0.atNs <= s.endNs }
        let states = s.frameID.flatMap { frameStates[$0] }
        d.states = states?.figures

        // The stacks seen during it, folded by function names; what the sleeping ones waited on.
        var counts: [[String]: Int] = [:], waits: [HangWait: Int] = [:], waiters: [String: Int] = [:]
        func saw(_ stack: UInt32, asleepHint: HangWait?) {
            let frames = context.stacks.frames(stack, names: context.names)
            counts[frames, default: 0] += 1
            let leafKind = frames.first.flatMap(BlockingCalls.kind)
            if let kind = asleepHint ?? leafKind {
                waits[kind, default: 0] += 1
                if let waiter = frames.first(where: { !BlockingCalls.isBlocking($0) && !Self.lockWrappers.contains($0) && !Self.isUnnamed($0) }) {
                    waiters[waiter, default: 0] += 1
                }
            }
        }
        var low = 0, high = samples.count
        while low < high { let mid = (low + high) / 2; if samples[mid].atNs < s.startNs { low = mid + 1 } else { high = mid } }
        while low < samples.count, samples[low].atNs <= s.endNs { saw(samples[low].stack, asleepHint: nil); low += 1 }
        var letters: [UInt8: Int] = [:]
        for capture in inHang {
            letters[capture.schedState, default: 0] += 1
            let asleep = capture.schedState == UInt8(ascii: "S") || capture.schedState == UInt8(ascii: "D")
            let kind = asleep ? BlockingCalls.kind(systemCall: capture.systemCall, waitChannel: capture.waitChannel,
                                                   schedState: String(UnicodeScalar(capture.schedState))) : nil
            if let stack = capture.stack { saw(stack, asleepHint: kind) } else if let kind { waits[kind, default: 0] += 1 }
        }
        if let top = counts.max(by: { ($0.value, $1.key.joined(separator: ";")) < ($1.value, $0.key.joined(separator: ";")) }) {
            d.stack = top.key
            d.stackCount = top.value
        }
        d.stacks = counts.values.reduce(0, +)
        d.blockedOn = waits.max { ($0.value, $1.key.rawValue) < ($1.value, $0.key.rawValue) }?.key
        d.blockedIn = waiters.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key

        // The cause, from the states as a hitch's is judged: app work when its running time alone is
        // a stretch of its tier (the counterfactual without waiting); else the largest part not
        // running. Without states, from the watchdog's captures (running, against asleep).
        if let states {
            var cause = states.runningNs >= tierThresholdNs ? HitchCause.appWork : states.largestNotRunning
            if cause == .waitingForCPU,
               switches.cpuTakenNs(thread: s.thread, from: s.startNs, to: s.endNs, runnableNs: states.runnableNs) * 2 > states.runnableNs {
                cause = .waitingForAppThreads
            }
            d.cause = cause
        } else {
            let running = letters[UInt8(ascii: "R")] ?? 0
            let asleep = (letters[UInt8(ascii: "S")] ?? 0) + (letters[UInt8(ascii: "D")] ?? 0)
            d.cause = running > asleep ? .appWork : asleep > running ? .blocked : .unknown
        }
        // Woken from its last sleep by an app thread: a lock's holder releasing it, or another
        // wait's signaller (a sleep or I/O is ended by the kernel, never by a thread).
        if d.blockedOn == .lock || d.blockedOn == .otherWait, let sleep = switches.lastSleep(thread: s.thread, from: s.startNs, to: s.endNs),
           let waker = switches.waker(of: s.thread, switchedInAt: sleep.endNs, waitedNs: states?.runnableNs ?? 0) {
            d.wokenBy = context.threadName(waker)
        }
        return d
    }

    /// Lock functions between a blocking call and the code that took the lock: not "the function that waited".
    static let lockWrappers: Set<String> = ["pthread_mutex_lock", "___pthread_mutex_lock", "__pthread_mutex_lock", "__pthread_mutex_lock_full",
                                            "pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "syscall"]

    /// A frame without a function name (`libc.so.6+0x86129`, a bare address): inside a system library's
    /// blocking call (an internal symbol its file does not name), not the function that waited.
    static func isUnnamed(_ frame: String) -> Bool { frame.hasPrefix("0x") || frame.contains("+0x") }

    func contribute(to a: inout Analysis, _ context: inout PassContext) {
        var totals = HangTotals(hangThresholdNs: hangThresholdNs, briefThresholdNs: briefThresholdNs)
        totals.recordedNs = recordedNs
        totals.observed = sawLoop || hangs.count + briefs.count > 0
        totals.hangs = hangs
        totals.briefs = briefs
        totals.watchdogThresholdMs = watchdogThresholdMs
        totals.keepWorst(list)
        totals.mergeTypes(byType.map { HangTotals.TypeTotals(source: $0.key.source, type: $0.key.type, tier: $0.value) })
        context.mergeable.hangs = totals
        guard var f = totals.figures else { return }
        f.list = list
        f.listTruncated = listTruncated
        a.hangs = f
        if dropped > 0 { a.warnings.append("\(dropped) frame, hang or sample records past the hang analysis' bounds were not read: hang figures may miss them") }
    }
}
