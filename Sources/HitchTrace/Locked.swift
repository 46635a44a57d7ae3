import Foundation

/// A value behind a pthread mutex (NSLock), for state shared between app threads and the
/// recorder's writer and drain threads. Not `Synchronization.Mutex`: a contended Mutex parks on a
/// futex ThreadSanitizer cannot see on Linux, so the recorder's concurrency tests reported races
/// that were not there (F8 in docs/RELIABILITY.md); NSLock's pthread mutex is intercepted.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
