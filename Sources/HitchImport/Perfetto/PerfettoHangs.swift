import HitchReader
import HitchTrace

/// The app's hangs in an Android trace, as `hang` events of source `perfetto` (docs/IMPORT.md
/// "Perfetto"):
///
/// - **Long main-thread slices**: a top-level slice of the app's main thread (the thread whose id is
///   its process's) lasting at least `HangThresholdDefaults.briefMs`, typed with the slice's name.
///   The analysis sorts them into its tiers as it sorts any hang.
/// - **ANRs**, as trace_processor's `android_anrs` (stdlib `android/anrs.sql`) finds them: atrace
///   counters system_server writes, `ErrorId:<process> <pid>#<uuid>` (or `ErrorId:<process>#<uuid>`)
///   when an app is declared not responding, and `Subject(for ErrorId <uuid>):<subject>`; the
///   stretch the app did not answer is the timer's (a system_server slice
///   `expired(<timer>,<pid>,<uid>,<type>,<duration ms>)`, the latest at or before the ANR for its
///   pid), else the subject's `for <N>s`, and ends at the ANR. An ANR without either is a mark of
///   no length. Typed `ANR`, on the app's main thread.
final class PerfettoHangs {
    private let sink: ImportSink
    private let processes: PerfettoProcesses
    private let source: StringID
    /// Long slices waiting for the app to be known; ANRs and their subjects and timers (a trace has a
    /// few: the bounds keep a hostile one's matching, ANRs × timers, small).
    static let limit = 100_000
    static let anrLimit = 1_000, timerLimit = 10_000

    init(sink: ImportSink, processes: PerfettoProcesses) {
        self.sink = sink
        self.processes = processes
        source = sink.string(HangSourceWord.perfetto)
    }

    // MARK: Long main-thread slices

    private var pendingSlices: [(tid: Int64, beginNs: Int64, endNs: Int64, name: String)] = []

    /// A top-level slice of `tid` ended: a hang when the thread is an app's main thread and the slice
    /// is long enough. Written now when the app is known, else kept until the end of the trace.
    func topLevelSlice(tid: Int64, name: String, beginNs: Int64, endNs: Int64) {
        // Hostile timestamps (any int64) must not overflow the subtraction.
        let (lengthNs, overflow) = endNs.subtractingReportingOverflow(beginNs)
        guard !overflow, lengthNs >= Int64(HangThresholdDefaults.briefMs * 1e6), processes.process(ofThread: tid) == tid else { return }
        if processes.isAppThread(tid) {
            write(tid: tid, beginNs: beginNs, endNs: endNs, type: name)
        } else if pendingSlices.count < Self.limit {
            pendingSlices.append((tid, beginNs, endNs, name))
        } else {
            sink.skip("long main-thread slices past \(Self.limit) waiting for the app to be known")
        }
    }

    // MARK: ANRs

    private struct ANR { var atNs: Int64; var markerPid: Int64; var process: String; var pid: Int64?; var errorID: String }
    private var anrs: [ANR] = []
    private var subjects: [String: String] = [:]
    private var timers: [(atNs: Int64, pid: Int64, durationMs: Int64)] = []

    /// An atrace counter (`C|pid|name|value`) of process `pid`: the ANR markers.
    func counter(pid: Int64, name: Substring, at timestamp: Int64) {
        if name.hasPrefix("ErrorId:") {
            // "ErrorId:<process> <pid>#<uuid>" (v2) or "ErrorId:<process>#<uuid>" (v1).
            guard let hash = name.firstIndex(of: "#") else { return }
            guard anrs.count < Self.anrLimit else { sink.skip("ANR markers past \(Self.anrLimit)"); return }
            let who = name[name.index(name.startIndex, offsetBy: 8)..<hash].split(separator: " ")
            guard let process = who.first else { return }
            anrs.append(ANR(atNs: timestamp, markerPid: pid, process: String(process), pid: who.count > 1 ? Int64(who[1]) : nil,
                            errorID: String(name[name.index(after: hash)...])))
        } else if name.hasPrefix("Subject(for ErrorId "), let close = name.firstIndex(of: ")") {
            let id = name[name.index(name.startIndex, offsetBy: 20)..<close]
            var subject = name[name.index(after: close)...]
            if subject.first == ":" { subject = subject.dropFirst() }
            if subjects.count < Self.anrLimit { subjects[String(id)] = String(subject.prefix(300)) }
        }
    }

    /// A slice began: `expired(<timer>,<pid>,<uid>,<type>,<duration ms>)` is an ANR timer's expiry.
    func sliceBegan(_ name: some StringProtocol, at timestamp: Int64) {
        guard name.hasPrefix("expired("), name.hasSuffix(")"), timers.count < Self.timerLimit else { return }
        let fields = String(name.dropFirst(8).dropLast()).split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
        guard fields.count == 5, let pid = Int64(fields[1]), let ms = Int64(fields[4]), ms >= 0 else { return }
        timers.append((timestamp, pid, ms))
    }

    // MARK: The end

    func finish() {
        for slice in pendingSlices where processes.isAppThread(slice.tid) {
            write(tid: slice.tid, beginNs: slice.beginNs, endNs: slice.endNs, type: slice.name)
        }
        var foreign = 0, unnamed = 0
        // A v1 marker names its process only: its pid by name, looked up once.
        var pidsByName: [String: Int64] = [:]
        if anrs.contains(where: { $0.pid == nil }) {
            for (pid, name) in processes.processNames where pidsByName[name] == nil { pidsByName[name] = pid }
        }
        for anr in anrs {
            guard processes.processNames[anr.markerPid] == "system_server" else { unnamed += 1; continue }
            let pid = anr.pid ?? pidsByName[anr.process]
            guard let pid, processes.isAppThread(pid) else { foreign += 1; continue }
            let timer = timers.filter { $0.pid == pid && $0.atNs <= anr.atNs }.max { $0.atNs < $1.atNs }
            let durationMs = timer?.durationMs ?? subjects[anr.errorID].flatMap(Self.seconds).map { min(max($0, 0), 3_600) * 1000 } ?? 0
            let (beginNs, overflow) = anr.atNs.subtractingReportingOverflow(min(max(durationMs, 0), 3_600_000) * 1_000_000)
            write(tid: pid, beginNs: overflow ? anr.atNs : beginNs, endNs: anr.atNs, type: "ANR")
        }
        if unnamed > 0 { sink.skip("ANR markers of a process the trace does not name system_server", count: unnamed) }
        if foreign > 0 { sink.skip("ANRs of processes other than the app", count: foreign) }
    }

    /// "Blocked in handler on foreground thread (android.fg) for 2s" -> 2.
    static func seconds(_ subject: String) -> Int64? {
        let words = subject.split(separator: " ")
        guard let index = words.indices.last(where: { $0 + 1 < words.count && words[$0] == "for" }) else { return nil }
        let value = words[index + 1]
        guard let s = value.firstIndex(of: "s") else { return nil }
        return Int64(value[..<s])
    }

    private func write(tid: Int64, beginNs: Int64, endNs: Int64, type: String) {
        sink.emit(TraceEvent(timestampNs: beginNs, thread: processes.thread(tid), payload: .hang(Hang(
            endNs: endNs, source: source, type: sink.string(String(type.prefix(200)))))))
    }
}
