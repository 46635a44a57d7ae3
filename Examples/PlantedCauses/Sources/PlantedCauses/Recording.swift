// One recording: the main thread's display-link loop, the render thread, the plants, the manifest.
import CPlanted
import Foundation
import HitchTrace

/// CPU work of every frame on the main thread and on the render thread.
let updateCPUMs = 2.0
let renderCPUMs = 2.0
/// The planted stalls.
let plantedStallMs = 40.0
/// How long before the planted frame's vsync the other process starts spinning.
let hogLeadNs: Int64 = 3_000_000

func record(_ options: Options) throws {
    guard planted_online_cpus() >= 2 else { throw PlantError("the pipelines need two CPUs online") }
    let shape = options.shape
    try FileManager.default.createDirectory(atPath: options.outDirectory, withIntermediateDirectories: true)
    let tracePath = options.outDirectory + "/trace.fxt"
    let manifestPath = options.outDirectory + "/manifest.json"

    let plantOrder = PlantKind.allCases
    var schedule: [UInt64: PlantKind] = [:]
    for (index, kind) in plantOrder.enumerated() { schedule[options.spacing * UInt64(index + 1)] = kind }
    let frameCount = options.spacing * UInt64(plantOrder.count + 2)

    // Everything that plants is set up before the recording starts.
    let coldFile = try ColdFile(path: options.outDirectory + "/cold.bin")
    defer { unlink(options.outDirectory + "/cold.bin") }
    let hogProcess = try HogProcess(cpu: shape.mainCPU, nice: options.nice, spinMs: options.spinMs)
    defer { hogProcess.stop() }

    let recorder = try TraceRecorder.start(path: tracePath)
    recorder.setMetadata("workload", "PlantedCauses")
    recorder.setMetadata("shape", shape.rawValue)
    recorder.setMetadata("refreshRateHz", "\(Int(options.refreshRateHz))")
    try pinCurrentThread(to: shape.mainCPU, "the main thread")
    Trace.setThreadRole(.main)

    let hogThread = try AppHogThread(cpu: shape.mainCPU, nice: options.nice, spinMs: options.spinMs)
    let lockHolder = SleepingLockHolder(sleepMs: plantedStallMs)
    let plants = PlantLog()
    let presents = PresentLog()
    let periodNs = Int64((1e9 / options.refreshRateHz).rounded())
    let display = Display(originNs: Trace.now().nanoseconds + periodNs, periodNs: periodNs)
    let commits = CommitQueue()
    let slots = DispatchSemaphore(value: shape.framesInFlight)
    let renderDone = DispatchSemaphore(value: 0)
    let renderSetUp = DispatchSemaphore(value: 0)
    let longRenderFrame = schedule.first { $0.value == .longRender }!.key

    let renderThread = Thread {
        Trace.setCurrentThreadName("planted.render")
        Trace.setThreadRole(.render)
        do { try pinCurrentThread(to: shape.renderCPU, "the render thread") } catch { print("PlantedCauses: \(error)") }
        renderSetUp.signal()
        var lastPresentNs = Int64.min
        for _ in 0..<frameCount {
            let frame = commits.pop()
            // The render starts at the first vsync at or after the commit, once the frame ahead of
            // it is on screen.
            let renderStartNs = display.firstVsync(atOrAfter: max(frame.committedNs, lastPresentNs))
            display.sleep(until: renderStartNs)
            Trace.frameRenderBegan(frameID: frame.frameID)
            let planted = frame.frameID == longRenderFrame
            let cpuStart = threadCPUNs()
            Trace.interval("render", category: .stage) {
                work(cpuMs: renderCPUMs + (planted ? plantedStallMs : 0))
            }
            Trace.frameRenderEnded(frameID: frame.frameID)
            if planted {
                plants.add(frame.frameID, .longRender, facts: [
                    "renderCPUMs": Double(threadCPUNs() - cpuStart) / 1e6,
                    "renderWallMs": Double(Trace.now().nanoseconds - renderStartNs) / 1e6,
                ])
            }
            slots.signal()
            // Shown at the first vsync after the render ends, at least a period after it began.
            let presentNs = display.firstVsync(atOrAfter: max(Trace.now().nanoseconds, renderStartNs + periodNs))
            display.sleep(until: presentNs)
            Trace.framePresented(frameID: frame.frameID, at: Trace.now())
            presents.record(frameID: frame.frameID, periods: Int((presentNs - (frame.vsyncNs + 2 * periodNs)) / periodNs))
            lastPresentNs = presentNs
        }
        renderDone.signal()
    }
    renderThread.start()
    renderSetUp.wait()

    for frameID in 0..<frameCount {
        // The display link fires at the first vsync after the main thread is free (a busy main
        // thread misses vsyncs; it is not called for each one it missed).
        let vsyncNs = display.firstVsync(after: Trace.now().nanoseconds)
        let plant = schedule[frameID]
        if plant == .otherProcessHigherPriority {
            // The other process starts spinning on the main thread's CPU just before the vsync: the
            // main thread, woken then, waits for the CPU from its wake-up on (its late start).
            display.sleep(until: vsyncNs - hogLeadNs)
            hogProcess.startSpin()
        }
        display.sleep(until: vsyncNs)
        Trace.frameBegan(frameID: frameID, vsync: TraceTimestamp(nanoseconds: vsyncNs),
                         target: TraceTimestamp(nanoseconds: vsyncNs + periodNs), periodNs: periodNs)
        // The app's own thread starts spinning once the frame has begun: the main thread waits for
        // the CPU inside its frame.
        if plant == .appThreadHigherPriority { hogThread.startSpin() }
        slots.wait()
        let wallStart = Trace.now().nanoseconds
        let cpuStart = threadCPUNs()
        try Trace.interval("update", category: .stage) {
            work(cpuMs: updateCPUMs)
            switch plant {
            case .mainWork?:
                work(cpuMs: plantedStallMs)
            case .lockHeldBySleepingHelper?:
                plants.add(frameID, .lockHeldBySleepingHelper, facts: ["lockWaitMs": lockHolder.waitForLock()])
            case .sleep?:
                usleep(UInt32(plantedStallMs * 1000))
            case .coldFileRead?:
                let read = try coldFile.readBlocks(blockedMs: plantedStallMs)
                plants.add(frameID, .coldFileRead, facts: ["reads": Double(read.count), "readCPUMs": read.cpuMs,
                                                           "readBlockedMs": read.blockedMs, "readRunnableMs": read.runnableMs,
                                                           "blockBytes": Double(ColdFile.blockBytes),
                                                           "directIO": coldFile.bypassesCache ? 1 : 0])
            default:
                break
            }
        }
        Trace.frameCommitted(frameID: frameID)
        let committedNs = Trace.now().nanoseconds
        commits.push(Commit(frameID: frameID, vsyncNs: vsyncNs, committedNs: committedNs))
        if let plant {
            plants.add(frameID, plant, facts: [
                "mainWallMs": Double(committedNs - wallStart) / 1e6,
                "mainCPUMs": Double(threadCPUNs() - cpuStart) / 1e6,
            ])
        }
        switch plant {
        case .otherProcessHigherPriority?:
            let spun = hogProcess.finishSpin()
            plants.add(frameID, .otherProcessHigherPriority, facts: [
                "hogOnCPUMs": spun.onCPUMs, "hogWallMs": spun.wallMs, "nice": Double(options.nice),
                "pid": Double(hogProcess.pid), "cpu": Double(shape.mainCPU), "startedBeforeVsyncMs": Double(hogLeadNs) / 1e6,
            ])
        case .appThreadHigherPriority?:
            let spun = hogThread.finishSpin()
            plants.add(frameID, .appThreadHigherPriority, facts: [
                "hogOnCPUMs": spun.onCPUMs, "hogWallMs": spun.wallMs, "nice": Double(options.nice),
                "tid": Double(spun.tid), "cpu": Double(shape.mainCPU),
            ], names: ["thread": AppHogThread.threadName])
        default:
            break
        }
        // The lock is taken a frame ahead, so the planted frame finds it held.
        if schedule[frameID + 1] == .lockHeldBySleepingHelper { lockHolder.takeLock() }
    }
    renderDone.wait()
    let summary = try recorder.stop()

    let manifest = Manifest(
        shape: shape.rawValue, refreshRateHz: options.refreshRateHz, frameCount: frameCount,
        framesInFlight: shape.framesInFlight, mainCPU: shape.mainCPU, renderCPU: shape.renderCPU,
        trace: "trace.fxt", events: summary.eventCount,
        plants: plants.all.map { Manifest.Plant(frame: $0.frameID, kind: $0.kind.rawValue, facts: $0.facts, names: $0.names) },
        periodsLate: presents.periodsLate(frameCount: frameCount))
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    try encoder.encode(manifest).write(to: URL(fileURLWithPath: manifestPath))
    print("PlantedCauses: \(shape.rawValue), \(frameCount) frames, \(manifest.plants.count) plants -> \(tracePath), \(manifestPath)")
}

/// What was planted, for the checker.
struct Manifest: Encodable {
    struct Plant: Encodable {
        let frame: UInt64
        let kind: String
        let facts: [String: Double]
        let names: [String: String]
    }
    let shape: String
    let refreshRateHz: Double
    let frameCount: UInt64
    let framesInFlight: Int
    let mainCPU: Int32
    let renderCPU: Int32
    let trace: String
    let events: UInt64
    let plants: [Plant]
    /// Each frame's present minus its expected present (vsync + two periods), in whole periods,
    /// as the app saw it (-1: never presented).
    let periodsLate: [Int]
}
