import Foundation
import Synchronization
import Testing
@testable import HitchTrace

/// Load: 8 threads record flat out while the sampler runs at 1 kHz on all of them.
/// Nothing is lost that is not counted, the recorder's memory stays within its configured bound,
/// and the cost is reported. The test runs 2 s; `HITCH_LOAD_SECONDS=10` gives the full run
/// (figures in docs/RELIABILITY.md).
@Suite(.serialized) struct LoadTests {
    static let threads = 8
    static var seconds: Double {
        Double(ProcessInfo.processInfo.environment["HITCH_LOAD_SECONDS"] ?? "") ?? 2
    }

    /// In a child process of its own: the recorder's drop count is process-wide, and tests run in
    /// parallel, so another test's events dropped during the flood counted here (CI saw 572 of them).
    @Test func eightThreadsFlatOutWithTheSamplerLoseNothingUncounted() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]) {
            let failures = try LoadTests.flatOut()
            guard failures.isEmpty else {
                FileHandle.standardError.write(Data(failures.joined(separator: "\n").utf8))
                exit(1)
            }
        }
        guard let result else { return }
        // Everything the child printed, its stderr too: the sanitizer scripts read this log.
        print(String(decoding: result.standardOutputContent, as: UTF8.self), terminator: "")
        let childErrors = String(decoding: result.standardErrorContent, as: UTF8.self)
        if !childErrors.isEmpty { print(childErrors) }
        #expect(!childErrors.contains("load check failed"), "\(childErrors)")
    }

    /// The load, with every check's failure as a line ("load check failed: ...").
    static func flatOut() throws -> [String] {
        var failures: [String] = []
        func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { failures.append("load check failed: \(message())") }
        }
        let path = FaultSupport.temporaryPath("load.fxt")
        defer { unlink(path) }
        let maxBufferedBytes = 16 << 20
        let rssBeforeKB = FaultSupport.statusKB("VmRSS")
        let recorder = try TraceRecorder.start(path: path, configuration: .init(maxBufferedBytes: maxBufferedBytes))
        recorder.setMetadata("workload", "load-test")
        let sampler = try FaultSupport.startSampler(.init(rateHz: 1000, threads: .registered), recorder: recorder)

        // A monitor samples the process's resident memory while the load runs.
        let peakRSSKB = Locked(rssBeforeKB)
        let stopMonitor = Locked(false)
        let monitorDone = DispatchSemaphore(value: 0)
        Thread {
            while !stopMonitor.withLock({ $0 }) {
                let now = FaultSupport.statusKB("VmRSS")
                peakRSSKB.withLock { $0 = max($0, now) }
                usleep(20_000)
            }
            monitorDone.signal()
        }.start()

        let tally = EventTally(threads: Self.threads)
        let cpuSeconds = Locked(0.0)
        let deadlineNs = DispatchTime.now().uptimeNanoseconds + UInt64(Self.seconds * 1e9)
        let group = DispatchGroup()
        for index in 0..<Self.threads {
            group.enter()
            let thread = Thread {
                try? Sampler.registerCurrentThread()
                let cpuStart = threadCPUSeconds()
                var count = 0
                // Check the clock every 1024 events so the loop is the recorder, not the clock.
                while DispatchTime.now().uptimeNanoseconds < deadlineNs {
                    for i in 0..<1024 {
                        Trace.bodyEvaluation(viewType: "LoadRow", identity: UInt64(i)) {}
                    }
                    count += 1024
                }
                cpuSeconds.withLock { $0 += threadCPUSeconds() - cpuStart }
                Sampler.unregisterCurrentThread()
                tally.add(index, count)
                group.leave()
            }
            thread.name = "load-\(index)"
            thread.start()
        }
        group.wait()
        let statistics = sampler.stop()
        let summary = try recorder.stop()
        stopMonitor.withLock { $0 = true }
        monitorDone.wait()

        let recorded = tally.total
        let read = FaultSupport.readAll(path)
        let inFile = read.counts["LoadRow", default: 0]
        check(read.error == nil, "\(String(describing: read.error))")
        check(read.warnings.isEmpty, "\(read.warnings.prefix(3))")
        // Every event is in the file or counted as dropped, and the file says how many were dropped.
        check(UInt64(inFile) + summary.droppedEventCount == UInt64(recorded),
                "recorded \(recorded), in file \(inFile), dropped \(summary.droppedEventCount)")
        check(read.droppedEventCount == summary.droppedEventCount, "dropped \(read.droppedEventCount) in the file, \(summary.droppedEventCount) counted")
        check(statistics.samplesTaken > 0, "no samples")
        // Every snapshot the handler wrote reaches the trace or is counted as discarded; a snapshot
        // that found its ring full was never taken and is counted in samplesDropped.
        check(statistics.samplesTaken == statistics.samplesRecorded + statistics.samplesDiscarded,
                "sampler: \(statistics)")
        // Memory: the recorder's buffers are bounded by maxBufferedBytes; allow the test's own
        // bookkeeping, the sampler's rings and allocator slack on top (more under ASan, whose
        // quarantine and shadow memory count as resident: HITCH_LOAD_RSS_SLACK_MB).
        let slackMB = Double(ProcessInfo.processInfo.environment["HITCH_LOAD_RSS_SLACK_MB"] ?? "") ?? 96
        let growthMB = Double(peakRSSKB.withLock { $0 } - rssBeforeKB) / 1024
        check(growthMB < Double(maxBufferedBytes >> 20) + slackMB, "resident memory grew by \(growthMB) MB")

        let nsPerEvent = cpuSeconds.withLock { $0 } * 1e9 / Double(max(recorded, 1))
        print(String(format: "load: %d threads x %.1f s: %d events recorded (%.1f M/s), %llu dropped (%.1f%%), %d in file, "
                     + "%.1f ns CPU per event, samples %llu taken / %llu recorded / %llu dropped / %llu timer overruns, RSS +%.1f MB, %.1f MB file",
                     Self.threads, Self.seconds, recorded, Double(recorded) / Self.seconds / 1e6, summary.droppedEventCount,
                     100 * Double(summary.droppedEventCount) / Double(max(recorded, 1)), inFile, nsPerEvent,
                     statistics.samplesTaken, statistics.samplesRecorded, statistics.samplesDropped, statistics.timerOverruns, growthMB,
                     Double(summary.bytesWritten) / 1e6))
        return failures
    }
}
