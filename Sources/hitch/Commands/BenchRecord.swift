import CHitchSupport
import Dispatch
import Foundation
import HitchAnalysis
import HitchReader
import HitchTrace
import Synchronization

// `hitch bench record`: the recorder's cost per event against one bare timestamp read, measured
// side by side in one run, plus bytes on disk (against Chrome JSON for the same events) and reader
// throughput. Hidden: `--crash-test FILE` records until killed (the SIGKILL test uses it).
enum BenchRecord: Subcommand {
    static let name = "record"
    static let summary = "Recording cost per event against one bare timestamp read; reader throughput; thread-state reads per frame."
    static let help = """
    USAGE: hitch bench record [--format text|json] [--events N]

    Measures, in one run: ns per bare timestamp read (Trace.now), ns per recorded interval
    (begin + end, written as one complete event) on one thread and on two threads at once, their
    ratio, bytes per event on disk against the same events as Chrome trace JSON, and the reader's
    events/s and MB/s. Times are CPU time of the measuring thread (time spent descheduled by other
    processes on a shared machine is not counted); each figure is the best of 7 rounds.
    Build with -c release for meaningful numbers.

    Thread states (docs/FORMAT.md "Thread states"): the frame calls of a main thread (frameBegan,
    frameCommitted) and of a render thread (frameRenderBegan, frameRenderEnded, framePresented)
    are timed with thread-state reads off and on, alternating sessions in one run, each frame
    after a short sleep as after a vsync wait (a switch since the last read makes the first read
    of a frame the full one; its CPU time counts, the sleep does not); schedReadNsPerFrame is the
    extra CPU time per frame of the thread that pays more (target <= 2000 ns), with the default source
    (perf context switches where the kernel permits them); schedReadBySource has
    the same figures for the default and the procfs-only configuration (HITCH_SCHED_PERF=0), measured
    in the same run, sessions alternating. schedReadFloorNsPerFrame* is the floor under them: the
    same frames making only the system calls a frame's readings cannot do without (the CPU clock,
    the schedstat read, the CPU clock again), timed alongside; schedReadAboveFloorNsPerFrame is
    what Hitch adds above it (the thread where that is larger). machineReadNs is one read of the
    machine counters (on the writer thread, not on any frame path).

    OPTIONS:
      --format text|json    Output format (default: text).
      --events N            Intervals per round and thread (default: 300000).
      -h, --help            Show this help.

    EXAMPLES:
      hitch bench record --format json
    """

    struct Result: Codable {
        var events: Int
        var clock: String
        var ticksPerSecond: UInt64
        var timestampNs, intervalNs, intervalNsTwoThreads, intervalToTimestampRatio: Double
        var bytesPerEvent, chromeJsonBytesPerEvent, fxtToChromeJsonRatio: Double
        var readerEventsPerSecond, readerMBPerSecond: Double
        var droppedEvents, traceBytes: UInt64
        /// Extra CPU ns per frame of thread-state reads on the thread that pays more (main or render),
        /// then on each.
        var schedReadNsPerFrame, schedReadNsPerFrameMainThread, schedReadNsPerFrameRenderThread: Double
        /// The bare system calls of a frame's readings on the same frames (main / render pattern).
        var schedReadFloorNsPerFrameMainThread, schedReadFloorNsPerFrameRenderThread: Double
        /// The default source's cost above its floor, on the thread where that is larger.
        var schedReadAboveFloorNsPerFrame: Double

        /// The source the default "on" sessions used (metadata schedSource).
        var schedSource: String
        /// The default configuration, then the procfs-only one (context-switch events off).
        var schedReadBySource: [SchedReadCost]
        var machineReadNs: Double
    }

    struct SchedReadCost: Codable {
        /// The source the sessions used (metadata schedSource).
        var source: String
        var contextSwitchEvents: Bool
        var schedReadNsPerFrame, schedReadNsPerFrameMainThread, schedReadNsPerFrameRenderThread: Double
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        if let crashPath = try arguments.option("--crash-test") {
            _ = try arguments.positionals("bench record", count: 0...0, what: "no arguments")
            try recordUntilKilled(path: crashPath)
        }
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let events = try arguments.number("--events", in: 1000...100_000_000, default: 300_000)
        _ = try arguments.positionals("bench record", count: 0...0, what: "no arguments")
        let result = try measure(events: events)
        let procfs = result.schedReadBySource[result.schedReadBySource.count - 1]
        if format == "json" {
            try writeStandardOutput(JSONOutput.text(result))
        } else {
            try writeStandardOutputLine(String(format: """
                clock                       %@ (%llu ticks/s)
                timestamp read              %.2f ns
                interval, 1 thread          %.2f ns  (%.2fx a timestamp read; target <= 2.5x)
                interval, 2 threads         %.2f ns per interval per thread
                bytes per event             %.1f FXT vs %.1f Chrome JSON (%.3fx; target <= 0.25x)
                reader                      %.1f M events/s, %.0f MB/s (target >= 20 M events/s)
                dropped events              %llu
                thread-state reads          %.0f ns per frame (main %.0f, render %.0f; target <= 2000) via %@
                  floor (bare syscalls)     main %.0f, render %.0f ns per frame; Hitch above it %.0f ns
                  procfs only               %.0f ns per frame (main %.0f, render %.0f) via %@
                machine read                %.0f ns (writer thread)
                """, result.clock, result.ticksPerSecond, result.timestampNs, result.intervalNs, result.intervalToTimestampRatio,
                result.intervalNsTwoThreads, result.bytesPerEvent, result.chromeJsonBytesPerEvent, result.fxtToChromeJsonRatio,
                result.readerEventsPerSecond / 1e6, result.readerMBPerSecond, result.droppedEvents,
                result.schedReadNsPerFrame, result.schedReadNsPerFrameMainThread, result.schedReadNsPerFrameRenderThread,
                result.schedSource, result.schedReadFloorNsPerFrameMainThread,
                result.schedReadFloorNsPerFrameRenderThread, result.schedReadAboveFloorNsPerFrame, procfs.schedReadNsPerFrame, procfs.schedReadNsPerFrameMainThread,
                procfs.schedReadNsPerFrameRenderThread, procfs.source, result.machineReadNs))
        }
        return .ok
    }

    private static let rounds = 7

    static func measure(events: Int) throws -> Result {
        let path = NSTemporaryDirectory() + "hitch-bench-record-\(getpid()).fxt"
        defer { unlink(path) }
        _ = TraceClock.ticksPerSecond   // calibrate before timing anything

        // Bare timestamp reads.
        var timestampNs = Double.infinity
        var sink: UInt64 = 0
        for _ in 0..<rounds {
            let start = BenchClock.threadCPUNanoseconds()
            for _ in 0..<events { sink &+= Trace.now().ticks }
            timestampNs = min(timestampNs, Double(BenchClock.threadCPUNanoseconds() - start) / Double(events))
        }
        blackHole(sink)

        // Intervals: enough buffer memory that the writer never has to drop during a round.
        let bufferBytes = max(events * 32 * 3, 64 << 20)
        let recorder = try TraceRecorder.start(path: path, configuration: .init(bufferBytesPerThread: 256 << 10, maxBufferedBytes: bufferBytes))
        var intervalNs = Double.infinity
        for _ in 0..<rounds {
            intervalNs = min(intervalNs, recordIntervals(events))
        }
        var twoThreadNs = Double.infinity
        for _ in 0..<rounds {
            let perThread = PerThreadResults()
            let group = DispatchGroup()
            let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
            for _ in 0..<2 {
                group.enter()
                Thread {
                    ready.signal()
                    go.wait()
                    perThread.append(recordIntervals(events))
                    group.leave()
                }.start()
            }
            ready.wait(); ready.wait()
            go.signal(); go.signal()
            group.wait()
            twoThreadNs = min(twoThreadNs, perThread.mean)
        }
        let summary = try recorder.stop()

        // Bytes on disk against the same events as Chrome trace JSON.
        var reader = try TraceReader(path: path)
        var chromeBytes = "{\"traceEvents\":[".utf8.count + "]}".utf8.count
        var intervalsRead = 0
        var threads: [TraceThread] = []
        while let event = try reader.next() {
            guard case let .intervalComplete(category, name, endNs) = event.payload else { continue }
            intervalsRead += 1
            if Int(event.thread.rawValue) > threads.count { threads = reader.threads }
            let thread = threads[Int(event.thread.rawValue) - 1]
            let line = "{\"name\":\"\(reader.string(name))\",\"cat\":\"\(reader.string(category))\",\"ph\":\"X\",\"ts\":\(microseconds(event.timestampNs)),\"dur\":\(microseconds(endNs - event.timestampNs)),\"pid\":\(thread.processID),\"tid\":\(thread.threadID)}"
            chromeBytes += line.utf8.count + (intervalsRead > 1 ? 1 : 0)
        }
        let fileBytes = summary.bytesWritten

        // Reader throughput: best of 3 full passes.
        var bestSeconds = Double.infinity
        var eventsPerPass = 0
        for _ in 0..<3 {
            let start = BenchClock.threadCPUNanoseconds()
            var pass = try TraceReader(path: path)
            var count = 0
            while try pass.next() != nil { count += 1 }
            bestSeconds = min(bestSeconds, Double(BenchClock.threadCPUNanoseconds() - start) / 1e9)
            eventsPerPass = count
        }
        let sched = try measureSchedReads(frames: 500, path: path + ".sched")
        let bytesPerEvent = Double(fileBytes) / Double(max(intervalsRead, 1))
        let chromePerEvent = Double(chromeBytes) / Double(max(intervalsRead, 1))
        return Result(
            events: events, clock: TraceClock.usesTSC ? "tsc" : "clock_gettime", ticksPerSecond: TraceClock.ticksPerSecond,
            timestampNs: timestampNs, intervalNs: intervalNs, intervalNsTwoThreads: twoThreadNs,
            intervalToTimestampRatio: intervalNs / timestampNs, bytesPerEvent: bytesPerEvent,
            chromeJsonBytesPerEvent: chromePerEvent, fxtToChromeJsonRatio: bytesPerEvent / chromePerEvent,
            readerEventsPerSecond: Double(eventsPerPass) / bestSeconds,
            readerMBPerSecond: Double(fileBytes) / 1e6 / bestSeconds,
            droppedEvents: summary.droppedEventCount,
            traceBytes: fileBytes,
            schedReadNsPerFrame: sched.bySource[0].schedReadNsPerFrame,
            schedReadNsPerFrameMainThread: sched.bySource[0].schedReadNsPerFrameMainThread,
            schedReadNsPerFrameRenderThread: sched.bySource[0].schedReadNsPerFrameRenderThread,
            schedReadFloorNsPerFrameMainThread: sched.floor.main, schedReadFloorNsPerFrameRenderThread: sched.floor.render,
            schedReadAboveFloorNsPerFrame: max(sched.bySource[0].schedReadNsPerFrameMainThread - sched.floor.main,
                                               sched.bySource[0].schedReadNsPerFrameRenderThread - sched.floor.render),
            schedSource: sched.bySource[0].source, schedReadBySource: sched.bySource, machineReadNs: sched.machine)
    }

    /// Frame calls with thread-state reads off, on (default source) and on with procfs only,
    /// alternating sessions, best of `rounds` each: the extra CPU ns per frame of a main thread
    /// (2 reads) and a render thread (3 reads), per configuration; and, timed between the sessions
    /// on the same frame pattern, the floor: the bare system calls of those reads.
    static func measureSchedReads(frames: Int, path: String) throws
        -> (bySource: [SchedReadCost], floor: (main: Double, render: Double), machine: Double) {
        defer { unlink(path) }
        // Sessions: reads off, on with context-switch events (the default), on without them.
        let sessions: [(threadStates: Bool, switchEvents: Bool)] = [(false, false), (true, true), (true, false)]
        var mainNs = [Double](repeating: .infinity, count: 3), renderNs = [Double](repeating: .infinity, count: 3)
        var sources = ["none", "none", "none"]
        var floorNs: [(main: Double, render: Double)] = [(.infinity, .infinity), (.infinity, .infinity)]   // without, with the calls
        for _ in 0..<rounds {
            for (index, bare) in [false, true].enumerated() {
                floorNs[index].main = min(floorNs[index].main, floorFrames(frames, bareReads: bare, presentWait: false))
                floorNs[index].render = min(floorNs[index].render, floorFrames(frames, bareReads: bare, presentWait: true))
            }
            for (index, session) in sessions.enumerated() {
                let recorder = try TraceRecorder.start(path: path, configuration: .init(threadStates: session.threadStates,
                                                                                        contextSwitchEvents: session.switchEvents))
                mainFrames(1, from: 0)   // the first reading opens the thread's files: not timed
                let main = mainFrames(frames, from: 1), render = renderFrames(frames)
                try recorder.stop()
                mainNs[index] = min(mainNs[index], main)
                renderNs[index] = min(renderNs[index], render)
                if session.threadStates {
                    var reader = try TraceReader(path: path)
                    while try reader.next() != nil {}
                    sources[index] = reader.metadata[MetadataKey.schedSource] ?? "none"
                }
            }
        }
        var machineNs = Double.infinity
        for _ in 0..<rounds {
            var reading = hitch_machine_reading()
            let start = BenchClock.threadCPUNanoseconds()
            for _ in 0..<20 { hitch_machine_read(&reading) }
            machineNs = min(machineNs, Double(BenchClock.threadCPUNanoseconds() - start) / 20)
        }
        let bySource = [1, 2].map { index in
            let main = max(0, mainNs[index] - mainNs[0]), render = max(0, renderNs[index] - renderNs[0])
            return SchedReadCost(source: sources[index], contextSwitchEvents: sessions[index].switchEvents,
                                 schedReadNsPerFrame: max(main, render), schedReadNsPerFrameMainThread: main,
                                 schedReadNsPerFrameRenderThread: render)
        }
        let floor = (main: max(0, floorNs[1].main - floorNs[0].main), render: max(0, floorNs[1].render - floorNs[0].render))
        return (bySource, floor, machineNs)
    }

    /// CPU ns per frame of the floor: after the same wait as mainFrames (and renderFrames' second
    /// wait, for the present, when `presentWait`), the bare system calls of the frame's readings,
    /// or nothing (the baseline, which takes out the timing itself).
    private static func floorFrames(_ count: Int, bareReads: Bool, presentWait: Bool) -> Double {
        var total: UInt64 = 0
        for _ in 0..<count {
            usleep(20)
            var start = BenchClock.threadCPUNanoseconds()
            if bareReads { hitch_thread_read_floor() }
            total += BenchClock.threadCPUNanoseconds() - start
            if presentWait {
                usleep(20)
                start = BenchClock.threadCPUNanoseconds()
                total += BenchClock.threadCPUNanoseconds() - start
            }
        }
        return Double(total) / Double(count)
    }

    /// CPU ns per frame of a main thread's frame calls, each frame after a wait (as for its vsync).
    @discardableResult
    private static func mainFrames(_ count: Int, from first: UInt64) -> Double {
        let now = Trace.now()
        var total: UInt64 = 0
        for frame in first..<first + UInt64(count) {
            usleep(20)
            let start = BenchClock.threadCPUNanoseconds()
            Trace.frameBegan(frameID: frame, vsync: now, target: now, periodNs: 8_333_333)
            Trace.frameCommitted(frameID: frame)
            total += BenchClock.threadCPUNanoseconds() - start
        }
        return Double(total) / Double(count)
    }

    /// CPU ns per frame of a render thread's frame calls, with its waits for the render and present vsyncs.
    private static func renderFrames(_ count: Int) -> Double {
        var total: UInt64 = 0
        for frame in 1...UInt64(count) {
            usleep(20)
            var start = BenchClock.threadCPUNanoseconds()
            Trace.frameRenderBegan(frameID: frame)
            Trace.frameRenderEnded(frameID: frame)
            total += BenchClock.threadCPUNanoseconds() - start
            usleep(20)
            start = BenchClock.threadCPUNanoseconds()
            Trace.framePresented(frameID: frame, at: Trace.now())
            total += BenchClock.threadCPUNanoseconds() - start
        }
        return Double(total) / Double(count)
    }

    /// ns per interval (begin + end) over `count` intervals on the calling thread.
    private static func recordIntervals(_ count: Int) -> Double {
        let start = BenchClock.threadCPUNanoseconds()
        for _ in 0..<count {
            let interval = Trace.beginInterval("interval")
            Trace.endInterval(interval)
        }
        return Double(BenchClock.threadCPUNanoseconds() - start) / Double(count)
    }

    private static func microseconds(_ ns: Int64) -> String {
        let whole = ns / 1000, fraction = abs(ns % 1000)
        return "\(whole)." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + "\(fraction)"
    }

    @inline(never) private static func blackHole(_ value: UInt64) {
        if value == 42 { print("", terminator: "") }
    }

    /// Records intervals on two threads forever (until SIGKILL), after announcing the first flush on stdout.
    private static func recordUntilKilled(path: String) throws -> Never {
        let recorder = try TraceRecorder.start(path: path, configuration: .init(bufferBytesPerThread: 16 << 10, flushIntervalMs: 5))
        recorder.setMetadata(.workload, "crash-test")
        for _ in 0..<2 {
            Thread {
                var i: UInt64 = 0
                while true {
                    Trace.bodyEvaluation(viewType: "CrashRow", identity: i) { i &+= 1 }
                    Trace.instant("tick", category: "crash")
                }
            }.start()
        }
        let line = "recording\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
        while true { pause() }
    }
}

/// Per-thread results gathered under a lock.
private final class PerThreadResults: Sendable {
    private let values = Mutex<[Double]>([])
    func append(_ value: Double) { values.withLock { $0.append(value) } }
    var mean: Double { values.withLock { $0.reduce(0, +) / Double(max($0.count, 1)) } }
}
