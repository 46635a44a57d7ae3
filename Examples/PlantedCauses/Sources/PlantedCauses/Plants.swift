// The causes planted in known frames, and the helpers that plant them.
import CPlanted
import Foundation
import HitchTrace
import Synchronization

enum PlantKind: String, CaseIterable, Sendable {
    /// The main thread does 40 ms more CPU work in the frame.
    case mainWork
    /// The main thread waits for a lock that a helper thread holds while it sleeps 40 ms.
    case lockHeldBySleepingHelper
    /// The main thread sleeps 40 ms inside the frame.
    case sleep
    /// Another process at nice -15, pinned to the main thread's CPU, spins 60 ms from just before
    /// the frame's vsync.
    case otherProcessHigherPriority
    /// One of the app's own threads (named, recording a `hog` interval) at nice -15, pinned to the
    /// main thread's CPU, spins 60 ms from the frame's start.
    case appThreadHigherPriority
    /// The render thread does 40 ms more CPU work on the frame; the frames after it wait for it.
    case longRender
    /// The main thread reads 4 MiB blocks of a file whose pages are not cached (O_DIRECT) until it
    /// has slept 40 ms on the disk.
    case coldFileRead
}

/// One planted frame and what the app measured while planting it.
struct PlantRecord: Sendable {
    let frameID: UInt64
    let kind: PlantKind
    var facts: [String: Double] = [:]
    var names: [String: String] = [:]
}

/// What the app measured, from whichever thread planted it.
final class PlantLog: Sendable {
    private let records = Mutex<[UInt64: PlantRecord]>([:])

    func add(_ frameID: UInt64, _ kind: PlantKind, facts: [String: Double] = [:], names: [String: String] = [:]) {
        records.withLock { all in
            var record = all[frameID] ?? PlantRecord(frameID: frameID, kind: kind)
            record.facts.merge(facts) { $1 }
            record.names.merge(names) { $1 }
            all[frameID] = record
        }
    }

    var all: [PlantRecord] { records.withLock { $0.values.sorted { $0.frameID < $1.frameID } } }
}

/// A helper thread that takes a lock, then, told to, sleeps while holding it.
final class SleepingLockHolder: Sendable {
    let lock = NSLock()
    private let take = DispatchSemaphore(value: 0)
    private let taken = DispatchSemaphore(value: 0)
    private let go = DispatchSemaphore(value: 0)
    private let sleepMs: Double

    init(sleepMs: Double) {
        self.sleepMs = sleepMs
        let thread = Thread { [self] in
            Trace.setCurrentThreadName("planted.lockHolder")
            while true {
                take.wait()
                lock.lock()
                Trace.interval("holding lock") {
                    taken.signal()
                    go.wait()
                    usleep(UInt32(self.sleepMs * 1000))
                }
                lock.unlock()
            }
        }
        thread.start()
    }

    /// Takes the lock on the helper thread; returns once it holds it.
    func takeLock() {
        take.signal()
        taken.wait()
    }

    /// The helper starts sleeping with the lock held; the caller then waits for the lock.
    /// Returns the caller's wait in ms.
    func waitForLock() -> Double {
        go.signal()
        let start = Trace.now().nanoseconds
        lock.lock()
        lock.unlock()
        return Double(Trace.now().nanoseconds - start) / 1e6
    }
}

/// One of the app's own threads at a higher priority than the main thread, on its CPU.
final class AppHogThread: Sendable {
    static let threadName = "planted.hog"
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let ready = DispatchSemaphore(value: 0)
    private let setUp = Mutex<String?>(nil)
    private let lastSpin = Mutex<(onCPUMs: Double, wallMs: Double, tid: Int32)>((0, 0, 0))
    private let spinMs: Double

    init(cpu: Int32, nice: Int32, spinMs: Double) throws {
        self.spinMs = spinMs
        let thread = Thread { [self] in
            Trace.setCurrentThreadName(Self.threadName)
            do {
                try pinCurrentThread(to: cpu, Self.threadName)
                try setCurrentThreadNice(nice, Self.threadName)
            } catch {
                setUp.withLock { $0 = "\(error)" }
            }
            // Its first event opens the thread's switch records, as for any recording thread.
            Trace.instant("hog ready", with: .int("nice", Int(planted_current_thread_nice())))
            ready.signal()
            while true {
                go.wait()
                let cpuStart = threadCPUNs()
                let wallStart = Trace.now().nanoseconds
                Trace.interval("hog") { spin(wallMs: self.spinMs) }
                let spun = (Double(threadCPUNs() - cpuStart) / 1e6, Double(Trace.now().nanoseconds - wallStart) / 1e6,
                            planted_current_tid())
                lastSpin.withLock { $0 = spun }
                done.signal()
            }
        }
        thread.start()
        ready.wait()
        if let failure = setUp.withLock({ $0 }) { throw PlantError(failure) }
    }

    func startSpin() { go.signal() }

    /// Waits for the spin started last to end; returns its on-CPU and wall ms.
    func finishSpin() -> (onCPUMs: Double, wallMs: Double, tid: Int32) {
        done.wait()
        return lastSpin.withLock { $0 }
    }
}

/// Another process at a higher priority, pinned to the main thread's CPU. It is this executable
/// started as `PlantedCauses hog-process`: it spins for `spinMs` each time it reads a line.
final class HogProcess {
    private let process = Process()
    private let toChild = Pipe()
    private let fromChild = Pipe()
    let pid: Int32

    init(cpu: Int32, nice: Int32, spinMs: Double) throws {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["hog-process", "--cpu", "\(cpu)", "--nice", "\(nice)", "--spin-ms", "\(spinMs)"]
        process.standardInput = toChild
        process.standardOutput = fromChild
        try process.run()
        pid = process.processIdentifier
        let reply = readLine(fromChild.fileHandleForReading)
        guard reply.hasPrefix("ready") else {
            throw PlantError("the hog process did not start: \(reply.isEmpty ? "no reply" : reply)")
        }
    }

    func startSpin() { toChild.fileHandleForWriting.write(Data("spin\n".utf8)) }

    /// Waits for the spin to end; returns its on-CPU and wall ms as the child measured them.
    func finishSpin() -> (onCPUMs: Double, wallMs: Double) {
        let fields = readLine(fromChild.fileHandleForReading).split(separator: " ")
        guard fields.count == 3, fields[0] == "spun", let cpu = Double(fields[1]), let wall = Double(fields[2]) else {
            return (-1, -1)
        }
        return (cpu, wall)
    }

    func stop() {
        try? toChild.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// Reads one line (without its newline) from a pipe, byte by byte so nothing past it is consumed.
func readLine(_ handle: FileHandle) -> String {
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while read(handle.fileDescriptor, &byte, 1) == 1 {
        if byte == UInt8(ascii: "\n") { break }
        bytes.append(byte)
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Writes one line to standard output at once (the parent waits for it).
private func reply(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// `PlantedCauses hog-process --cpu N --nice N --spin-ms MS`: the other process's side.
func runHogProcess(cpu: Int32, nice: Int32, spinMs: Double) -> Int32 {
    do {
        try pinCurrentThread(to: cpu, "the hog process")
        try setCurrentThreadNice(nice, "the hog process")
    } catch {
        reply("error \(error)")
        return 1
    }
    reply("ready nice=\(planted_current_thread_nice()) cpu=\(cpu)")
    while let line = Swift.readLine() {
        guard line == "spin" else { continue }
        let cpuStart = threadCPUNs()
        let wallStart = monotonicNs()
        spin(wallMs: spinMs)
        reply("spun \(Double(threadCPUNs() - cpuStart) / 1e6) \(Double(monotonicNs() - wallStart) / 1e6)")
    }
    return 0
}

/// A file whose pages are not in the page cache, read with O_DIRECT so every read waits for the disk.
final class ColdFile {
    static let sizeBytes = 64 << 20
    /// Large reads: the device's time per read dwarfs the system call's CPU time, and the thread
    /// wakes (and may wait for a CPU) once per read.
    static let blockBytes = 4 << 20
    static let alignment = 4096
    private let fd: Int32
    /// Whether reads bypass the page cache (O_DIRECT); else the pages are dropped before each read burst.
    let bypassesCache: Bool
    private let buffer: UnsafeMutableRawPointer
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(path: String) throws {
        // Write the file once, with bytes no cache could have seen, then drop its cached pages.
        let out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard out >= 0 else { throw PlantError("cannot create \(path): \(String(cString: strerror(errno)))") }
        var chunk = [UInt64](repeating: 0, count: 1 << 17)
        var seed = UInt64(truncatingIfNeeded: Trace.now().ticks)
        for _ in 0..<(Self.sizeBytes / (chunk.count * 8)) {
            for index in chunk.indices { seed = seed &* 6364136223846793005 &+ 1442695040888963407; chunk[index] = seed }
            let written = chunk.withUnsafeBytes { write(out, $0.baseAddress, $0.count) }
            guard written == chunk.count * 8 else { close(out); throw PlantError("cannot write \(path)") }
        }
        let dropped = planted_drop_cached_pages(out)
        close(out)
        guard dropped == 0 else { throw PlantError("cannot drop the cached pages of \(path): \(String(cString: strerror(dropped)))") }
        // O_DIRECT where the file system allows it; else reads without readahead, the file's cached
        // pages dropped before each planted read (tmpfs has no disk behind it: refused).
        var opened = planted_open_direct(path)
        bypassesCache = opened >= 0
        if opened < 0 { opened = planted_open_random(path) }
        guard opened >= 0 else { throw PlantError("cannot open \(path): \(String(cString: strerror(-opened)))") }
        if planted_is_on_tmpfs(opened) != 0 {
            close(opened)
            unlink(path)
            throw PlantError("\(path) is on tmpfs, where no read waits for a disk: put --out on a disk")
        }
        fd = opened
        buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.blockBytes, alignment: Self.alignment)
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    /// What a planted read measured on the calling thread.
    struct Reads {
        var count = 0
        var cpuMs = 0.0
        /// Asleep on the disk: the wall time less the thread's CPU time and its waits on a run queue.
        var blockedMs = 0.0
        /// Waiting for a CPU after the reads woke it (its schedstat run delay), -1 where not kept.
        var runnableMs = 0.0
    }

    /// Reads blocks at random offsets until the calling thread has slept `milliseconds` on them: the
    /// plant is that much time blocked on the disk, as the sleep and lock plants block for theirs.
    /// Its wall time is longer by the wake-ups' waits for a CPU, which a busy machine lengthens; a
    /// plant timed by the wall would block less the busier the machine. Without schedstat (no run
    /// delay to subtract) the reads stop when the wall time less CPU time reaches `milliseconds`.
    func readBlocks(blockedMs milliseconds: Double) throws -> Reads {
        if !bypassesCache { _ = planted_drop_cached_pages(fd) }
        let targetNs = Int64(milliseconds * 1e6)
        let wallStart = monotonicNs(), cpuStart = threadCPUNs(), delayStart = planted_current_thread_run_delay_ns()
        var reads = Reads()
        var blockedNs: Int64 = 0, runnableNs: Int64 = 0
        let offsets = UInt64((Self.sizeBytes - Self.blockBytes) / Self.alignment)
        while blockedNs < targetNs {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let offset = off_t((state >> 33) % offsets) * off_t(Self.alignment)
            guard pread(fd, buffer, Self.blockBytes, offset) == Self.blockBytes else {
                throw PlantError("O_DIRECT read failed: \(String(cString: strerror(errno)))")
            }
            reads.count += 1
            let delay = planted_current_thread_run_delay_ns()
            runnableNs = delayStart >= 0 && delay >= 0 ? Int64(delay - delayStart) : 0
            blockedNs = monotonicNs() - wallStart - (threadCPUNs() - cpuStart) - runnableNs
        }
        reads.cpuMs = Double(threadCPUNs() - cpuStart) / 1e6
        reads.blockedMs = Double(blockedNs) / 1e6
        reads.runnableMs = delayStart >= 0 ? Double(runnableNs) / 1e6 : -1
        return reads
    }
}
