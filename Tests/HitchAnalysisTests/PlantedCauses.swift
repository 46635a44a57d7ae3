import Foundation
import HitchTrace
import Synchronization
import Testing
@testable import HitchAnalysis

// What RecordedCauseTests plants its causes with: a stop flag, a render queue, a thread that sleeps
// holding a lock, and busy threads of the app's own.

/// A flag threads share.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
    func reset() { flag.store(false, ordering: .releasing) }
}

/// What a thread hands back.
final class ResultBox<T: Sendable>: Sendable {
    let value = Mutex<Result<T, any Error>?>(nil)
}

/// Committed frames waiting for the render thread: (frame, the vsync to render at, CPU work).
final class RenderQueue: Sendable {
    private let frames = Mutex<(items: [(UInt64, Int64, Int64)], closed: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)
    func push(_ id: UInt64, _ vsync: Int64, _ workNs: Int64) { frames.withLock { $0.items.append((id, vsync, workNs)) }; available.signal() }
    func close() { frames.withLock { $0.closed = true }; available.signal() }
    /// Waits until at most `pending` frames wait for the render thread.
    func waitForRoom(pending: Int) { while frames.withLock({ $0.items.count > pending }) { usleep(200) } }
    func next() -> (UInt64, Int64, Int64)? {
        while true {
            available.wait()
            let (item, closed) = frames.withLock { state -> ((UInt64, Int64, Int64)?, Bool) in
                state.items.isEmpty ? (nil, state.closed) : (state.items.removeFirst(), false)
            }
            if let item { return item }
            if closed { return nil }
        }
    }
}

/// A lock another thread takes before a frame and holds, asleep, for 20 ms once the frame asks for it.
final class SleepingLockHolder: Sendable {
    private let lock = NSLock()
    private let held = StopFlag(), go = StopFlag()

    /// Before the frame: another thread takes the lock and waits for the frame's signal.
    func takeLock() {
        held.reset(); go.reset()
        let holder = Thread { [self] in
            lock.lock()
            held.set()
            while !go.isSet { usleep(100) }
            usleep(20_000)
            lock.unlock()
        }
        holder.start()
        while !held.isSet { usleep(100) }
    }

    /// In the frame: asleep ~20 ms until the holder lets go.
    func waitForLock() {
        go.set()
        lock.lock()
        lock.unlock()
    }
}

/// Two of the app's own threads, named alike, spinning on one CPU (the frame thread's, shared three
/// ways at least) and recording events, so their context switches are recorded too.
final class AppHogThreads: Sendable {
    static let name = "cause.hog"
    private let cpu: Int
    private let stopFlag = StopFlag()
    private let running = Atomic<Int>(0)

    init(cpu: Int) { self.cpu = cpu }

    func start() {
        stopFlag.reset()
        for _ in 0..<2 {
            running.add(1, ordering: .relaxed)
            Thread { [self] in
                RecordedCauseTests.pin(to: cpu)
                Trace.setCurrentThreadName(AppHogThreads.name)
                while !stopFlag.isSet {
                    Trace.instant("hog")
                    RecordedCauseTests.spin(cpuNs: RecordedCauseTests.ms)
                }
                running.subtract(1, ordering: .releasing)
            }.start()
        }
    }

    func stop() {
        stopFlag.set()
        while running.load(ordering: .acquiring) > 0 { usleep(1000) }
    }
}
