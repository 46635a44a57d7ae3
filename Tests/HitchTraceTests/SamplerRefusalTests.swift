import Foundation
import Testing
@testable import HitchTrace

/// The sampler's fallback when the kernel refuses perf events, exercised for real in a child
/// `hitch` process (tests run as root, where nothing is refused): a seccomp filter that fails
/// perf_event_open with EACCES (as a container's profile does), and an ordinary user (nobody),
/// whose permission perf_event_paranoid decides.
@Suite(.enabled(if: FaultSupport.hitchExecutable != nil, "needs the hitch executable (swift build)"))
struct SamplerRefusalTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Compiles scripts/support/deny-perf-events.c (the caller unlinks it); cancels the test where
    /// there is no C compiler.
    static func denyPerfEvents() throws -> String {
        let source = repository.appendingPathComponent("scripts/support/deny-perf-events.c").path
        let binary = FaultSupport.temporaryPath("deny-perf-events")
        let compiled = try? FaultSupport.run("/usr/bin/env", ["cc", "-O2", "-o", binary, source])
        guard let compiled, compiled.status == 0 else {
            try Test.cancel("cannot compile the seccomp launcher (no cc?): \(compiled?.stderr.prefix(200) ?? "")")
        }
        chmod(binary, 0o755)
        return binary
    }

    /// The trace's sampler metadata as `hitch info` prints it.
    static func samplerInfo(_ trace: String) throws -> String {
        let hitch = try #require(FaultSupport.hitchExecutable)
        let info = try FaultSupport.run(hitch, ["info", trace])
        #expect(info.status == 0, "hitch info failed: \(info.stderr.prefix(300))")
        return info.stdout
    }

    /// Runs `arguments` as nobody (setpriv), or cancels the test where that is impossible (not
    /// root, no setpriv, or nobody cannot reach the executable).
    static func asNobody(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String, timedOut: Bool) {
        guard getuid() == 0 else { try Test.cancel("not root: cannot switch to an unprivileged user") }
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let setpriv else { try Test.cancel("no setpriv to switch to an unprivileged user") }
        let prefix = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        let hitch = try #require(FaultSupport.hitchExecutable)
        let probe = try FaultSupport.run(setpriv, prefix + [hitch, "--help"], timeout: 60)
        guard probe.status == 0 else { try Test.cancel("nobody cannot run \(hitch): \(probe.stderr.prefix(200))") }
        return try FaultSupport.run(setpriv, prefix + arguments, timeout: 120, currentDirectory: NSTemporaryDirectory())
    }

    @Test func seccompRefusalFallsBackToTheTimerSignalAndSaysSoInTheTrace() throws {
        let deny = try Self.denyPerfEvents()
        defer { unlink(deny) }
        let hitch = try #require(FaultSupport.hitchExecutable)
        let trace = FaultSupport.temporaryPath("denied.fxt")
        defer { unlink(trace) }
        let record = try FaultSupport.run(deny, [hitch, "record", "feed", "--variant", "tuned", "--seconds", "2",
                                                 "--rows", "2000", "-o", trace], timeout: 120)
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
        let hitch = try #require(FaultSupport.hitchExecutable)
        let bench = try FaultSupport.run(deny, [hitch, "bench", "sample", "--source", "perf", "--seconds", "1", "--floor", "no"],
                                         timeout: 120)
        #expect(bench.status != 0 && !bench.timedOut)
        #expect(bench.stderr.contains("perf events were asked for and refused"), "\(bench.stderr.prefix(300))")
    }

    @Test func anOrdinaryUserGetsWhatPerfEventParanoidAllows() throws {
        let hitch = try #require(FaultSupport.hitchExecutable)
        let trace = NSTemporaryDirectory() + "hitch-nobody-\(getpid())-\(UInt32.random(in: 0 ... .max)).fxt"
        defer { unlink(trace) }
        let record = try Self.asNobody([hitch, "record", "feed", "--variant", "tuned", "--seconds", "2", "--rows", "2000", "-o", trace])
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

    @Test func anOrdinaryUserUnderSeccompFallsBackToo() throws {
        let deny = try Self.denyPerfEvents()
        defer { unlink(deny) }
        let hitch = try #require(FaultSupport.hitchExecutable)
        let trace = NSTemporaryDirectory() + "hitch-nobody-denied-\(getpid())-\(UInt32.random(in: 0 ... .max)).fxt"
        defer { unlink(trace) }
        let record = try Self.asNobody([deny, hitch, "record", "feed", "--variant", "tuned", "--seconds", "2", "--rows", "2000", "-o", trace])
        #expect(record.status == 0, "record as nobody under the seccomp filter failed: \(record.stderr.prefix(300))")
        let info = try Self.samplerInfo(trace)
        #expect(info.contains("samplerSource = timer-signal"), "\(info)")
        #expect(info.contains("not permitted"), "\(info)")
    }
}
