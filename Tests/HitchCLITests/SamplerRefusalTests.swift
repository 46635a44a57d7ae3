import Foundation
import HitchTestSupport
import Testing
@testable import HitchTrace

/// The sampler's fallback when the kernel refuses perf events, exercised for real in a child
/// `hitch` process (tests run as root, where nothing is refused): a seccomp filter that fails
/// perf_event_open with EACCES (as a container's profile does), an ordinary user (nobody), whose
/// permission perf_event_paranoid decides, and the locked-memory budget for perf rings.
/// Serialized: perf rings are locked memory counted per user, and two tests running as nobody at
/// once take from one budget (a holder that started beside another recording held less of it,
/// and the recordings meant to be refused got rings).
@Suite(.serialized, .enabled(if: HitchBinary.path != nil, "needs the hitch executable (swift build)"))
struct SamplerRefusalTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Compiles scripts/support/deny-perf-events.c (the caller unlinks it); cancels the test where
    /// there is no C compiler.
    static func denyPerfEvents() throws -> String {
        let source = repository.appendingPathComponent("scripts/support/deny-perf-events.c").path
        let binary = HitchCLI.temporaryPath("deny-perf-events")
        let compiled = try? ChildProcess.run("/usr/bin/env", ["cc", "-O2", "-o", binary, source])
        guard let compiled, compiled.status == 0 else {
            try Test.cancel("cannot compile the seccomp launcher (no cc?): \(compiled?.stderr.prefix(200) ?? "")")
        }
        chmod(binary, 0o755)
        return binary
    }

    /// The trace's sampler metadata as `hitch info` prints it.
    static func samplerInfo(_ trace: String) throws -> String {
        let hitch = try #require(HitchBinary.path)
        let info = try ChildProcess.run(hitch, ["info", trace])
        #expect(info.status == 0, "hitch info failed: \(info.stderr.prefix(300))")
        return info.stdout
    }

    /// Runs `arguments` as nobody (setpriv), or cancels the test where that is impossible (not
    /// root, no setpriv, or nobody cannot reach the executable).
    static func asNobody(_ arguments: [String]) throws -> ChildProcess.Result {
        guard getuid() == 0 else { try Test.cancel("not root: cannot switch to an unprivileged user") }
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let setpriv else { try Test.cancel("no setpriv to switch to an unprivileged user") }
        let prefix = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        let hitch = try #require(HitchBinary.path)
        let probe = try ChildProcess.run(setpriv, prefix + [hitch, "--help"], timeout: 60)
        guard probe.status == 0 else { try Test.cancel("nobody cannot run \(hitch): \(probe.stderr.prefix(200))") }
        return try ChildProcess.run(setpriv, prefix + arguments, in: NSTemporaryDirectory(), timeout: 120)
    }

    @Test func seccompRefusalFallsBackToTheTimerSignalAndSaysSoInTheTrace() throws {
        let deny = try Self.denyPerfEvents()
        defer { unlink(deny) }
        let hitch = try #require(HitchBinary.path)
        let trace = HitchCLI.temporaryPath("denied.fxt")
        defer { unlink(trace) }
        let record = try ChildProcess.run(deny, [hitch, "record", "feed", "--variant", "tuned", "--seconds", "2",
                                                 "--rows", "1", "-o", trace], timeout: 120)
        #expect(record.status == 0, "record under the seccomp filter failed: \(record.stderr.prefix(300))")
        let info = try Self.samplerInfo(trace)
        #expect(info.contains("samplerSource = timer-signal"), "\(info)")
        #expect(info.contains("perf_event_open not permitted (Permission denied"), "\(info)")
        // The fallback still samples.
        let taken = info.split(separator: "\n").first { $0.contains("samplerSamplesTaken = ") }
        #expect((taken?.split(separator: "=").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0) > 100, "\(info)")
    }

    @Test func perfEventsAskedForExplicitlyAndRefusedFailWithOneLine() throws {
        let deny = try Self.denyPerfEvents()
        defer { unlink(deny) }
        let hitch = try #require(HitchBinary.path)
        let bench = try ChildProcess.run(deny, [hitch, "bench", "sample", "--source", "perf", "--seconds", "1", "--floor", "no"],
                                         timeout: 120)
        #expect(bench.status != 0 && !bench.timedOut)
        #expect(bench.stderr.contains("perf events were asked for and refused"), "\(bench.stderr.prefix(300))")
    }

    @Test func anOrdinaryUserGetsWhatPerfEventParanoidAllows() throws {
        let hitch = try #require(HitchBinary.path)
        let trace = NSTemporaryDirectory() + "hitch-nobody-\(getpid())-\(UInt32.random(in: 0 ... .max)).fxt"
        defer { unlink(trace) }
        let record = try Self.asNobody([hitch, "record", "feed", "--variant", "tuned", "--seconds", "2", "--rows", "1", "-o", trace])
        #expect(record.status == 0, "record as nobody failed: \(record.stderr.prefix(300))")
        let info = try Self.samplerInfo(trace)
        // paranoid 3 and above (Debian's and Android's kernels) refuse every unprivileged user;
        // 2 permits user-space-only events on one's own threads, which is all the sampler asks for.
        if let paranoid = Sampler.perfEventParanoid, paranoid >= 3 {
            #expect(info.contains("samplerSource = timer-signal"), "\(info)")
            #expect(info.contains("not permitted"), "\(info)")
        } else {
            #expect(info.contains("samplerSource = perf-event"), "\(info)")
        }
    }

    /// Perf rings are locked memory: `perf_event_mlock_kb` per user, then each process's
    /// RLIMIT_MEMLOCK. With another process of the same user holding the per-user budget, a thread
    /// whose ring does not fit falls back to the timer signal (counted, with the reason), and a
    /// process that cannot lock even the start's probe samples with the timer signal throughout.
    @Test func aRingBeyondTheLockedMemoryBudgetFallsBackToTheTimerSignal() throws {
        let hitch = try #require(HitchBinary.path)
        guard getuid() == 0, let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
              let prlimit = ["/usr/bin/prlimit", "/bin/prlimit"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            try Test.cancel("needs root, setpriv and prlimit to run processes as nobody with a locked-memory limit")
        }
        guard Sampler.perfEventParanoid.map({ $0 <= 2 }) ?? false else {
            try Test.cancel("perf_event_paranoid \(Sampler.perfEventParanoid.map(String.init) ?? "absent"): no perf events for nobody at all")
        }
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        _ = try Self.asNobody([hitch, "--help"]) // cancels where nobody cannot run the executable
        let directory = NSTemporaryDirectory()
        let traces = (0..<3).map { "\(directory)hitch-mlock-\(getpid())-\(UInt32.random(in: 0 ... .max))-\($0).fxt" }
        defer { traces.forEach { unlink($0) } }

        // The holder: a recording sampled by perf events, whose ring takes the per-user budget
        // until it is killed below. Its 600 s (the longest `--seconds` takes) outlast the two
        // recordings below, each of which builds the feed's archive first too.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: setpriv)
        holder.arguments = nobody + [hitch, "record", "feed", "--variant", "tuned", "--seconds", "600", "--rows", "1", "-o", traces[0]]
        holder.currentDirectoryURL = URL(fileURLWithPath: directory)
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        defer { kill(holder.processIdentifier, SIGKILL); holder.waitUntilExit() }
        // Ready once it holds a perf event (the probe's is closed at once; the session's stays). The
        // feed builds its thumbnail archive before it records (48 PNGs through the Swift deflate):
        // about 40 s of CPU in a debug build, longer beside a parallel suite.
        let deadline = Date().addingTimeInterval(300)
        var holding = false
        while !holding && Date() < deadline && holder.isRunning {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(holder.processIdentifier)/fd")) ?? []
            holding = fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(holder.processIdentifier)/fd/\($0)"))?.contains("perf_event") ?? false }
            if !holding { usleep(100_000) }
        }
        guard holding else { try Test.cancel("the holder never started sampling with perf events") }
        // Past the probe: the session's ring is the one held, a perf fd that stays open for a whole
        // second (on a loaded machine the session can start well after the probe closed its own).
        // Its own deadline: under load the first one can be spent before the session starts.
        let steadyDeadline = Date().addingTimeInterval(90)
        var steady: Set<String> = [], polls = 0
        while polls < 10 && Date() < steadyDeadline && holder.isRunning {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(holder.processIdentifier)/fd")) ?? []
            let perf = Set(fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(holder.processIdentifier)/fd/\($0)"))?.contains("perf_event") ?? false })
            let held = steady.isEmpty ? perf : steady.intersection(perf)
            polls = held.isEmpty ? 0 : polls + 1
            steady = held.isEmpty ? perf : held
            usleep(100_000)
        }
        #expect(polls >= 10, "the holder's session never held a perf ring for a whole second")
        guard polls >= 10 else { return }

        // 64 KiB: the probe's one-page ring fits, the thread's ring (4 records of 32 KiB at least) does not.
        let small = try ChildProcess.run(prlimit, ["--memlock=65536:65536", setpriv] + nobody +
                                         [hitch, "record", "feed", "--variant", "tuned", "--seconds", "2", "--rows", "1", "-o", traces[1]],
                                         in: directory, timeout: 600)
        #expect(small.status == 0, "\(small.stderr.prefix(300))")
        // Nothing at all: even the probe is refused.
        let none = try ChildProcess.run(prlimit, ["--memlock=0:0", setpriv] + nobody +
                                        [hitch, "record", "feed", "--variant", "tuned", "--seconds", "2", "--rows", "1", "-o", traces[2]],
                                        in: directory, timeout: 600)
        #expect(none.status == 0, "\(none.stderr.prefix(300))")
        #expect(holder.isRunning, "the holder must hold its ring throughout")

        let smallInfo = try Self.samplerInfo(traces[1])
        #expect(smallInfo.contains("samplerPerfFallbackThreads = 1"), "\(smallInfo)")
        #expect(smallInfo.contains("samplerPerfFallbackReason = perf_event_open not permitted"), "\(smallInfo)")
        let noneInfo = try Self.samplerInfo(traces[2])
        #expect(noneInfo.contains("samplerSource = timer-signal"), "\(noneInfo)")
        #expect(noneInfo.contains("samplerSourceReason = timer signal: perf_event_open not permitted"), "\(noneInfo)")
    }
}
