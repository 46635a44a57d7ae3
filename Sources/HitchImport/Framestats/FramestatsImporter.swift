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

public struct FramestatsImporter {
    /// The refresh period for dumps without a FrameInterval column (before Android 12); nil infers it
    /// from the spacing of IntendedVsync.
    public var periodNs: Int64?

    public init(periodNs: Int64? = nil) { self.periodNs = periodNs }

    /// Imports `path` into `sink`; `name` names the file in errors.
    public func importFile(path: String, into sink: ImportSink) throws {
        try importBytes(try readWholeFile(path, limit: 256 << 20), name: path, into: sink)
    }

    public func importBytes(_ bytes: [UInt8], name: String, into sink: ImportSink) throws {
        var windows: [Window] = []
        var windowName: String?
        var processName = "app"
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
                }
                inBlock.toggle()
                continue
            }
            if !inBlock {
                let text = String(decoding: line, as: UTF8.self)
                if text.hasPrefix("Window: ") { windowName = String(text.dropFirst(8)) }
                if text.hasPrefix("** Graphics info for pid "), let open = text.firstIndex(of: "["), let close = text.lastIndex(of: "]"), open < close {
                    processName = String(text[text.index(after: open)..<close])
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
        try write(windows, processName: processName, name: name, into: sink)
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

    private func write(_ windows: [Window], processName: String, name: String, into sink: ImportSink) throws {
        let pid: UInt64 = 1
        var frameID: UInt64 = 0
        // Each window has its own UI thread, RenderThread and GPU track in the trace, so frames of
        // two windows never interleave on one thread.
        let threads = windows.indices.map { windowIndex -> (main: ThreadID, render: ThreadID, gpu: ThreadID) in
            let tidBase = UInt64(windowIndex) * 4 + 1
            let label = windows.count > 1 ? " (\(windows[windowIndex].name))" : ""
            return (sink.thread(pid: pid, tid: tidBase, name: "main" + label, role: "main"),
                    sink.thread(pid: pid, tid: tidBase + 1, name: "RenderThread" + label, role: "render"),
                    sink.thread(pid: pid, tid: tidBase + 2, name: "GPU" + label))
        }
        if let first = threads.first {
            sink.metadata(MetadataKey.importedFrom.name, "framestats", thread: first.main, timestampNs: firstTime(windows))
            sink.metadata(MetadataKey.process.name, processName, thread: first.main, timestampNs: firstTime(windows))
        }
        for (windowIndex, window) in windows.enumerated() {
            guard let header = window.header else { continue }
            let (main, render, gpu) = threads[windowIndex]
            var frames = window.rows.map { frame($0, header) }
            frames.sort { $0.intendedVsync < $1.intendedVsync }
            let inferredPeriod = periodNs ?? inferPeriod(frames)
            if periodNs == nil, header["FrameInterval"] == nil {
                sink.skip("windows without a FrameInterval column: period inferred from IntendedVsync spacing (\(inferredPeriod) ns); --refresh sets it")
            }
            var verdict = AndroidJankRule()
            for frame in frames {
                if frame.flags & (Self.skippedFrameFlag | Self.surfaceCanvasFlag) != 0 {
                    sink.skip("frames flagged SkippedFrame or SurfaceCanvas (Android does not judge them either)")
                    continue
                }
                guard frame.intendedVsync > 0, frame.frameCompleted >= frame.intendedVsync,
                      frame.frameCompleted - frame.intendedVsync < 10_000_000_000 else {
                    sink.skip("frames with impossible times (FrameCompleted before IntendedVsync, or over 10 s after it)")
                    continue
                }
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
                                         detail: frame.deadline == nil ? "over one period" : "missed deadline")
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

