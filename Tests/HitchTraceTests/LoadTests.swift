import Foundation
import Synchronization
import Testing
@testable import HitchTrace

/// Load (issue 8): 8 threads record flat out while the sampler runs at 1 kHz on all of them.
/// Nothing is lost that is not counted, the recorder's memory stays within its configured bound,
/// and the cost is reported. The test runs 2 s; `HITCH_LOAD_SECONDS=10` gives the full run
/// (figures in docs/RELIABILITY.md).
@Suite(.serialized) struct LoadTests {
    static let threads = 8
    static var seconds: Double {
        Double(ProcessInfo.processInfo.environment["HITCH_LOAD_SECONDS"] ?? "") ?? 2
    }

    @Test func eightThreadsFlatOutWithTheSamplerLoseNothingUncounted() throws {
        let path = FaultSupport.temporaryPath("load.fxt")
        defer { unlink(path) }
        let maxBufferedBytes = 16 << 20
        let rssBeforeKB = FaultSupport.statusKB("VmRSS")
        let recorder = try TraceRecorder.start(path: path, configuration: .init(maxBufferedBytes: maxBufferedBytes, waitForOtherRecordingSeconds: testRecordingWait))
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
        #expect(read.error == nil, "\(String(describing: read.error))")
        #expect(read.warnings.isEmpty, "\(read.warnings.prefix(3))")
        // Every event is in the file or counted as dropped, and the file says how many were dropped.
        #expect(UInt64(inFile) + summary.droppedEventCount == UInt64(recorded),
                "recorded \(recorded), in file \(inFile), dropped \(summary.droppedEventCount)")
        #expect(read.droppedEventCount == summary.droppedEventCount)
        #expect(statistics.samplesTaken > 0)
        // Every snapshot the handler wrote reaches the trace or is counted as discarded; a snapshot
        // that found its ring full was never taken and is counted in samplesDropped.
        #expect(statistics.samplesTaken == statistics.samplesRecorded + statistics.samplesDiscarded,
                "sampler: \(statistics)")
        // Memory: the recorder's buffers are bounded by maxBufferedBytes; allow the test's own
        // bookkeeping, the sampler's rings and allocator slack on top (more under ASan, whose
        // quarantine and shadow memory count as resident: HITCH_LOAD_RSS_SLACK_MB).
        let slackMB = Double(ProcessInfo.processInfo.environment["HITCH_LOAD_RSS_SLACK_MB"] ?? "") ?? 96
        let growthMB = Double(peakRSSKB.withLock { $0 } - rssBeforeKB) / 1024
        #expect(growthMB < Double(maxBufferedBytes >> 20) + slackMB, "resident memory grew by \(growthMB) MB")

        let nsPerEvent = cpuSeconds.withLock { $0 } * 1e9 / Double(max(recorded, 1))
        print(String(format: "load: %d threads x %.1f s: %d events recorded (%.1f M/s), %llu dropped (%.1f%%), %d in file, "
                     + "%.1f ns CPU per event, samples %llu taken / %llu recorded / %llu dropped / %llu timer overruns, RSS +%.1f MB, %.1f MB file",
                     Self.threads, Self.seconds, recorded, Double(recorded) / Self.seconds / 1e6, summary.droppedEventCount,
                     100 * Double(summary.droppedEventCount) / Double(max(recorded, 1)), inFile, nsPerEvent,
                     statistics.samplesTaken, statistics.samplesRecorded, statistics.samplesDropped, statistics.timerOverruns, growthMB,
                     Double(summary.bytesWritten) / 1e6))
    }
}
