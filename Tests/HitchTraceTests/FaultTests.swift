import CHitchSupport
import Foundation
import HitchTestSupport
import Synchronization
import Testing
@testable import HitchTrace

/// Faults while recording: the disk fills, the process is SIGKILLed, a thread exits with
/// an unflushed buffer, a sampling signal lands in a blocking syscall. One recording session per
/// process, so these run one after another.
@Suite(.serialized) struct FaultTests {
    /// Records `perThread` intervals on each of `threads` threads; returns the wall time taken.
    static func recordFlatOut(threads: Int, perThread: Int, name: TraceName = "fault-work") -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let group = DispatchGroup()
        for _ in 0..<threads {
            group.enter()
            Thread {
                for i in 0..<perThread {
                    Trace.bodyEvaluation(viewType: name, identity: UInt64(i)) {}
                }
                group.leave()
            }.start()
        }
        group.wait()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    @Test func diskFullOnDevFullIsReportedAndTheAppGoesOn() async { await #expect(processExitsWith: .success) { try Self.diskFullOnDevFullIsReportedAndTheAppGoesOnRecorded() } }

    static func diskFullOnDevFullIsReportedAndTheAppGoesOnRecorded() throws {
        let recorder = try TraceRecorder.start(path: "/dev/full", configuration: .init(bufferBytesPerThread: 16 << 10, flushIntervalMs: 5))
        recorder.setMetadata("workload", "disk-full")
        // The app keeps recording while every write fails: no block, no crash.
        let seconds = Self.recordFlatOut(threads: 2, perThread: 200_000)
        #expect(seconds < 30, "recording to a full disk took \(seconds) s")
        do {
            try recorder.stop()
            Issue.record("stop() returned normally although every write failed")
        } catch {
            guard case let .writeFailed(path, reason) = error else { Issue.record("unexpected error \(error)"); return }
            #expect(path == "/dev/full")
            #expect(reason.contains("space"), "\(reason)")
            #expect(!error.description.contains("\n"))
        }
        // The session is released: the app can record again.
        let path = FaultSupport.temporaryPath("after-full.fxt")
        defer { unlink(path) }
        let next = try TraceRecorder.start(path: path)
        Trace.instant("after", category: "fault")
        try next.stop()
        #expect(FaultSupport.readAll(path).counts["fault/after"] == 1)
    }

    /// Regression: after a failed write, a second `stop()` (a deinit path, a second owner) must return
    /// like it does after a clean recording, not wait forever on the writer's semaphore.
    @Test func secondStopAfterWriteFailureReturns() async { await #expect(processExitsWith: .success) { try Self.secondStopAfterWriteFailureReturnsRecorded() } }

    static func secondStopAfterWriteFailureReturnsRecorded() throws {
        let recorder = try TraceRecorder.start(path: "/dev/full")
        _ = Self.recordFlatOut(threads: 1, perThread: 50_000)
        #expect(throws: TraceRecorderError.self) { try recorder.stop() }
        let returned = FaultSupport.finishes(within: 5) { _ = try? recorder.stop() }
        #expect(returned, "the second stop() after a write failure hangs (TraceRecorder.stop does not re-signal writerDone on the throwing path)")
    }

    /// A real full file system (a 64 KB tmpfs; the test runs as root and mounts it): writes fail
    /// part-way, the file ends mid-buffer, and it still reads cleanly up to its last whole record.
    /// Where it cannot mount it is reported as skipped, with the reason, never as passed.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root")) func diskFullOnTinyTmpfsLeavesAReadablePrefix() async {
        await #expect(processExitsWith: .success) { try Self.diskFullOnTinyTmpfsLeavesAReadablePrefixRecorded() }
    }

    static func diskFullOnTinyTmpfsLeavesAReadablePrefixRecorded() throws {
        let mountPoint = FaultSupport.temporaryPath("tmpfs")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let mount = try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint], timeout: 20)
        if mount.status != 0 { try Test.cancel("cannot mount a tmpfs here (needs CAP_SYS_ADMIN): \(mount.stderr.prefix(200))") }
        defer { _ = try? ChildProcess.run("/bin/umount", [mountPoint], timeout: 20) }
        let path = mountPoint + "/full.fxt"
        let recorder = try TraceRecorder.start(path: path, configuration: .init(bufferBytesPerThread: 16 << 10, flushIntervalMs: 5))
        _ = Self.recordFlatOut(threads: 2, perThread: 50_000, name: "tmpfs-row")
        #expect(throws: TraceRecorderError.self) { try recorder.stop() }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        #expect(size > 0 && size <= 64 << 10)
        let read = FaultSupport.readAll(path)
        #expect(read.error == nil, "\(String(describing: read.error))")
        #expect(read.counts["tmpfs-row", default: 0] > 0)
        #expect(read.warnings.count <= 1, "\(read.warnings)")
    }

    /// The same without root: a recording child under RLIMIT_FSIZE (64 KB, SIGXFSZ ignored, so a write
    /// past the limit fails with EFBIG as on a full disk) records flat out until killed; its file
    /// stops at the limit and reads back cleanly up to its last whole record.
    @Test(.enabled(if: RecordingProbe.path != nil, "needs hitch-record-probe (swift build --build-tests)"))
    func diskFullUnderAFileSizeLimitLeavesAReadablePrefix() throws {
        let probe = try #require(RecordingProbe.path)
        let path = FaultSupport.temporaryPath("fsize-limited.fxt")
        defer { unlink(path) }
        let limitBytes = 64 << 10
        // `ulimit -f` counts 512-byte blocks in POSIX sh (dash); the size check below allows bash's 1 KB too.
        let script = "trap '' XFSZ; ulimit -f \(limitBytes / 512); exec \"$0\" \"$@\""
        let run = try ChildProcess.run("/bin/sh", ["-c", script, probe, "flat-out", path], timeout: 5)
        #expect(run.timedOut, "the recording child exited by itself: \(run.status) \(run.stderr.prefix(200))")
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        #expect(size > 0 && size <= 2 * limitBytes, "file size \(size)")
        let read = FaultSupport.readAll(path)
        #expect(read.error == nil, "\(String(describing: read.error))")
        #expect(read.counts["CrashRow", default: 0] > 0)
        #expect(read.warnings.count <= 1, "\(read.warnings)")
    }

    /// SIGKILL at random moments over many runs: every file reads back, without an error, up to its
    /// last complete record, and holds only what the child recorded.
    @Test(.enabled(if: RecordingProbe.path != nil)) func sigkillAtRandomMomentsLeavesReadableFiles() throws {
        var generator = SystemRandomNumberGenerator()
        var totalEvents = 0
        for run in 0..<12 {
            let path = FaultSupport.temporaryPath("killed-\(run).fxt")
            defer { unlink(path) }
            let process = try RecordingProbe.start(["flat-out", path])
            // Wait for the child to be recording, then kill it 0-150 ms later (the first two runs at
            // once: `start` has returned, so even then the file must be a trace).
            #expect(RecordingProbe.waitForLine(process).contains("recording"))
            usleep(run < 2 ? 0 : UInt32.random(in: 0...150_000, using: &generator))
            if run == 11 {
                // The last run waits (up to 10 s) until the writer has flushed events past the file's
                // start, so a loaded machine that never scheduled the writer in 150 ms still proves
                // that flushed events survive the kill.
                let startSize = FaultSupport.fileSize(path)
                for _ in 0..<1000 where FaultSupport.fileSize(path) <= startSize { usleep(10_000) }
            }
            RecordingProbe.kill(process)
            #expect(process.terminationReason == .uncaughtSignal)

            let read = FaultSupport.readAll(path)
            #expect(read.error == nil, "run \(run): \(String(describing: read.error))")
            #expect(read.warnings.allSatisfy { $0.message.contains("truncated") }, "run \(run): \(read.warnings)")
            let known = read.counts.keys.filter { $0 != "CrashRow" && $0 != "crash/tick" }
            #expect(known.isEmpty, "run \(run): unexpected events \(known)")
            totalEvents += read.counts.values.reduce(0, +)
        }
        #expect(totalEvents > 0, "no run had flushed any event before its SIGKILL")
    }

    /// A thread that exits with a partly filled buffer hands it to the writer: its events reach the
    /// file while the recording goes on, not only at stop.
    @Test func threadExitingWithAnUnflushedBufferLosesNothing() async { await #expect(processExitsWith: .success) { try Self.threadExitingWithAnUnflushedBufferLosesNothingRecorded() } }

    static func threadExitingWithAnUnflushedBufferLosesNothingRecorded() throws {
        let path = FaultSupport.temporaryPath("thread-exit.fxt")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path, configuration: .init(flushIntervalMs: 5))
        // A plain pthread, joined: when pthread_join returns, the thread (and its TLS destructors) is gone.
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { _ in
            hitch_set_current_thread_name("short-lived")
            for i in 0..<1000 { Trace.bodyEvaluation(viewType: "ExitRow", identity: UInt64(i)) {} }
            return nil
        }, nil)
        #expect(created == 0)
        #expect(pthread_join(thread, nil) == 0)
        var seenBeforeStop = 0
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            seenBeforeStop = FaultSupport.readAll(path).counts["ExitRow", default: 0]
            if seenBeforeStop == 1000 { break }
            usleep(20_000)
        }
        let summary = try recorder.stop()
        let read = FaultSupport.readAll(path)
        #expect(read.error == nil)
        #expect(read.counts["ExitRow"] == 1000, "\(read.counts)")
        #expect(summary.droppedEventCount == 0)
        #expect(seenBeforeStop == 1000, "only \(seenBeforeStop) of the exited thread's 1000 events reached the file before stop")
    }

    /// Sampling signals (1 kHz, SA_RESTART) landing while a sampled thread blocks. POSIX lets a
    /// signal end a blocking pipe write early with a short count once some bytes moved (SA_RESTART
    /// restarts only calls that moved nothing), so code that loops on short writes, as it must,
    /// delivers every byte in order; Foundation's sleep lasts its whole duration; a semaphore wait
    /// with a timeout neither returns early nor fails.
    @Test func samplingSignalsDuringBlockingSyscallsDoNotBreakThem() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd); close(writeEnd) }
        let payload = 1 << 20
        let collector = SampleCounts()
        let sampler = try FaultSupport.startSampler(.init(rateHz: 1000, threads: .registered, source: .timerSignal), recorder: nil, onSample: collector.onSample)
        // The reader drains slowly, so the sampled writer blocks in write() many times.
        let received = CapturedBytes()
        let drainer = Thread {
            var all = Data()
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            while all.count < payload {
                usleep(1000)
                let n = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if n > 0 { all.append(contentsOf: buffer[0..<n]) } else if n == 0 || errno != EINTR { break }
            }
            received.set(all)
        }
        drainer.start()
        let run = onRegisteredThread { () -> [Double] in
            let bytes = (0..<payload).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
            var offset = 0, shortWrites = 0, failures = 0
            while offset < payload {
                let n = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress! + offset, payload - offset) }
                if n < 0 {
                    if errno != EINTR { failures += 1; break }
                    continue
                }
                if n < payload - offset { shortWrites += 1 }
                offset += n
            }
            let sleepStart = Date()
            Thread.sleep(forTimeInterval: 0.2)
            let slept = Date().timeIntervalSince(sleepStart)
            let semaphore = DispatchSemaphore(value: 0)
            let waitStart = Date()
            let result = semaphore.wait(timeout: .now() + 0.2)
            let waited = Date().timeIntervalSince(waitStart)
            return [Double(offset), Double(failures), slept, waited, result == .timedOut ? 1 : 0, Double(shortWrites)]
        }
        let statistics = sampler.stop()
        let values = run.result
        #expect(Int(values[0]) == payload && values[1] == 0, "wrote \(values[0]) of \(payload) bytes, \(values[1]) failures")
        #expect(values[2] >= 0.199, "Thread.sleep(0.2) returned after \(values[2]) s")
        #expect(values[3] >= 0.199 && values[4] == 1, "semaphore wait returned after \(values[3]) s")
        #expect(collector.of(thread: run.threadID) > 0, "no sample landed on the blocked thread; \(statistics)")
        let deadline = Date().addingTimeInterval(10)
        while received.get().count < payload && Date() < deadline { usleep(10_000) }
        let expected = Data((0..<payload).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        #expect(received.get() == expected, "the reader got \(received.get().count) bytes, in order: \(received.get() == expected)")
        print("blocking syscalls under 1 kHz sampling: \(Int(values[5])) short writes of a 1 MB pipe write, sleep \(values[2]) s, wait \(values[3]) s")
    }
}
