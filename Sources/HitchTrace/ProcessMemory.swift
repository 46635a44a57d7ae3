import Foundation

/// The process's resident memory, from Linux's /proc (0 where /proc is missing).
public enum ProcessMemory {
    /// The counter the analyzer reads for peak resident memory (docs/METRICS.md "memory").
    public static let residentCounterName: TraceName = "resident-bytes"

    /// Resident bytes now (VmRSS).
    public static var residentBytes: UInt64 { statusBytes("VmRSS:") }
    /// The peak resident bytes since start or since `resetPeak()` (VmHWM).
    public static var peakResidentBytes: UInt64 { statusBytes("VmHWM:") }

    /// Resets the peak to the current resident size (Linux: writing 5 to /proc/self/clear_refs).
    public static func resetPeak() {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return }
        fputs("5", file)
        fclose(file)
    }

    /// Records the resident size as the `resident-bytes` counter.
    public static func recordResident() {
        Trace.counter(residentCounterName, value: Double(residentBytes))
    }

    /// A /proc/self/status field given in kB, in bytes.
    private static func statusBytes(_ field: String) -> UInt64 {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return (line.split(separator: " ").compactMap { UInt64($0) }.first ?? 0) * 1024
        }
        return 0
    }
}
