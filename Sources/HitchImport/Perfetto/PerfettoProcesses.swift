import HitchReader
import HitchTrace

/// The process tree and the thread tracks (`process_tree`, `track_descriptor`): process and thread
/// names, which process a thread belongs to, the tracks slices sit on, the trace's threads as declared
/// to the sink, and which process is the app (the one `--process` names, or the one with surface
/// frames).
final class PerfettoProcesses {
    let sink: ImportSink
    /// `--process`: the one app whose frames, slices and threads' switches are imported.
    let selection: PerfettoProcessSelection?

    init(sink: ImportSink, selection: PerfettoProcessSelection?) {
        self.sink = sink
        self.selection = selection
    }

    private(set) var processNames: [Int64: String] = [:]
    private var threadNames: [Int64: String] = [:]
    private var threadProcess: [Int64: Int64] = [:]
    struct Track { var pid: Int64; var tid: Int64 }
    private var tracks: [UInt64: Track] = [:]
    private var declared: [Int64: ThreadID] = [:]
    /// Processes with app surface frames (the selected one only, with `--process`): their threads'
    /// switches are kept, and their frames get thread states.
    private var appPids: Set<Int64> = []
    /// Every process with surface frames, selected or not: the candidates an ambiguous trace lists.
    private var candidates: [Int64: (layer: String, frames: Int)] = [:]
    /// Processes a layer name's package names ("com.example.app/...#0"), for `--process NAME`.
    private var layerPackages: [Int64: String] = [:]

    /// The trace's thread for `tid`, declared to the sink on first use with the name known then.
    func thread(_ tid: Int64, pid explicitPid: Int64? = nil, role: ThreadRole? = nil) -> ThreadID {
        if let id = declared[tid] { return id }
        let pid = explicitPid ?? threadProcess[tid] ?? tid
        let name = threadNames[tid] ?? (tid == pid ? processNames[pid] : nil) ?? "thread \(tid)"
        let id = sink.thread(pid: UInt64(bitPattern: pid), tid: UInt64(bitPattern: tid), name: name,
                             role: role ?? (name == "RenderThread" ? .render : nil))
        declared[tid] = id
        return id
    }

    /// The thread track `uuid` names, if a descriptor declared one.
    func track(_ uuid: UInt64) -> Track? { tracks[uuid] }

    /// The process of `tid` (the thread itself when the trace does not say).
    func process(ofThread tid: Int64) -> Int64 { threadProcess[tid] ?? tid }

    /// `pid` owns `tid`, as an atrace marker says, unless the trace said otherwise first.
    func noteProcess(_ pid: Int64, ofThread tid: Int64) {
        if threadProcess[tid] == nil, threadProcess.count < PerfettoState.maxNames { threadProcess[tid] = pid }
    }

    func processTree(_ message: ProtoReader) throws(ProtoError) {
        var reader = message
        while let field = try reader.next() {
            guard case .bytes(let range) = field.value, field.number == 1 || field.number == 2 else { continue }
            var entry = message.message(range)
            var id: Int64 = 0, tgid: Int64 = 0, name: String?
            while let f = try entry.next() {
                switch (field.number, f.number) {
                case (1, 1), (2, 1): id = f.int64
                case (1, 3): if name == nil, case .bytes(let text) = f.value { name = entry.string(text) }
                case (2, 2): if case .bytes(let text) = f.value { name = entry.string(text) }
                case (2, 3): tgid = f.int64
                default: break
                }
            }
            guard let name, processNames.count + threadNames.count < PerfettoState.maxNames else { continue }
            if field.number == 1 {
                // A cmdline's first word, without its path: "com.example.app", "/system/bin/surfaceflinger".
                processNames[id] = String(name.split(separator: " ").first.map { $0.split(separator: "/").last ?? $0 } ?? Substring(name))
            } else {
                threadNames[id] = name
                if tgid != 0 { threadProcess[id] = tgid }
            }
        }
    }

    func trackDescriptor(_ message: ProtoReader) throws(ProtoError) {
        var reader = message
        var uuid: UInt64 = 0
        var pid: Int64?, tid: Int64?, threadName: String?, processName: String?
        while let field = try reader.next() {
            switch (field.number, field.value) {
            case (1, _): uuid = field.uint64
            case (3, .bytes(let range)):
                var process = message.message(range)
                while let f = try process.next() {
                    if f.number == 1 { pid = f.int64 }
                    if f.number == 6, case .bytes(let text) = f.value { processName = process.string(text) }
                }
            case (4, .bytes(let range)):
                var thread = message.message(range)
                while let f = try thread.next() {
                    if f.number == 1 { pid = f.int64 }
                    if f.number == 2 { tid = f.int64 }
                    if f.number == 5, case .bytes(let text) = f.value { threadName = thread.string(text) }
                }
            default: break
            }
        }
        guard tracks.count < PerfettoState.maxNames else { return }
        if let pid, let processName { processNames[pid] = processName }
        if let tid {
            tracks[uuid] = Track(pid: pid ?? tid, tid: tid)
            if let threadName { threadNames[tid] = threadName }
            if let pid { threadProcess[tid] = pid }
        }
    }

    /// A thread whose process is the app's (a selected process, or one with surface frames).
    func isAppThread(_ tid: Int64) -> Bool {
        guard tid > 0 else { return false }
        let pid = threadProcess[tid] ?? tid
        return appPids.contains(pid) || selection?.matches(pid: pid, processName: processNames[pid], layerPackage: layerPackages[pid]) == true
    }

    /// Whether a surface frame of `pid` is imported (`--process`), noting the process as a candidate
    /// (`counts`: once per frame, at its actual start).
    func surfaceProcess(_ pid: Int64, layer: String, counts: Bool) -> Bool {
        if candidates[pid] == nil {
            guard candidates.count < 4096 else { return appPids.contains(pid) }
            candidates[pid] = (String(layer.prefix(200)), 0)
            // "com.example.app/com.example.app.MainActivity#0" (Android 12 adds "TX - " to some).
            var package = Substring(layer)
            if package.hasPrefix("TX - ") { package = package.dropFirst(5) }
            if let slash = package.firstIndex(of: "/") { layerPackages[pid] = String(package[..<slash]) }
        }
        if counts { candidates[pid]?.frames += 1 }
        let selected = selection.map { $0.matches(pid: pid, processName: processNames[pid], layerPackage: layerPackages[pid]) } ?? true
        if selected { appPids.insert(pid) }
        return selected
    }

    /// The candidates, most frames first: "com.example.app (pid 4242, 120 frames)".
    private func candidateList() -> String {
        candidates.sorted { ($0.value.frames, $1.key) > ($1.value.frames, $0.key) }.prefix(12).map { pid, candidate in
            "\(processNames[pid] ?? layerPackages[pid] ?? candidate.layer) (pid \(pid), \(candidate.frames) frames)"
        }.joined(separator: ", ") + (candidates.count > 12 ? ", and \(candidates.count - 12) more" : "")
    }

    /// At the end of the trace: frames of one app, or of the one `--process` names.
    func checkOneApp(file: String) throws {
        if let selection, appPids.isEmpty {
            throw ImportError(file: file, location: "FrameTimeline",
                              expected: "surface frames of the process \(selection) (--process); "
                                + (candidates.isEmpty ? "the trace has none of any process" : "the trace has frames of: \(candidateList())"))
        }
        if appPids.count > 1 {
            throw ImportError(file: file, location: "FrameTimeline",
                              expected: (selection.map { "one process matching \($0) (--process), found \(appPids.count)" } ?? "surface frames of one app, found \(appPids.count) processes")
                                + ": \(candidateList()); pick one with --process NAME|PID")
        }
    }
}
