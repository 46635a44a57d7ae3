import Foundation
import HitchTestSupport
import HitchReader
import Testing
@testable import HitchTrace

/// The recorder's hang watchdog (docs/FORMAT.md "Hangs"): a frame that keeps the loop's thread away
/// is captured with its stack while it lasts and written as a hang when it ends; a sleep is captured
/// without a signal (never cut short); a process killed during a hang keeps its captures.
@Suite(.serialized) struct HangWatchdogTests {
    static let ms: Int64 = 1_000_000
    static let periodNs: Int64 = 16_666_667

    /// The calling thread's CPU time, ns.
    static func threadCPUNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    @inline(never) static func spinInAFrame(nanoseconds: Int64) {
        let start = Trace.now().nanoseconds
        while Trace.now().nanoseconds - start < nanoseconds {}
    }

    @Test func aFrameThatStaysAwayIsCapturedAndWrittenAsAHang() async {
        await #expect(processExitsWith: .success) { try HangWatchdogTests.aFrameThatStaysAwayRecorded() }
    }

    static func aFrameThatStaysAwayRecorded() throws {
        let path = temporaryTracePath("watchdog")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path, configuration: .init(waitForOtherRecordingSeconds: 300))
        Trace.setThreadRole(.main)
        func frame(_ id: UInt64, _ work: () -> Void) {
            let vsync = Trace.now()
            Trace.frameBegan(frameID: id, vsync: vsync, target: vsync.advanced(byNanoseconds: periodNs), periodNs: periodNs)
            work()
            Trace.frameCommitted(frameID: id)
            usleep(10_000)
        }
        for id in UInt64(1)...10 { frame(id) { usleep(2_000) } }
        frame(11) { spinInAFrame(nanoseconds: 300 * ms) }
        for id in UInt64(12)...15 { frame(id) { usleep(2_000) } }
        // Twice the spin: under a full parallel test run the watchdog thread can wait long for a
        // CPU, and a sleep leaves it only the time from the threshold to the end to capture once.
        frame(16) { usleep(600_000) }
        for id in UInt64(17)...20 { frame(id) { usleep(2_000) } }
        _ = try recorder.stop()

        let (events, reader) = try readAll(path)
        let main = events.first { if case .frameBegan = $0.payload { return true } else { return false } }!.thread
        var hangs: [(start: Int64, end: Int64, source: String)] = []
        var captures: [(at: Int64, since: Int64, stack: StackID?, call: String, state: UInt8)] = []
        var stacks: [UInt32: [UInt64]] = [:]
        var symbols: [(address: UInt64, size: UInt64, name: String)] = []
        var began: [UInt64: Int64] = [:], committed: [UInt64: Int64] = [:]
        for event in events {
            switch event.payload {
            case let .frameBegan(f): began[f.frameID] = event.timestampNs
            case let .frameCommitted(id): committed[id] = event.timestampNs
            case let .hang(h): #expect(event.thread == main); hangs.append((event.timestampNs, h.endNs, reader.string(h.source)))
            case let .hangStack(c):
                #expect(event.thread == main)
                captures.append((event.timestampNs, c.sinceNs, c.stack, reader.string(c.systemCall), c.schedState))
            case let .stackDefinition(id, addresses): stacks[id.rawValue] = addresses
            case let .symbol(s): symbols.append((s.address, s.size, reader.string(s.function)))
            default: break
            }
        }
        let spin = (begin: try #require(began[11]), commit: try #require(committed[11]))
        let sleep = (begin: try #require(began[16]), commit: try #require(committed[16]))
        // Each long frame is one hang from its begin to its commit, exactly (the same clock reads).
        let spinHang = try #require(hangs.first { $0.start == spin.begin })
        #expect(spinHang.end == spin.commit && spinHang.source == HangSourceWord.watchdog)
        let sleepHang = try #require(hangs.first { $0.start == sleep.begin })
        #expect(sleepHang.end == sleep.commit)
        #expect(hangs.count == 2, "only the two long frames: \(hangs)")
        // The spinning frame: captured from the threshold on, every interval, running, with the spin on its stack.
        let spinning = captures.filter { $0.since == spin.begin }
        #expect(spinning.count >= 2, "\(spinning.count) captures of a 300 ms frame")
        #expect(spinning.allSatisfy { $0.at >= spin.begin + 100 * ms && $0.at <= spin.commit })
        let named = spinning.compactMap { $0.stack }.compactMap { stacks[$0.rawValue] }.map { addresses in
            addresses.map { address in symbols.first { address >= $0.address && address < $0.address + $0.size }?.name ?? "" }
        }
        #expect(named.contains { $0.contains { $0.contains("spinInAFrame") } }, "\(named)")
        // The sleeping frame: asleep in a sleep call, no stack (no signal cut it short), and it slept in full.
        let sleeping = captures.filter { $0.since == sleep.begin }
        #expect(!sleeping.isEmpty)
        #expect(sleeping.allSatisfy { $0.stack == nil && ($0.call == "clock_nanosleep" || $0.call == "nanosleep") && $0.state == UInt8(ascii: "S") },
                "\(sleeping)")
        #expect(sleep.commit - sleep.begin >= 600 * ms)
    }

    @Test(.enabled(if: RecordingProbe.path != nil)) func aProcessKilledDuringAHangKeepsItsCaptures() throws {
        let path = temporaryTracePath("hang-kill")
        defer { unlink(path) }
        let process = try RecordingProbe.start(["hang", path])
        RecordingProbe.waitForLine(process)   // "hanging": a second into the hang
        Thread.sleep(forTimeInterval: 0.5)
        RecordingProbe.kill(process)
        #expect(process.terminationReason == .uncaughtSignal)

        let (events, reader) = try readAll(path)
        let began = try #require(events.last { if case .frameBegan = $0.payload { return true } else { return false } })
        var captures = 0, symbolized = false
        var stacks: Set<UInt32> = []
        var names: [String] = []
        for event in events {
            switch event.payload {
            case let .hangStack(c) where c.sinceNs == began.timestampNs:
                captures += 1
                if let stack = c.stack { stacks.insert(stack.rawValue) }
            case let .symbol(s): names.append(reader.string(s.function))
            default: break
            }
        }
        symbolized = names.contains { $0.contains("probeHangsInAFrame") }
        // A capture every 50 ms from 100 ms on: at least a second of them was flushed before the kill.
        #expect(captures >= 10, "\(captures) captures")
        #expect(!stacks.isEmpty && symbolized, "stacks \(stacks.count), functions named: \(names.prefix(20))")

        // `hitch analyze` reads the hang the recording ended in.
        guard let hitch = HitchBinary.path else { return }
        let analyze = Process()
        analyze.executableURL = URL(fileURLWithPath: hitch)
        analyze.arguments = ["analyze", path, "--format", "json"]
        let output = Pipe()
        analyze.standardOutput = output
        analyze.standardError = Pipe()
        try analyze.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        analyze.waitUntilExit()
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let hangs = try #require(json["hangs"] as? [String: Any])
        #expect(hangs["count"] as? Int == 1)
        let hang = try #require((hangs["list"] as? [[String: Any]])?.first)
        #expect(hang["unfinished"] as? Bool == true)
        #expect((hang["durationMs"] as? Double ?? 0) >= 1_000)
        #expect((hang["stack"] as? [String])?.contains { $0.contains("probeHangsInAFrame") } == true, "\(hang)")
        #expect(hang["cause"] as? String == "appWork")
    }
}
