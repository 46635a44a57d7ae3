import Foundation
import HitchReader
import HitchTrace
import Testing
@testable import HitchAnalysis

/// Hangs from hand-built traces with known answers (docs/METRICS.md "Hangs"): from the frame loop,
/// from hang events and the watchdog's captures, with their states, waits, wakers and stacks.
@Suite struct HangPassTests {
    static let ms = TraceBuilder.ms
    static let periodNs: Int64 = 16_666_667

    /// A 60 Hz loop from 0 to 10 s in which frame `long.id` does `long.workNs` of work, with the main
    /// thread's readings (running for `running` of each frame's work, asleep for the rest).
    static func loop(_ t: inout TraceBuilder, long: [(id: UInt64, workNs: Int64, runningNs: Int64)]) {
        var vsync: Int64 = 0, id: UInt64 = 0, cpu: Int64 = 0, voluntary: Int64 = 0
        let main = t.main
        while vsync < 9_800 * ms {
            let planted = long.first { $0.id == id }
            let work = planted?.workNs ?? 2 * ms, running = planted?.runningNs ?? 2 * ms
            t.list.append(vsync, main, .threadState(ThreadStateReading(frameID: id, phase: .frameBegan, cpuNs: cpu, runnableWaitNs: 0,
                                                                    voluntarySwitches: voluntary, involuntarySwitches: 0)))
            t.frame(id, vsyncNs: vsync, periodNs: periodNs, workNs: work)
            cpu += running
            if running < work { voluntary += 1 }
            t.list.append(vsync + work, main, .threadState(ThreadStateReading(frameID: id, phase: .committed, cpuNs: cpu, runnableWaitNs: 0,
                                                                           voluntarySwitches: voluntary, involuntarySwitches: 0)))
            vsync = vsyncAtOrAfter(vsync + work + 1, anchor: 0, period: periodNs)
            id += 1
        }
        // The recording ends at 10 s.
        t.list.append(10_000 * ms, t.render, .instant(category: t.list.intern("app"), name: t.list.intern("end")))
    }

    /// The worked example of docs/METRICS.md "Hangs": a 10 s recording at 60 Hz with a 300 ms frame
    /// of work on a CPU and a 150 ms frame asleep.
    @Test func aHangAndABriefStretchFromTheFrameLoop() throws {
        var t = TraceBuilder()
        Self.loop(&t, long: [(id: 60, workNs: 300 * Self.ms, runningNs: 298 * Self.ms), (id: 200, workNs: 150 * Self.ms, runningNs: 4 * Self.ms)])
        let a = try t.analyze(rates: [60])
        let h = try #require(a.hangs)
        #expect(h.recordedSeconds == 10)
        #expect(h.count == 1)
        #expect(h.totalMs == 300)
        #expect(h.longestMs == 300)
        #expect(abs(h.rateSecondsPerHour - 108) < 1e-9)   // 0.3 s in 10 s: 0.3 × 360
        #expect(h.brief.count == 1)
        #expect(h.brief.totalMs == 150)
        #expect(abs(h.brief.rateSecondsPerHour - 54) < 1e-9)
        #expect(h.list.count == 2)
        let hang = h.list[0], brief = h.list[1]
        #expect(hang.tier == .hang && hang.frameID == 60 && hang.durationMs == 300 && hang.sources == [HangSourceWord.frameLoop])
        #expect(hang.cause == .appWork)
        #expect(hang.states?.runningMs == 298 && hang.states?.blockedMs == 2)
        #expect(brief.tier == .brief && brief.frameID == 200 && brief.durationMs == 150 && brief.cause == .blocked)
        #expect(brief.states?.blockedMs == 146)
        #expect(hang.thread == "main")
    }

    @Test func thresholdsAreTheAnalysisOptions() throws {
        var t = TraceBuilder()
        Self.loop(&t, long: [(id: 60, workNs: 300 * Self.ms, runningNs: 300 * Self.ms), (id: 200, workNs: 150 * Self.ms, runningNs: 150 * Self.ms)])
        let a = try Analyzer.analyze([t.list], options: AnalyzerOptions(refreshRatesHz: [60], hangThresholdMs: 120, briefHangThresholdMs: 50))
        let h = try #require(a.hangs)
        #expect(h.count == 2 && h.brief.count == 0)
        #expect(h.hangThresholdMs == 120 && h.briefThresholdMs == 50)
        let strict = try Analyzer.analyze([t.list], options: AnalyzerOptions(refreshRatesHz: [60], hangThresholdMs: 500, briefHangThresholdMs: 200))
        #expect(strict.hangs?.count == 0 && strict.hangs?.brief.count == 1)
    }

    @Test func aLoopWithoutLongFramesHasNoHangsButSaysSo() throws {
        var t = TraceBuilder()
        Self.loop(&t, long: [])
        let h = try #require(try t.analyze(rates: [60]).hangs)
        #expect(h.count == 0 && h.brief.count == 0 && h.list.isEmpty && h.rateSecondsPerHour == 0)
    }

    @Test func aTraceWithoutAFrameLoopOrHangEventsCannotTell() throws {
        var t = TraceBuilder()
        t.stage("work", on: t.main, from: 0, to: 500 * Self.ms)
        #expect(try t.analyze().hangs == nil)
    }

    /// The watchdog's end of a stretch, and its captures (a thread asleep on a futex, its stack), merged
    /// with the frame that held it; the helper that released the lock named from the switch records.
    @Test func theWatchdogsCapturesSayWhatItWaitedOnAndWhoWokeIt() throws {
        var t = TraceBuilder()
        let frameStart: Int64 = 1_000 * Self.ms, end = frameStart + 400 * Self.ms
        Self.loop(&t, long: [])
        t.list.events.removeAll { $0.timestampNs >= frameStart - 20 * Self.ms && $0.timestampNs < end + 40 * Self.ms }
        let main = t.main, helper = t.list.thread("loader"), other = t.list.thread("feed.search")
        t.list.append(frameStart, main, .frameBegan(FrameBegan(frameID: 999, vsyncNs: frameStart, targetNs: frameStart + Self.periodNs, periodNs: Self.periodNs)))
        t.list.append(end, main, .frameCommitted(frameID: 999))
        t.list.append(frameStart, main, .hang(Hang(endNs: end, source: t.list.intern(HangSourceWord.watchdog), type: t.list.intern(""))))
        // A stack: the lock wait, called from the app's loader.
        t.list.append(0, ThreadID(rawValue: 0), .stackDefinition(stack: StackID(rawValue: 1), addresses: [0x1010, 0x2010, 0x3010]))
        for (address, name) in [(UInt64(0x1000), "__lll_lock_wait"), (0x2000, "pthread_mutex_lock"), (0x3000, "App.loadArchive()")] {
            t.list.append(0, ThreadID(rawValue: 0), .symbol(Symbol(address: address, size: 0x100, function: t.list.intern(name), image: t.list.intern("app"), offset: address)))
        }
        for k in 0..<4 {
            t.list.append(frameStart + Int64(100 + 50 * k) * Self.ms, main, .hangStack(HangStack(
                sinceNs: frameStart, stack: StackID(rawValue: 1), systemCall: t.list.intern("futex"), waitChannel: t.list.intern("futex_wait_queue"),
                schedState: UInt8(ascii: "S"))))
        }
        // The main thread sleeps from 1 ms into the frame until 2 ms before its end; the loader was
        // on CPU 1 (it woke from its own sleep 1 ms before it released the lock); the search thread
        // had been running on CPU 0 for 300 ms.
        func switched(_ at: Int64, _ thread: ThreadID, out: Bool, cpu: UInt16, preempted: Bool = false) {
            t.list.append(at, thread, .schedSwitch(SchedSwitch(direction: out ? .switchedOut : .switchedIn, preempted: preempted, cpu: cpu)))
        }
        switched(frameStart + 1 * Self.ms, main, out: true, cpu: 0)
        switched(frameStart + 10 * Self.ms, helper, out: true, cpu: 1)
        switched(end - 3 * Self.ms, helper, out: false, cpu: 1)
        switched(end - 100 * Self.ms - 300 * Self.ms, other, out: false, cpu: 0)
        switched(end - 2 * Self.ms + 20_000, main, out: false, cpu: 0)
        switched(end - 2 * Self.ms, other, out: true, cpu: 0, preempted: true)
        switched(end + 1 * Self.ms, helper, out: true, cpu: 1)
        // Each thread's events in time order (the recorder writes them so).
        t.list.events = t.list.events.enumerated().sorted { ($0.element.timestampNs, $0.offset) < ($1.element.timestampNs, $1.offset) }.map(\.element)
        let a = try t.analyze(rates: [60])
        let h = try #require(a.hangs)
        #expect(h.count == 1)
        let hang = try #require(h.list.first)
        #expect(hang.durationMs == 400)
        #expect(hang.sources == [HangSourceWord.frameLoop, HangSourceWord.watchdog])
        #expect(hang.blockedOn == .lock)
        #expect(hang.blockedIn == "App.loadArchive()")
        #expect(hang.wokenBy == "loader")
        #expect(hang.stack == ["__lll_lock_wait", "pthread_mutex_lock", "App.loadArchive()"])
        #expect(hang.stackCount == 4 && hang.stacks == 4)
        // No readings for this frame: the cause comes from the captures (asleep).
        #expect(hang.states == nil && hang.cause == .blocked)
    }

    /// A recording killed during a hang: the watchdog's captures are all that is left of it.
    @Test func aHangTheRecordingEndedInLastsToTheEnd() throws {
        var t = TraceBuilder()
        let main = t.main
        let vsync: Int64 = 2_000 * Self.ms
        t.list.append(0, main, .instant(category: t.list.intern("app"), name: t.list.intern("start")))
        t.list.append(vsync, main, .frameBegan(FrameBegan(frameID: 1, vsyncNs: vsync, targetNs: vsync + Self.periodNs, periodNs: Self.periodNs)))
        for k in 0..<3 {
            t.list.append(vsync + Int64(100 + 50 * k) * Self.ms, main, .hangStack(HangStack(
                sinceNs: vsync, stack: nil, systemCall: t.list.intern(""), waitChannel: t.list.intern(""), schedState: UInt8(ascii: "R"))))
        }
        t.list.append(vsync + 380 * Self.ms, t.render, .instant(category: t.list.intern("app"), name: t.list.intern("last")))
        let h = try #require(try t.analyze().hangs)
        let hang = try #require(h.list.first)
        #expect(h.count == 1 && hang.unfinished && hang.durationMs == 380 && hang.cause == .appWork)
        #expect(hang.sources == [HangSourceWord.frameLoop, HangSourceWord.watchdog])
    }

    /// A platform's own hang table, imported as hang events: its word for each kept, tiers by the
    /// analysis' thresholds, no frames needed.
    @Test func importedHangsKeepThePlatformsType() throws {
        var t = TraceBuilder()
        let main = t.main, source = t.list.intern("instruments")
        t.list.append(0, main, .instant(category: t.list.intern("app"), name: t.list.intern("start")))
        t.list.append(1_000 * Self.ms, main, .hang(Hang(endNs: 1_600 * Self.ms, source: source, type: t.list.intern("Hang"))))
        t.list.append(3_000 * Self.ms, main, .hang(Hang(endNs: 3_180 * Self.ms, source: source, type: t.list.intern("Brief Unresponsiveness"))))
        t.list.append(3_600 * Self.ms, main, .instant(category: t.list.intern("app"), name: t.list.intern("end")))
        let h = try #require(try t.analyze().hangs)
        #expect(h.count == 1 && h.longestMs == 600 && h.brief.count == 1 && h.brief.totalMs == 180)
        #expect(abs(h.rateSecondsPerHour - 600) < 1e-9)   // 0.6 s in 3.6 s
        #expect(h.list.map(\.type) == ["Hang", "Brief Unresponsiveness"])
        #expect(h.list.allSatisfy { $0.sources == ["instruments"] && $0.cause == .unknown })
    }

    /// Figures do not depend on how the threads' events interleave in the file.
    @Test func fileOrderDoesNotMatter() throws {
        var t = TraceBuilder()
        Self.loop(&t, long: [(id: 60, workNs: 300 * Self.ms, runningNs: 298 * Self.ms), (id: 200, workNs: 150 * Self.ms, runningNs: 4 * Self.ms)])
        let inOrder = try t.analyze(rates: [60]).hangs
        var grouped = t.list
        // Every thread's events in its own order, the render thread's first.
        grouped.events = t.list.events.filter { $0.thread != t.main } + t.list.events.filter { $0.thread == t.main }
        #expect(try Analyzer.analyze([grouped], options: AnalyzerOptions(refreshRatesHz: [60])).hangs == inOrder)
    }
}
