#if canImport(Glibc)
import Glibc
#endif
import HitchReader
import HitchTrace

// `adb shell dumpsys gfxinfo <package> framestats` -> frames and stages. The dump has one
// `---PROFILEDATA---` block per window: a header naming the columns of AOSP's FrameInfo
// (libs/hwui/FrameInfo.h; 14 columns on Android 6, 16 on 8, 17 on 10, 22 on 12, 23 on 14, more
// since) and one row of nanosecond times per frame, every line ending in a comma. Columns are
// found by name, so any column set reads. Some Android 12 builds print `FrameInterval` and
// `FrameStartTime` swapped in the header while the rows keep FrameInfo's order: the row's values
// settle which is which (a start time is an absolute time near Vsync, an interval a period).
//
// A frame here is Android's own: it begins at IntendedVsync, is due at FrameDeadline (Android 12+;
// before, IntendedVsync + one period), is handed to the compositor when its GPU work completes
// (GpuCompleted, else FrameCompleted: what Android's JankTracker compares with the deadline), and is
// on screen at DisplayPresentTime when a frame-metrics listener made the system record it (0
// otherwise: the frame is judged from its hand-over, docs/METRICS.md).
//
// A dump is text in UTF-8 (a byte-order mark allowed) or, as Windows PowerShell saves `adb shell`'s
// output, UTF-16 LE or BE with its byte-order mark; lines end in LF or CRLF. Every window block is
// read (a whole-device dump has several processes, each with its windows); one window is imported:
// the one with the most frames among the process `--process` names (or among all), said in the
// import's warnings with the windows left out.

public struct FramestatsImporter {
    /// The refresh period for dumps without a FrameInterval column (before Android 12); nil infers it
    /// from the spacing of IntendedVsync.
    public var periodNs: Int64?
    /// The process whose window to import (`--process NAME|PID`: its package or pid).
    public var selection: PerfettoProcessSelection?

    public init(periodNs: Int64? = nil, selection: PerfettoProcessSelection? = nil) { self.periodNs = periodNs; self.selection = selection }

    /// Imports `path` into `sink`; `name` names the file in errors.
    public func importFile(path: String, into sink: ImportSink) throws {
        try importBytes(try readWholeFile(path, limit: 256 << 20), name: path, into: sink)
    }

    /// The dump's text as UTF-8: a UTF-16 dump (LE or BE, by its byte-order mark) transcoded, a UTF-8
    /// byte-order mark dropped. Unpaired surrogates become U+FFFD.
    static func utf8Text(_ bytes: [UInt8]) -> [UInt8] {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes.dropFirst(3)) }
        let littleEndian = bytes.starts(with: [0xFF, 0xFE]), bigEndian = bytes.starts(with: [0xFE, 0xFF])
        guard littleEndian || bigEndian else { return bytes }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = 2
        while index + 1 < bytes.count {
            let (a, b) = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
            units.append(littleEndian ? a | b << 8 : a << 8 | b)
            index += 2
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    public func importBytes(_ raw: [UInt8], name: String, into sink: ImportSink) throws {
        let bytes = Self.utf8Text(raw)
        var windows: [Window] = []
        var windowName: String?
        var processName = "app"
        var processID: Int64 = 0
        var inBlock = false
        var header: Header?
        var lineNumber = 0
        var lineStart = 0
        var current = Window(name: "", rows: [])
        var sawBlock = false
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
            lineNumber += 1
            var end = lineEnd
            while end > lineStart, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            var start = lineStart
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            let line = bytes[start..<end]
            lineStart = lineEnd + 1
            if line.elementsEqual("---PROFILEDATA---".utf8) {
                if inBlock {
                    windows.append(current)
                    header = nil
                } else {
                    sawBlock = true
                    current = Window(name: windowName ?? "window \(windows.count + 1)", rows: [])
                    current.process = processName
                    current.pid = processID
                }
                inBlock.toggle()
                continue
            }
            if !inBlock {
                let text = String(decoding: line, as: UTF8.self)
                if text.hasPrefix("Window: ") { windowName = String(text.dropFirst(8)) }
                if text.hasPrefix("** Graphics info for pid "), let open = text.firstIndex(of: "["), let close = text.lastIndex(of: "]"), open < close {
                    processName = String(text[text.index(after: open)..<close])
                    processID = Int64(text.dropFirst(25).prefix { $0.isNumber }) ?? 0
                    windowName = nil
                }
                continue
            }
            if line.isEmpty { continue }
            let fields = splitFields(line)
            if header == nil {
                guard let first = fields.first, first.elementsEqual("Flags".utf8) else {
                    throw ImportError(file: name, location: "line \(lineNumber)", expected: "a header line starting 'Flags,' after ---PROFILEDATA---")
                }
                header = try Header(fields.map { String(decoding: $0, as: UTF8.self) }, file: name, line: lineNumber)
                continue
            }
            guard fields.count == header!.count else {
                throw ImportError(file: name, location: "line \(lineNumber)",
                                  expected: "\(header!.count) comma-separated values as the header names, found \(fields.count)")
            }
            var row = [Int64](repeating: 0, count: fields.count)
            for (index, field) in fields.enumerated() {
                guard let value = parseInteger(field) else {
                    throw ImportError(file: name, location: "line \(lineNumber), column \(index + 1) (\(header!.names[index]))",
                                      expected: "an integer, found '\(String(decoding: field.prefix(24), as: UTF8.self))'")
                }
                row[index] = value
            }
            current.header = header
            current.rows.append(row)
        }
        if inBlock {
            throw ImportError(file: name, location: "end of file after line \(lineNumber)", expected: "a closing ---PROFILEDATA--- (the dump ends inside a block)")
        }
        guard sawBlock else {
            throw ImportError(file: name, location: "line 1", expected: "a ---PROFILEDATA--- block, as 'adb shell dumpsys gfxinfo PACKAGE framestats' prints")
        }
        try write([try pickWindow(windows, name: name, into: sink)], processName: nil, name: name, into: sink)
    }

    /// The window to import: among the process `selection` names (or all), the one with the most
    /// frames (the first of equals); the choice and the windows left out are said in the warnings.
    func pickWindow(_ windows: [Window], name: String, into sink: ImportSink) throws -> Window {
        let candidates = windows.indices.filter { index in
            selection.map { $0.matches(pid: windows[index].pid, processName: windows[index].process, layerPackage: nil) } ?? true
        }
        func describe(_ w: Window) -> String {
            let pid = w.pid > 0 ? " (pid \(w.pid))" : ""
            return "'\(w.name)' of \(w.process)\(pid): \(w.rows.count) frames"
        }
        var best: Int?
        for index in candidates where best.map({ windows[index].rows.count > windows[$0].rows.count }) ?? true { best = index }
        guard let best else {
            let processes = Set(windows.map { w in w.pid > 0 ? "\(w.process) (pid \(w.pid))" : w.process }).sorted()
            throw ImportError(file: name, location: "--process", expected: "a process the dump has windows of, one of: " + processes.joined(separator: ", "))
        }
        let picked = windows[best]
        if windows.count > 1 {
            let others = windows.indices.filter { $0 != best }.map { describe(windows[$0]) }
            let why = selection.map { " (\($0), the most frames)" } ?? " (the most frames; --process NAME|PID picks a process)"
            sink.note("read window " + describe(picked) + why + "; left out " + others.prefix(5).joined(separator: ", ")
                      + (others.count > 5 ? " and \(others.count - 5) more" : ""))
        }
        return picked
    }

    // MARK: Columns

    struct Header {
        var names: [String]
        var count: Int { names.count }
        var index: [String: Int] = [:]
        init(_ names: [String], file: String, line: Int) throws {
            self.names = names
            for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
            for required in ["IntendedVsync", "Vsync", "FrameCompleted"] where index[required] == nil {
                throw ImportError(file: file, location: "line \(line)", expected: "a '\(required)' column in the header")
            }
        }
        subscript(_ name: String) -> Int? { index[name] }
    }

    struct Window {
        var name: String
        var header: Header?
        var rows: [[Int64]]
        /// The process whose `Graphics info` section holds the window (its package, its pid).
        var process = "app"
        var pid: Int64 = 0
    }

    /// One row's frame times, by FrameInfo name.
    struct Frame {
        var flags: Int64 = 0
        var intendedVsync: Int64 = 0, vsync: Int64 = 0
        var handleInputStart: Int64 = 0, animationStart: Int64 = 0, performTraversalsStart: Int64 = 0, drawStart: Int64 = 0
        var deadline: Int64?
        var intervalNs: Int64?
        var syncQueued: Int64 = 0, syncStart: Int64 = 0, issueDrawCommandsStart: Int64 = 0, swapBuffers: Int64 = 0
        var frameCompleted: Int64 = 0, gpuCompleted: Int64 = 0, swapBuffersCompleted: Int64 = 0, displayPresent: Int64 = 0
        var workloadTargetNs: Int64 = 0
    }

    static let skippedFrameFlag: Int64 = 1 << 3
    static let surfaceCanvasFlag: Int64 = 1 << 2
    static let unknownDeadline = Int64.max

    func frame(_ row: [Int64], _ header: Header) -> Frame {
        func value(_ name: String) -> Int64 { header[name].map { row[$0] } ?? 0 }
        var frame = Frame()
        frame.flags = value("Flags")
        frame.intendedVsync = value("IntendedVsync"); frame.vsync = value("Vsync")
        frame.handleInputStart = value("HandleInputStart"); frame.animationStart = value("AnimationStart")
        frame.performTraversalsStart = value("PerformTraversalsStart"); frame.drawStart = value("DrawStart")
        frame.syncQueued = value("SyncQueued"); frame.syncStart = value("SyncStart")
        frame.issueDrawCommandsStart = value("IssueDrawCommandsStart"); frame.swapBuffers = value("SwapBuffers")
        frame.frameCompleted = value("FrameCompleted"); frame.gpuCompleted = value("GpuCompleted")
        frame.swapBuffersCompleted = value("SwapBuffersCompleted"); frame.displayPresent = value("DisplayPresentTime")
        frame.workloadTargetNs = value("WorkloadTarget")
        if header["FrameDeadline"] != nil {
            let deadline = value("FrameDeadline")
            if deadline != Self.unknownDeadline, deadline > frame.intendedVsync { frame.deadline = deadline }
        }
        if let intervalColumn = header["FrameInterval"] {
            var interval = row[intervalColumn]
            // The swapped header: the "FrameInterval" column holds a time near Vsync, the
            // "FrameStartTime" column the period.
            if let startColumn = header["FrameStartTime"], abs(interval - frame.vsync) < abs(row[startColumn] - frame.vsync),
               row[startColumn] > 0, row[startColumn] < 10_000_000_000 {
                interval = row[startColumn]
            }
            if interval > 0, interval < 10_000_000_000 { frame.intervalNs = interval }
        }
        return frame
    }

    // MARK: Events

    private func write(_ windows: [Window], processName explicitName: String?, name: String, into sink: ImportSink) throws {
        let processName = explicitName ?? windows.first?.process ?? "app"
        let pid: UInt64 = 1
        var frameID: UInt64 = 0
        // Each window has its own UI thread, RenderThread and GPU track in the trace, so frames of
        // two windows never interleave on one thread.
        let threads = windows.indices.map { windowIndex -> (main: ThreadID, render: ThreadID, gpu: ThreadID) in
            let tidBase = UInt64(windowIndex) * 4 + 1
            let label = windows.count > 1 ? " (\(windows[windowIndex].name))" : ""
            return (sink.thread(pid: pid, tid: tidBase, name: "main" + label, role: .main),
                    sink.thread(pid: pid, tid: tidBase + 1, name: "RenderThread" + label, role: .render),
                    sink.thread(pid: pid, tid: tidBase + 2, name: "GPU" + label))
        }
        if let first = threads.first {
            sink.metadata(.importedFrom, ImportFormat.framestats.rawValue, thread: first.main, timestampNs: firstTime(windows))
            sink.metadata(.process, processName, thread: first.main, timestampNs: firstTime(windows))
        }
        for (windowIndex, window) in windows.enumerated() {
            guard let header = window.header else { continue }
            let (main, render, gpu) = threads[windowIndex]
            var frames = window.rows.map { frame($0, header) }
            frames.sort { $0.intendedVsync < $1.intendedVsync }
            let spacing = inferPeriod(frames)
            let inferredPeriod = periodNs ?? spacing
            if periodNs == nil, header["FrameInterval"] == nil {
                sink.note("no FrameInterval column (before Android 12): the period is the IntendedVsync spacing, \(Self.hertz(spacing)) Hz; --refresh sets it")
            }
            if let asked = periodNs {
                let recorded = frames.lazy.compactMap(\.intervalNs).first
                if let recorded, abs(Double(recorded - asked)) > 0.05 * Double(recorded) {
                    throw ImportError(file: name, location: "FrameInterval", expected: "a dump at the rate --refresh names: its frames record "
                                      + "\(Self.hertz(recorded)) Hz (FrameInterval), --refresh says \(Self.hertz(asked)) Hz; leave --refresh out, the dump's own rate is used")
                }
                if recorded == nil, frames.count > 1, !Self.isWholeMultiple(spacing, of: asked) {
                    sink.note("--refresh \(Self.hertz(asked)) Hz, though the frames' IntendedVsync steps (\(Self.hertz(spacing)) Hz) are not whole periods of it: judged at \(Self.hertz(asked)) Hz as asked")
                }
            }
            var verdict = AndroidJankRule()
            for frame in frames {
                if frame.flags & (Self.skippedFrameFlag | Self.surfaceCanvasFlag) != 0 {
                    sink.skip("frames flagged SkippedFrame or SurfaceCanvas (Android does not judge them either)")
                    continue
                }
                guard frame.intendedVsync > 0, frame.frameCompleted - frame.intendedVsync < 10_000_000_000,
                      frame.intendedVsync - frame.frameCompleted < 10_000_000_000 else {
                    sink.skip("frames with impossible times (no IntendedVsync, or FrameCompleted over 10 s from it)")
                    continue
                }
                // Kept and flagged: a frame completed before its intended vsync is a clock or
                // bookkeeping oddity of the dump, not a frame to leave out.
                let completedEarly = frame.frameCompleted < frame.intendedVsync
                if completedEarly { sink.note("frames whose FrameCompleted precedes their IntendedVsync (kept, and flagged in their verdict)", counted: true) }
                frameID += 1
                let period = frame.intervalNs ?? inferredPeriod
                let target = frame.deadline ?? (frame.intendedVsync + period)
                let handOver = frame.gpuCompleted > frame.frameCompleted ? frame.gpuCompleted : frame.frameCompleted
                sink.emit(TraceEvent(timestampNs: frame.intendedVsync, thread: main, payload: .frameBegan(FrameBegan(
                    frameID: frameID, vsyncNs: frame.intendedVsync, targetNs: target, periodNs: period))))
                stages(frame, main: main, render: render, gpu: gpu, into: sink)
                sink.emit(TraceEvent(timestampNs: handOver, thread: main, payload: .frameCommitted(frameID: frameID)))
                if frame.displayPresent > 0 {
                    sink.emit(TraceEvent(timestampNs: frame.displayPresent, thread: render, payload: .framePresented(frameID: frameID)))
                }
                let janky = verdict.isJanky(frame, periodNs: period)
                sink.emitPlatformVerdict(janky ? .janky : .onTime, frameID: frameID, atNs: frame.intendedVsync, thread: main,
                                         detail: (frame.deadline == nil ? "over one period" : "missed deadline")
                                            + (completedEarly ? "; FrameCompleted before IntendedVsync" : ""))
            }
        }
    }

    private func stages(_ frame: Frame, main: ThreadID, render: ThreadID, gpu: ThreadID, into sink: ImportSink) {
        let category = sink.string("stage")
        func stage(_ name: String, _ start: Int64, _ end: Int64, _ thread: ThreadID) {
            guard start > 0, end >= start, end - start < 10_000_000_000 else { return }
            sink.emit(TraceEvent(timestampNs: start, thread: thread, payload: .intervalComplete(category: category, name: sink.string(name), endNs: end)))
        }
        // FrameMetrics' durations (android.view.FrameMetrics), each as a stage.
        stage("input handling", frame.handleInputStart, frame.animationStart, main)
        stage("animation", frame.animationStart, frame.performTraversalsStart, main)
        stage("layout/measure", frame.performTraversalsStart, frame.drawStart, main)
        stage("draw", frame.drawStart, frame.syncQueued, main)
        stage("sync", frame.syncStart, frame.issueDrawCommandsStart, render)
        stage("command issue", frame.issueDrawCommandsStart, frame.swapBuffers, render)
        stage("swap buffers", frame.swapBuffers, frame.swapBuffersCompleted > 0 ? frame.swapBuffersCompleted : frame.frameCompleted, render)
        if frame.gpuCompleted > 0 { stage("gpu", frame.swapBuffers, frame.gpuCompleted, gpu) }
    }

    /// The refresh period from the spacing of IntendedVsync (the smallest step between frames that
    /// began on different vsyncs, at least 2 ms); 60 Hz when a window has a single frame.
    func inferPeriod(_ frames: [Frame]) -> Int64 {
        var smallest = Int64.max
        for index in frames.indices.dropFirst() {
            let step = frames[index].intendedVsync - frames[index - 1].intendedVsync
            if step >= 2_000_000, step < smallest { smallest = step }
        }
        return smallest == .max || smallest > 100_000_000 ? 16_666_667 : smallest
    }

    static func hertz(_ periodNs: Int64) -> String {
        let rate = (1e10 / Double(max(periodNs, 1))).rounded() / 10
        return rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }

    /// Whether `step` is within 10% of a whole number (at least one) of `period`s.
    static func isWholeMultiple(_ step: Int64, of period: Int64) -> Bool {
        guard period > 0 else { return false }
        let periods = (Double(step) / Double(period)).rounded()
        return periods >= 1 && abs(Double(step) - periods * Double(period)) <= 0.1 * Double(period)
    }

    private func firstTime(_ windows: [Window]) -> Int64 {
        var first = Int64.max
        for window in windows {
            guard let column = window.header?["IntendedVsync"] else { continue }
            for row in window.rows where row[column] > 0 { first = min(first, row[column]) }
        }
        return first == .max ? 0 : first
    }
}

/// Android's own per-frame jank judgement (libs/hwui/JankTracker.cpp): with a FrameDeadline
/// (Android 12+), janky when the GPU completes at or after the deadline, the deadline moved for
/// buffer stuffing; before, janky when IntendedVsync -> FrameCompleted, less time the sync waited
/// on the previous frame, exceeds the period (the "Janky frames" count of those releases).
struct AndroidJankRule {
    private var nextUnstuffedStartNs: Int64 = 0

    mutating func isJanky(_ frame: FramestatsImporter.Frame, periodNs: Int64) -> Bool {
        guard let frameDeadline = frame.deadline else {
            var total = frame.frameCompleted - frame.intendedVsync
            let stall = frame.syncStart - frame.syncQueued
            if frame.syncQueued > 0, stall > 0 { total -= stall }
            return total > periodNs
        }
        let completed = frame.gpuCompleted > 0 ? frame.gpuCompleted : frame.frameCompleted
        let tripleBuffered = Double(nextUnstuffedStartNs - frame.intendedVsync) > Double(periodNs) * 0.1
        var deadline = frameDeadline
        if tripleBuffered {
            let budget = frame.workloadTargetNs > 0 ? frame.workloadTargetNs : frameDeadline - frame.intendedVsync
            deadline = nextUnstuffedStartNs + budget
        }
        if completed < deadline {
            if tripleBuffered { nextUnstuffedStartNs += periodNs }
            return false
        }
        let offset = (completed - frame.vsync) % max(periodNs, 1)
        nextUnstuffedStartNs = completed - offset + periodNs
        return true
    }
}

/// A comma-separated line's fields; the trailing comma every framestats line ends with adds none.
private func splitFields(_ line: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
    var fields = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
    if fields.last?.isEmpty == true { fields.removeLast() }
    return fields.map { field in
        var trimmed = field
        while trimmed.first == 0x20 { trimmed = trimmed.dropFirst() }
        while trimmed.last == 0x20 { trimmed = trimmed.dropLast() }
        return trimmed
    }
}

/// A decimal Int64 (optionally negative), or nil.
func parseInteger(_ bytes: ArraySlice<UInt8>) -> Int64? {
    var rest = bytes
    var negative = false
    if rest.first == UInt8(ascii: "-") { negative = true; rest = rest.dropFirst() }
    guard !rest.isEmpty, rest.count <= 19 else { return nil }
    var value: Int64 = 0
    for byte in rest {
        guard byte >= 0x30, byte <= 0x39 else { return nil }
        let (times, o1) = value.multipliedReportingOverflow(by: 10)
        let (plus, o2) = times.addingReportingOverflow(Int64(byte - 0x30))
        guard !o1, !o2 else { return nil }
        value = plus
    }
    return negative ? -value : value
}

