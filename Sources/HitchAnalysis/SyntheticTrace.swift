import HitchReader
import HitchTrace

/// A seeded generator of realistic feed-like traces (120 Hz frames with nested stages, body
/// evaluations, invalidations, input, main-thread samples; now and then a slow frame), for the
/// analyzer benchmark and scale tests. Deterministic for a seed.
public struct SyntheticTrace {
    public var seed: UInt64
    public var periodNs: Int64 = 8_333_333
    /// About one frame in this many runs long (6-16 ms of extra main-thread work): halve it for
    /// twice the hitch time (the planted regression `hitch diff` is tested on).
    public var slowFrameOneIn: Int64 = 97
    /// Writes the main and render threads' scheduler readings at each frame's phases, and machine
    /// readings every 8 frames (the scheduler records): a slow frame's extra time is then on the CPU,
    /// runnable, or asleep, a third of the slow frames each.
    public var threadStates = false
    private var state: UInt64

    public init(seed: UInt64 = 1) { self.seed = seed; state = seed | 1 }

    private mutating func random(_ bound: Int64) -> Int64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int64((state >> 33) % UInt64(max(1, bound)))
    }

    /// Writes frames until the file reaches `targetBytes` (or `maxFrames`); returns (frames, events).
    public mutating func write(to writer: TraceFileWriter, targetBytes: UInt64, maxFrames: Int = .max) -> (frames: Int, events: Int) {
        // Thread ids apart from the process id (1): the reader names koids, and a shared koid would share a name.
        let main = writer.thread(name: "main", threadID: 1001), render = writer.thread(name: "render", threadID: 1002)
        let worker = writer.thread(name: "worker", threadID: 1003)
        writer.setMetadata(.workload, "synthetic")
        writer.setMetadata(.refreshRateHz, Analyzer.rateKey((1e9 / Double(periodNs)).rounded()))
        let stage = writer.string("stage"), input = writer.string(HitchCategory.input.string), key = writer.string("keystroke")
        let stageNames = ["filter", "sort", "layout", "row body", "commit", "image decode"].map { writer.string($0) }
        let views = ["FeedRow", "Thumbnail", "SearchField", "Header"].map { writer.string($0) }
        let source = writer.string("FeedModel.query"), scroll = writer.string("scroll")
        for i in 0..<16 { writer.write(TraceEvent(timestampNs: 0, thread: main, payload: .stackDefinition(stack: StackID(rawValue: UInt32(i)), addresses: [0x1000 + UInt64(i) * 16, 0x2000, 0x3000]))) }
        var events = 16
        var frame: UInt64 = 0
        var t: Int64 = 1_000_000
        // Cumulative counters of the main and render threads, and the machine's steal (2 CPUs).
        var mainCPU: Int64 = 0, mainWait: Int64 = 0, mainVoluntary: Int64 = 0, mainInvoluntary: Int64 = 0
        var renderCPU: Int64 = 0, steal: Int64 = 0
        func reading(_ id: UInt64, _ phase: FramePhase, cpu: Int64, wait: Int64, voluntary: Int64, involuntary: Int64) -> TraceEvent.Payload {
            .threadState(ThreadStateReading(frameID: id, phase: phase, cpuNs: cpu, runnableWaitNs: wait,
                                            voluntarySwitches: voluntary, involuntarySwitches: involuntary))
        }
        writer.write(TraceEvent(timestampNs: t, thread: main, payload: .interactionBegin(kind: scroll)))
        while writer.byteCount < targetBytes && Int(frame) < maxFrames {
            let vsync = t
            if random(30) == 0 { writer.write(TraceEvent(timestampNs: vsync - 500_000, thread: main, payload: .instant(category: input, name: key))); events += 1 }
            writer.write(TraceEvent(timestampNs: vsync, thread: main, payload: .frameBegan(FrameBegan(frameID: frame, vsyncNs: vsync, targetNs: vsync + periodNs, periodNs: periodNs))))
            // Main-thread work: a few nested stages written in end order (children first).
            let slow = random(slowFrameOneIn) == 0 ? 6_000_000 + random(10_000_000) : 0
            var cursor = vsync + 50_000
            let parentStart = cursor
            for s in 0..<4 {
                let duration = 100_000 + random(400_000) + (s == 0 ? slow : 0)
                for b in 0..<3 {
                    let bodyStart = cursor + Int64(b) * 20_000
                    writer.write(TraceEvent(timestampNs: bodyStart, thread: main, payload: .bodyEvaluation(BodyEvaluation(viewType: views[Int(random(4))], identity: UInt64(b), endNs: bodyStart + 15_000))))
                }
                writer.write(TraceEvent(timestampNs: cursor, thread: main, payload: .intervalComplete(category: stage, name: stageNames[s], endNs: cursor + duration)))
                writer.write(TraceEvent(timestampNs: cursor + duration / 2, thread: main, payload: .sample(stack: StackID(rawValue: UInt32(random(16))))))
                cursor += duration + 10_000
                events += 5
            }
            writer.write(TraceEvent(timestampNs: parentStart, thread: main, payload: .intervalComplete(category: stage, name: stageNames[4], endNs: cursor)))
            writer.write(TraceEvent(timestampNs: cursor, thread: main, payload: .invalidation(Invalidation(source: source, target: views[0], targetIdentity: frame % 50, stack: nil))))
            writer.write(TraceEvent(timestampNs: cursor, thread: main, payload: .frameCommitted(frameID: frame)))
            if threadStates {
                writer.write(TraceEvent(timestampNs: vsync, thread: main, payload: reading(frame, .frameBegan, cpu: mainCPU, wait: mainWait,
                                                                                           voluntary: mainVoluntary, involuntary: mainInvoluntary)))
                // The slow part: on the CPU, runnable, or asleep.
                let kind = slow > 0 ? random(3) : 0
                let notRunning = kind == 0 ? 0 : slow * 3 / 4
                let asleep = kind == 2
                mainCPU += (cursor - vsync) - notRunning
                if asleep { mainVoluntary += 1 } else if notRunning > 0 { mainWait += notRunning; mainInvoluntary += 1 }
                writer.write(TraceEvent(timestampNs: cursor, thread: main, payload: reading(frame, .committed, cpu: mainCPU, wait: mainWait,
                                                                                            voluntary: mainVoluntary, involuntary: mainInvoluntary)))
                if frame % 8 == 0 {
                    steal += random(200_000)
                    writer.write(TraceEvent(timestampNs: vsync, thread: main, payload: .machineState(MachineStateReading(
                        stealNs: steal, cpuPressureSomeUs: steal / 2_000, cgroupThrottledUs: nil, onlineCPUs: 2))))
                }
                events += 2
            }
            let workerStart = vsync + 200_000
            writer.write(TraceEvent(timestampNs: workerStart, thread: worker, payload: .intervalComplete(category: stage, name: stageNames[5], endNs: workerStart + 2_000_000)))
            let renderStart = vsyncAtOrAfter(cursor, anchor: vsync, period: periodNs)
            let renderEnd = renderStart + 1_000_000 + random(2_000_000)
            if threadStates {
                writer.write(TraceEvent(timestampNs: renderStart, thread: render, payload: reading(frame, .renderBegan, cpu: renderCPU, wait: 0, voluntary: 0, involuntary: 0)))
                renderCPU += renderEnd - renderStart
                writer.write(TraceEvent(timestampNs: renderEnd, thread: render, payload: reading(frame, .renderEnded, cpu: renderCPU, wait: 0, voluntary: 0, involuntary: 0)))
                events += 2
            }
            writer.write(TraceEvent(timestampNs: renderEnd, thread: render, payload: .frameRenderEnded(frameID: frame)))
            writer.write(TraceEvent(timestampNs: renderStart + periodNs, thread: render, payload: .framePresented(frameID: frame)))
            events += 8
            frame += 1
            t = vsync + periodNs * (1 + (cursor - vsync) / periodNs)
        }
        writer.write(TraceEvent(timestampNs: t, thread: main, payload: .interactionEnd(kind: scroll)))
        return (Int(frame), events + 2)
    }
}
