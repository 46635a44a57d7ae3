import CHitchSupport
import Foundation
import Synchronization
import Testing
@testable import HitchTrace

/// A busy call chain whose frames the sampler must find by name, in debug and release builds.
enum SamplerWorkload {
    nonisolated(unsafe) static var sink = 0

    @inline(never) static func hot(_ seed: Int) -> Int {
        var value = seed
        for step in 0..<20_000 { value = value &* 6364136223846793005 &+ step }
        return value
    }

    @inline(never) static func middle(_ seed: Int) -> Int { hot(seed) &+ 1 }

    /// Runs the chain until `seconds` of wall time have passed.
    @inline(never) static func outer(seconds: Double) -> Int {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        var total = 0, seed = 1
        while DispatchTime.now().uptimeNanoseconds < end {
            total &+= middle(seed)
            seed &+= 1
        }
        return total
    }
}

/// Runs `body` on a new thread registered with the sampler and returns its result.
func onRegisteredThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> (result: T, threadID: Int32, cpuSeconds: Double) {
    let box = Mutex<(T, Int32, Double)?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        try? Sampler.registerCurrentThread()
        let tid = Trace.currentThreadID
        let cpuStart = threadCPUSeconds()
        let result = body()
        let cpu = threadCPUSeconds() - cpuStart
        Sampler.unregisterCurrentThread()
        box.withLock { $0 = (result, tid, cpu) }
        done.signal()
    }
    thread.start()
    done.wait()
    return box.withLock { $0! }
}

func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Samples collected in memory by `onSample`, by thread.
final class SampleCollector: Sendable {
    private let samples = Mutex<[SampledStack]>([])
    var onSample: @Sendable (SampledStack) -> Void { { sample in self.samples.withLock { $0.append(sample) } } }
    func of(thread: Int32) -> [SampledStack] { samples.withLock { $0.filter { $0.threadID == thread } } }
}

// One sampling session per process at a time: these tests run one after another.
@Suite(.serialized) struct SamplerTests {
    @Test func busyCallChainIsSampledAtTheRateAndNamedByFunction() throws {
        let collector = SampleCollector()
        let sampler = try Sampler.start(.init(rateHz: 1000, threads: .registered), recorder: nil, onSample: collector.onSample)
        let run = onRegisteredThread { SamplerWorkload.outer(seconds: 0.5) }
        let statistics = sampler.stop()
        SamplerWorkload.sink &+= run.result

        let samples = collector.of(thread: run.threadID)
        // A timer signal can only be handled while the thread is on a CPU (the kernel merges the
        // rest into counted overruns), so the expectation is the thread's CPU time at 1 kHz; on an
        // idle machine that is its 0.5 s of wall time.
        let expected = 1000 * run.cpuSeconds
        #expect(Double(samples.count) >= 0.8 * expected, "\(samples.count) samples for \(expected) expected; \(statistics)")
        #expect(statistics.samplesDropped == 0)

        var names: [UInt64: String] = [:]
        func name(_ address: UInt64) -> String {
            if let known = names[address] { return known }
            let resolved = Symbolicator.resolve(address)?.function ?? ""
            names[address] = resolved
            return resolved
        }
        let withHot = samples.filter { sample in sample.addresses.contains { name($0).contains("SamplerWorkload.hot(") } }
        #expect(Double(withHot.count) >= 0.9 * Double(samples.count), "hot in \(withHot.count) of \(samples.count)")
        // The chain is intact below hot: middle and outer are its callers.
        if let sample = withHot.first {
            let frames = sample.addresses.map(name)
            let hotIndex = frames.firstIndex { $0.contains("SamplerWorkload.hot(") }!
            #expect(frames[(hotIndex + 1)...].contains { $0.contains("SamplerWorkload.middle(") }, "\(frames)")
            #expect(frames[(hotIndex + 1)...].contains { $0.contains("SamplerWorkload.outer(") }, "\(frames)")
        }
    }

    @Test func threadBlockedInReadCompletesItsSyscall() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd); close(writeEnd) }
        let collector = SampleCollector()
        let sampler = try Sampler.start(.init(rateHz: 1000, threads: .registered), recorder: nil, onSample: collector.onSample)
        let writer = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            let message = Array("sixty-four bytes of payload, written while the reader is sampled".utf8.prefix(64))
            _ = message.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        }
        writer.start()
        let run = onRegisteredThread { () -> (Int, Int32, [UInt8]) in
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, 64) }
            return (count, count < 0 ? errno : 0, buffer)
        }
        sampler.stop()
        #expect(run.result.0 == 64, "read returned \(run.result.0), errno \(run.result.1)")
        #expect(String(decoding: run.result.2, as: UTF8.self).hasPrefix("sixty-four bytes"))
        // The signals did reach the blocked thread (each one interrupted and restarted the read).
        #expect(collector.of(thread: run.threadID).count >= 20)
    }

    @Test func samplingWhileAnotherThreadLoadsLibrariesDoesNotDeadlock() throws {
        let sampler = try Sampler.start(.init(rateHz: 1000, threads: .all), recorder: nil)
        let stopLoading = Atomic<Bool>(false)
        let loads = Atomic<Int>(0)
        let loaderDone = DispatchSemaphore(value: 0)
        let loader = Thread {
            while !stopLoading.load(ordering: .relaxed) {
                for library in ["libz.so.1", "libm.so.6"] {
                    if let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) {
                        dlclose(handle)
                        loads.add(1, ordering: .relaxed)
                    }
                }
            }
            loaderDone.signal()
        }
        loader.start()
        let run = onRegisteredThread { SamplerWorkload.outer(seconds: 0.4) }
        stopLoading.store(true, ordering: .relaxed)
        let finished = loaderDone.wait(timeout: .now() + 20)
        let statistics = sampler.stop()
        SamplerWorkload.sink &+= run.result
        #expect(finished == .success)
        #expect(loads.load(ordering: .relaxed) > 0)
        #expect(statistics.samplesTaken > 0)
    }

    @Test func badRateIsRejectedAndSecondSessionIsBusy() throws {
        #expect(throws: SamplerError.invalidRate(0)) { try Sampler.start(.init(rateHz: 0), recorder: nil) }
        let sampler = try Sampler.start(.init(rateHz: 100), recorder: nil)
        #expect(throws: SamplerError.alreadyRunning) { try Sampler.start(.init(rateHz: 100), recorder: nil) }
        let first = sampler.stop()
        #expect(sampler.stop() == first)
    }
}
