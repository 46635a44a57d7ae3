#if canImport(Glibc)
import Glibc
#endif
import HitchReader
import HitchTrace

// `xctrace export --input T.trace --xpath '/trace-toc/run[@number="1"]/data/table[@schema="…"]'`
// -> frames, Apple's hitches, samples and signposts. An export is a `<trace-query-result>` with one
// `<node>` per table: a `<schema name="…">` naming the columns by `<mnemonic>`, then one `<row>` per
// record whose children are the columns' values in order. A value defined once with `id="N"` is
// repeated anywhere later in the same file as `<… ref="N"/>` (timestamps too: a `hid-time` of 0
// is defined once and referred to on every later row); the importer keeps each file's definitions
// (up to `maxDefinitions` values and as many timestamps, the latter as bare numbers) and resolves
// every ref.
// Files are read as a stream (XMLTokenizer); several files, or one with several tables, may be
// given. Tables read:
//
// - `hitches`: Apple's hitches (start, duration, process, is-system, swap-id, narrative-description),
//   kept as the platform verdict of the frame they hit; with no display table to give frames, as
//   Apple's hitches themselves (`platform.hitch` instants: the analysis's platform figures).
// - `display-surface-swap`, `displayed-surfaces-interval`: presents (start or timestamp, process,
//   swap-id, display): one frame each. `display-vsyncs-interval` gives the refresh period in force
//   (its duration, or where that is not a period, the step between the display's vsyncs); without
//   it, `device-display-info` (display-id, max-refresh-rate, is-main-display) gives each display's;
//   without either, the period is the smallest step between presents.
// - `hitches-updates` (the app's commits), `hitches-renders` (the render server's renders) and
//   `hitches-gpu` (the GPU's work), by swap id: a frame's commit and render end (the later of its
//   render and its GPU work), so its hitch splits into commit and render; renders, GPU work and
//   `hitches-framewait` intervals are also stages (`render`, `gpu`, `frame wait`), each on its own
//   thread (the first two of role render), so a late render's time splits between them.
// - `swiftui-updates` (view body updates: start, duration, view-name, thread), `swiftui-causes` and
//   `swiftui-full-causes` (timestamp, source-node, destination-node, their event ids) and
//   `swiftui-update-groups` (start, duration, label): body evaluations by view, invalidation
//   cause -> effect edges (an edge both cause tables list is read once), and update intervals.
// - `time-profile`, `time-sample`: samples with their `<backtrace>` or `<tagged-backtrace>` frames
//   (`name`, `addr`, `<binary name load-addr>`) as stacks and symbols.
// - `os-signpost`, `os-signpost-interval`: intervals (start, duration, name) as stages.
// - `potential-hangs` (start, duration, hang-type, thread, process) and `hang-risks` (time, process,
//   message, severity, event-type, backtrace, thread: instants): hangs (`hang` events, source
//   `instruments`) on the thread the row names, of the app's process, each with Apple's word for it
//   as its type unchanged (`Hang`, `Microhang`, `Severe Hang`, `Brief Unresponsiveness`,
//   `Potential Interaction Delay`; a hang risk's `Hang Risk: <severity>`, else `Hang Risk: <event
//   type>`, else `Hang Risk`, lasting no time: a risk is a place in the code, not a measured stretch).
//
// A frame is reconstructed from its present P: expected at P minus Apple's hitch duration (P when
// no hitch hit it), so it is judged late by what Apple measured; begun two periods before that
// expectation, committed at its `hitches-updates` end (else in time), its render ended at its
// `hitches-renders` end. Other tables are counted and skipped.

public struct XctraceImporter {
    /// Definitions kept for refs; past this many, new ones are not kept (a ref to one is counted).
    public var maxDefinitions = 1_000_000

    /// This file's definitions by id: values, and timestamps (`…-time` elements) as bare numbers.
    var definitions: [Int: XValue] = [:]
    var timeDefinitions: [Int: Int64] = [:]
    var hitches: [Hitch] = []
    struct Hitch { var startNs: Int64; var durationNs: Int64; var swap: Int64?; var pid: Int64; var narrative: String; var isSystem = false }
    /// The export's span: the earliest and latest times any row names.
    var firstTimeNs = Int64.max, lastTimeNs = Int64.min
    /// The file being read, for warnings that name it.
    var currentFile = ""
    /// Presents, 24 bytes each (an export of millions stays in bounded memory): swap ids are kept as
    /// numbers (-1: none or not numeric), process names once per pid.
    struct Present { var atNs: Int64; var swap: Int64; var pid: Int64; var display: Int64 = -1 }
    var presents: [Present] = []
    var processNames: [Int64: String] = [:]
    var vsyncIntervals: [(atNs: Int64, periodNs: Int64)] = []
    /// Each display's latest vsync, for exports whose vsync rows are instants.
    var lastVsyncByDisplay: [String: Int64] = [:]
    var stacks: [[UInt64]: StackID] = [:]
    var symbols: Set<UInt64> = []
    var threads: [Int64: ThreadID] = [:]
    var mainThread: ThreadID?
    var firstSampleNs = Int64.max
    /// The app's commits (`hitches-updates`) and the render server's renders (`hitches-renders`):
    /// each one's end, by swap id (24 bytes each, sorted by swap at the end).
    struct SwapEnd { var swap: Int64; var endNs: Int64; var pid: Int64 }
    var updateEnds: [SwapEnd] = []
    var renderEnds: [SwapEnd] = []
    var gpuEnds: [SwapEnd] = []
    static let maxSwapEnds = 2_000_000
    /// Cause edges read so far, as hashes of (time, source event, destination event) whose lowest
    /// bit says which table (`swiftui-causes` 0, `swiftui-full-causes` 1): both list the same edges,
    /// the full table more, so an edge the other table gave is read once.
    var causeKeys: Set<UInt64> = []
    static let maxCauseKeys = 2_000_000
    /// `device-display-info`: each display's refresh period (from its maximum rate), and the main one.
    var displayPeriods: [Int64: Int64] = [:]
    var mainDisplay: Int64?
    /// `potential-hangs` and `hang-risks` rows, written at the end as the app's hangs: the thread a
    /// row names (nil: none, the app's main thread), and its process.
    struct PlatformHang { var startNs: Int64; var durationNs: Int64; var type: String; var pid: Int64; var thread: ThreadID? }
    var platformHangs: [PlatformHang] = []
    static let maxPlatformHangs = 1_000_000
    /// The app and its main thread once frames or Apple's hitches are written (the hangs kept are its).
    var appPid: Int64?
    var appMainThread: ThreadID?

    public init() {}

    public mutating func importFile(path: String, into sink: ImportSink) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ImportError(file: path, location: "open", expected: "a readable file (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        try run(name: path, into: sink, XMLTokenizer { buffer, count in
            while true {
                let got = read(fd, buffer, count)
                if got < 0, errno == EINTR { continue }
                return got
            }
        })
    }

    public mutating func importBytes(_ bytes: [UInt8], name: String, into sink: ImportSink) throws {
        var position = 0
        try run(name: name, into: sink, XMLTokenizer { buffer, count in
            let n = min(count, bytes.count - position)
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
            position += n
            return n
        })
    }

    private mutating func run(name: String, into sink: ImportSink, _ tokenizer: XMLTokenizer) throws {
        var xml = tokenizer
        // Ids are the file's own: a ref never reaches another file's definition.
        definitions.removeAll(keepingCapacity: true)
        timeDefinitions.removeAll(keepingCapacity: true)
        currentFile = name
        var table: String?
        var columns: [String] = []
        var inSchema = false, inMnemonic = false
        var sawResult = false
        var depth = 0
        // A row being read: the value elements open below it.
        var rowValues: [XValue]?
        var open: [XValue] = []
        do {
            while let token = try xml.next() {
                switch token {
                case .start(let element, let attributes, let selfClosing):
                    depth += 1
                    if depth > 256 { throw XMLError(offset: xml.tokenOffset, expected: "elements nested at most 256 deep") }
                    if rowValues != nil {
                        let value: XValue
                        if let ref = attributes.first(where: { $0.0 == "ref" })?.1 {
                            if let id = Int(ref), let defined = definitions[id] {
                                value = defined
                            } else if let id = Int(ref), let time = timeDefinitions[id] {
                                value = XValue(name: element)
                                value.text = String(time)
                            } else {
                                sink.skip("refs to values not kept (past \(maxDefinitions)) or never defined in their file (read as empty)")
                                value = XValue(name: element)
                            }
                        } else {
                            value = XValue(name: element)
                            for (key, text) in attributes {
                                switch key {
                                case "fmt": value.fmt = text
                                case "id":
                                    // A timestamp is kept as its number once its text is read (below).
                                    if element.hasSuffix("-time") { value.timeID = Int(text) }
                                    else if definitions.count < maxDefinitions, let id = Int(text) { definitions[id] = value }
                                default: value.attributes.append((key, text))
                                }
                            }
                        }
                        if let parent = open.last { parent.children.append(value) } else { rowValues!.append(value) }
                        // A definition collects its text and children until its end; a ref is complete
                        // (content inside one is read into a placeholder and dropped).
                        if selfClosing {
                            depth -= 1
                        } else {
                            open.append(attributes.contains(where: { $0.0 == "ref" }) ? XValue(name: element) : value)
                        }
                        continue
                    }
                    switch element {
                    case "trace-query-result": sawResult = true
                    case "schema":
                        table = attributes.first { $0.0 == "name" }?.1
                        columns = []
                        inSchema = true
                    case "mnemonic" where inSchema: inMnemonic = true
                    case "row" where table != nil:
                        if !sawResult { throw XMLError(offset: xml.tokenOffset, expected: "rows inside <trace-query-result>") }
                        rowValues = []
                    default: break
                    }
                    if selfClosing {
                        depth -= 1
                        if element == "row", let values = rowValues { rowValues = nil; try self.row(table ?? "", columns, values, into: sink) }
                        if element == "schema" { inSchema = false }
                    }
                case .end(let element):
                    depth -= 1
                    if rowValues != nil, !open.isEmpty {
                        let closing = open.removeLast()
                        guard closing.name == element else {
                            throw XMLError(offset: xml.tokenOffset, expected: "</\(closing.name)> closing <\(closing.name)>, found </\(element)>")
                        }
                        if let id = closing.timeID, timeDefinitions.count < maxDefinitions, let time = closing.integer { timeDefinitions[id] = time }
                        continue
                    }
                    switch element {
                    case "row":
                        if let values = rowValues {
                            rowValues = nil
                            try self.row(table ?? "", columns, values, into: sink)
                        }
                    case "schema": inSchema = false
                    case "mnemonic": inMnemonic = false
                    case "node": table = nil
                    default: break
                    }
                case .text(let text):
                    if let value = open.last {
                        if value.text.utf8.count < 65_536 { value.text += text }
                    } else if inMnemonic {
                        columns.append(String(text.trimmingSpaces))
                    }
                }
            }
        } catch let error as XMLError {
            throw ImportError(file: name, location: "byte \(error.offset)", expected: error.expected)
        }
        guard sawResult else {
            throw ImportError(file: name, location: "byte 0", expected: "an xctrace export: a <trace-query-result> element (xctrace export --xpath '…/table[@schema=\"hitches\"]')")
        }
        if depth != 0 { throw ImportError(file: name, location: "end of file", expected: "every element closed (\(depth) still open)") }
    }

    // MARK: Rows

    private mutating func row(_ table: String, _ columns: [String], _ values: [XValue], into sink: ImportSink) throws {
        func column(_ mnemonic: String) -> XValue? {
            guard let index = columns.firstIndex(of: mnemonic), index < values.count else { return nil }
            let value = values[index]
            return value.name == "sentinel" ? nil : value
        }
        func time(_ mnemonics: String...) -> Int64? {
            for m in mnemonics { if let t = column(m)?.integer { return t } }
            return nil
        }
        func pid(_ value: XValue?) -> Int64 { value?.find("pid")?.integer ?? value?.integer ?? 0 }
        // The export's span: every time a row names, to its end.
        if let start = time("start", "timestamp", "time", "sample-time") {
            firstTimeNs = min(firstTimeNs, start)
            lastTimeNs = max(lastTimeNs, start &+ max(0, min(time("duration") ?? 0, 3_600_000_000_000)))
        }
        switch table {
        case "hitches":
            guard let start = time("start"), let duration = time("duration"), duration >= 0 else { sink.skip("hitches rows without a start and duration"); return }
            let narrative = column("narrative-description").map { $0.fmt ?? $0.text } ?? ""
            guard hitches.count < 4_000_000 else { sink.skip("hitches past 4,000,000"); return }
            let system = column("is-system").map { ["1", "yes", "true"].contains(($0.fmt ?? $0.text).trimmingSpaces.lowercased()) || $0.text.trimmingSpaces == "1" } ?? false
            hitches.append(Hitch(startNs: start, durationNs: duration, swap: column("swap-id").flatMap(Self.number), pid: pid(column("process")),
                                 narrative: narrative, isSystem: system))
        case "display-surface-swap", "displayed-surfaces-interval":
            guard let start = time("start", "timestamp", "time") else { sink.skip("\(table) rows without a start"); return }
            let process = column("process")
            guard presents.count < 20_000_000 else { sink.skip("presents past 20,000,000"); return }
            let pid = pid(process)
            if processNames[pid] == nil, processNames.count < 10_000 { processNames[pid] = process.flatMap(processName) }
            presents.append(Present(atNs: start, swap: column("swap-id").flatMap(Self.number) ?? -1, pid: pid,
                                    display: (column("display") ?? column("display-name")).flatMap(displayNumber) ?? -1))
        case "hitches-updates", "hitches-renders", "hitches-gpu":
            guard let start = time("start"), let duration = time("duration"), duration >= 0, duration < 10_000_000_000,
                  let swap = column("swap-id").flatMap(Self.number) else {
                sink.skip("\(table) rows without a start, a duration under 10 s and a swap id"); return
            }
            let end = SwapEnd(swap: swap, endNs: start &+ duration, pid: pid(column("process")))
            switch table {
            case "hitches-updates":
                guard updateEnds.count < Self.maxSwapEnds else { sink.skip("hitches-updates rows past \(Self.maxSwapEnds)"); return }
                updateEnds.append(end)
            case "hitches-renders":
                guard renderEnds.count < Self.maxSwapEnds else { sink.skip("hitches-renders rows past \(Self.maxSwapEnds)"); return }
                renderEnds.append(end)
                stage("render", start, end.endNs, on: renderServerThread(sink), into: sink)
            default:
                guard gpuEnds.count < Self.maxSwapEnds else { sink.skip("hitches-gpu rows past \(Self.maxSwapEnds)"); return }
                gpuEnds.append(end)
                // Role render: a frame's render is the render server's work and then the GPU's.
                stage("gpu", start, end.endNs, on: sink.thread(pid: 0, tid: UInt64.max - 2, name: "GPU", role: .render), into: sink)
            }
        case "hitches-framewait":
            guard let start = time("start"), let duration = time("duration"), duration >= 0, duration < 10_000_000_000 else {
                sink.skip("hitches-framewait rows without a start and a duration under 10 s"); return
            }
            stage("frame wait", start, start &+ duration, on: sink.thread(pid: 0, tid: UInt64.max - 3, name: "frame wait"), into: sink)
        case "device-display-info":
            guard let id = column("display-id").flatMap({ Self.number($0) ?? displayNumber($0) }),
                  let rate = column("max-refresh-rate").flatMap(hertz), rate >= 10, rate <= 1000 else {
                sink.skip("device-display-info rows without a display id and a 10-1000 Hz max-refresh-rate"); return
            }
            if displayPeriods.count < 256 { displayPeriods[id] = Int64((1e9 / rate).rounded()) }
            if let main = column("is-main-display"), ["1", "yes", "true"].contains((main.fmt ?? main.text).trimmingSpaces.lowercased()) { mainDisplay = id }
        case "swiftui-updates":
            guard let start = time("start"), let duration = time("duration"), duration >= 0, duration < 3_600_000_000_000 else {
                sink.skip("swiftui-updates rows without a start and a duration under an hour (updates in flight)"); return
            }
            // Body updates only ("View Body Update"); representable and other updates are not body evaluations.
            if let type = column("update-type").map({ ($0.fmt ?? $0.text).lowercased() }), !type.isEmpty, !type.contains("body") {
                sink.skip("swiftui-updates rows other than view body updates"); return
            }
            let view = [column("view-name"), column("description")].lazy.compactMap { $0.map { String(($0.fmt ?? $0.text).trimmingSpaces) } }
                .first { !$0.isEmpty } ?? "View"
            let identity = column("id").map { Self.identity(($0.fmt ?? $0.text)) } ?? 0
            let thread = thread(column("thread"), process: column("process"), into: sink)
            sink.emit(TraceEvent(timestampNs: start, thread: thread, payload: .bodyEvaluation(BodyEvaluation(
                viewType: sink.string(view.clipped(to: 200)), identity: identity, endNs: start &+ duration))))
        case "swiftui-causes", "swiftui-full-causes":
            guard let at = time("timestamp", "time", "start") else { sink.skip("\(table) rows without a timestamp"); return }
            guard let source = Self.nodeLabel(column("source-node")), let destination = Self.nodeLabel(column("destination-node")) else {
                sink.skip("\(table) rows without a source-node and a destination-node"); return
            }
            // The edge's key: its time and its two nodes' event ids (their labels where the export has no ids).
            var key: UInt64 = 0xcbf2_9ce4_8422_2325
            for part in [String(at), column("source-node-event-id").flatMap(Self.number).map(String.init) ?? source,
                         column("destination-node-event-id").flatMap(Self.number).map(String.init) ?? destination] {
                for byte in part.utf8 { key = (key ^ UInt64(byte)) &* 0x100_0000_01b3 }
                key = (key ^ 0x1f) &* 0x100_0000_01b3
            }
            let full: UInt64 = table == "swiftui-full-causes" ? 1 : 0
            key &= ~1
            if causeKeys.contains(key | (1 - full)) { sink.skip("cause edges listed by both swiftui-causes and swiftui-full-causes (read once)"); return }
            if causeKeys.count < Self.maxCauseKeys { causeKeys.insert(key | full) }
            let thread = thread(column("thread"), process: column("process"), into: sink)
            sink.emit(TraceEvent(timestampNs: at, thread: thread, payload: .invalidation(Invalidation(
                source: sink.string(source), target: sink.string(destination), targetIdentity: 0, stack: nil))))
        case "swiftui-update-groups":
            guard let start = time("start"), let duration = time("duration"), duration >= 0, duration < 3_600_000_000_000 else {
                sink.skip("swiftui-update-groups rows without a start and a duration under an hour"); return
            }
            let label = [column("label"), column("name"), column("description")].lazy.compactMap { $0.map { String(($0.fmt ?? $0.text).trimmingSpaces) } }
                .first { !$0.isEmpty } ?? "SwiftUI update"
            let thread = thread(column("thread"), process: column("process"), into: sink)
            sink.emit(TraceEvent(timestampNs: start, thread: thread, payload: .intervalComplete(
                category: sink.string("swiftui"), name: sink.string(label.clipped(to: 200)), endNs: start &+ duration)))
        case "display-vsyncs-interval":
            guard let start = time("start", "timestamp") else { sink.skip("display-vsyncs-interval rows without a start"); return }
            let period: (atNs: Int64, periodNs: Int64)
            if let duration = time("duration"), duration > 1_000_000, duration < 100_000_000 {
                period = (start, duration)
            } else {
                // Exports write each vsync as an instant (a duration of 1 ns): the period is the step
                // from the same display's previous vsync.
                let display = (column("display-name") ?? column("display")).map { String(($0.fmt ?? $0.text).prefix(100)) } ?? ""
                let previous = lastVsyncByDisplay[display]
                if previous != nil || lastVsyncByDisplay.count < 64 { lastVsyncByDisplay[display] = start }
                let step = previous.map { start &- $0 } ?? 0
                guard let previous, step > 1_000_000, step < 100_000_000 else {
                    sink.skip("display-vsyncs-interval rows without a 1-100 ms duration or step from the display's previous vsync"); return
                }
                period = (previous, step)
            }
            if vsyncIntervals.count < 20_000_000 { vsyncIntervals.append(period) }
        case "time-profile", "time-sample":
            try sample(column: column, time: time("time", "sample-time", "start"), into: sink)
        case "os-signpost", "os-signpost-interval":
            guard let start = time("start"), let duration = time("duration"), duration >= 0 else { sink.skip("signpost rows without a start and duration (events, not intervals)"); return }
            let name = column("name").map { $0.fmt ?? $0.text } ?? "signpost"
            let thread = thread(column("thread"), process: column("process"), into: sink)
            sink.emit(TraceEvent(timestampNs: start, thread: thread, payload: .intervalComplete(
                category: sink.string("signpost"), name: sink.string(name.clipped(to: 200)), endNs: start &+ duration)))
        case "potential-hangs":
            // Times are trace-relative nanoseconds in 50 bits (Apple's start-time and event-time).
            guard let start = time("start"), let duration = time("duration"), start >= 0, start < 1 << 50, duration >= 0, duration < 3_600_000_000_000 else {
                sink.skip("potential-hangs rows without a start (0 to 2^50 ns) and a duration under an hour"); return
            }
            platformHang(start, duration, type: Self.word(column("hang-type")) ?? "", column: column, into: sink)
        case "hang-risks":
            guard let at = time("time", "timestamp", "start"), at >= 0, at < 1 << 50 else { sink.skip("hang-risks rows without a time (0 to 2^50 ns)"); return }
            // "Hang Risk: <severity>": the table's name, then Apple's word as the row gives it.
            let word = Self.word(column("severity")) ?? Self.word(column("event-type"))
            platformHang(at, 0, type: "Hang Risk" + (word.map { ": " + $0 } ?? ""), column: column, into: sink)
        default:
            sink.skip("rows of tables other than hitches, display, time-profile, os-signpost and swiftui (\(table.prefix(40)))")
        }
    }

    /// A `potential-hangs` or `hang-risks` row, kept for the end (`writeHangs`): its thread, declared
    /// now, and its process (the row's, else its thread's).
    private mutating func platformHang(_ startNs: Int64, _ durationNs: Int64, type: String, column: (String) -> XValue?, into sink: ImportSink) {
        guard platformHangs.count < Self.maxPlatformHangs else { sink.skip("potential-hangs and hang-risks rows past \(Self.maxPlatformHangs)"); return }
        let process = column("process")
        let threadValue = column("thread")
        let pid = process?.find("pid")?.integer ?? process?.integer ?? threadValue?.find("pid")?.integer ?? 0
        if processNames[pid] == nil, processNames.count < 10_000 {
            processNames[pid] = process.flatMap(processName) ?? threadValue?.find("process").flatMap(processName)
        }
        let thread = threadValue?.find("tid") != nil ? thread(threadValue, process: process, into: sink) : nil
        platformHangs.append(PlatformHang(startNs: startNs, durationNs: durationNs, type: type.clipped(to: 200), pid: pid, thread: thread))
    }

    /// A stage (`render`, `gpu`, `frame wait`) of the display pipeline on its own thread.
    private func stage(_ name: String, _ startNs: Int64, _ endNs: Int64, on thread: ThreadID, into sink: ImportSink) {
        sink.emit(TraceEvent(timestampNs: startNs, thread: thread, payload: .intervalComplete(
            category: sink.string(HitchCategory.stage), name: sink.string(name), endNs: endNs)))
    }

    /// The render server's thread (role render): presents, renders and render ends.
    func renderServerThread(_ sink: ImportSink) -> ThreadID {
        sink.thread(pid: 0, tid: UInt64.max - 1, name: "render server", role: .render)
    }

    /// "Display 2" (or a bare number) -> 2.
    private func displayNumber(_ value: XValue) -> Int64? {
        let text = (value.fmt ?? value.text).trimmingSpaces
        return Int64(text.split(separator: " ").last ?? "")
    }

    /// "120", "120 Hz", "119.88" -> Hz.
    private func hertz(_ value: XValue) -> Double? {
        for text in [value.text, value.fmt ?? ""] {
            if let word = text.trimmingSpaces.split(separator: " ").first, let rate = Double(word) { return rate }
        }
        return nil
    }

    private func processName(_ value: XValue) -> String? {
        guard let fmt = value.fmt else { return nil }
        // "App (123)" -> "App"
        if let open = fmt.lastIndex(of: "("), open > fmt.startIndex { return String(String(fmt[..<open]).trimmingSpaces) }
        return fmt
    }

    private mutating func thread(_ value: XValue?, process: XValue?, into sink: ImportSink) -> ThreadID {
        let tid = value?.find("tid")?.integer ?? 0
        if let id = threads[tid] { return id }
        let pid = value?.find("pid")?.integer ?? process?.find("pid")?.integer ?? 0
        // "Main Thread 0x1 (App, pid: 7)" -> "Main Thread"
        var name = value?.fmt ?? "thread \(tid)"
        if let cut = name.range(of: " 0x") ?? name.range(of: " (") { name = String(name[..<cut.lowerBound]) }
        let id = sink.thread(pid: UInt64(bitPattern: pid), tid: UInt64(bitPattern: tid), name: name,
                             role: name.hasPrefix("Main Thread") ? .main : nil)
        threads[tid] = id
        if name.hasPrefix("Main Thread"), mainThread == nil { mainThread = id }
        return id
    }

    private mutating func sample(column: (String) -> XValue?, time: Int64?, into sink: ImportSink) throws {
        guard let time else { sink.skip("samples without a time"); return }
        firstSampleNs = min(firstSampleNs, time)
        let thread = thread(column("thread"), process: column("process"), into: sink)
        guard let stack = column("stack") ?? column("backtrace") else { sink.skip("samples without a backtrace"); return }
        let backtrace = stack.name == "backtrace" ? stack : (stack.find("backtrace") ?? stack)
        var addresses: [UInt64] = []
        for frame in backtrace.children where frame.name == "frame" {
            guard addresses.count < 512 else { break }
            guard let (address, symbol) = Self.frameSymbol(frame) else { continue }
            addresses.append(address)
            if !symbols.contains(address), symbols.count < 4_000_000 {
                symbols.insert(address)
                // Instruments names the address as written; the analysis looks an outer frame up one
                // byte before it (a return address points after its call), so the name covers both.
                sink.emit(TraceEvent(timestampNs: time, thread: thread, payload: .symbol(Symbol(
                    address: address &- 1, size: 2, function: sink.string(symbol.function),
                    image: sink.string(symbol.image), offset: symbol.offset &- 1))))
            }
        }
        guard !addresses.isEmpty else { sink.skip("samples whose backtrace has no frames with addresses"); return }
        let id: StackID
        if let known = stacks[addresses] {
            id = known
        } else {
            guard stacks.count < 4_000_000 else { sink.skip("samples past 4,000,000 distinct stacks"); return }
            id = StackID(rawValue: UInt32(stacks.count + 1))
            stacks[addresses] = id
            sink.emit(TraceEvent(timestampNs: time, thread: thread, payload: .stackDefinition(stack: id, addresses: addresses)))
        }
        sink.emit(TraceEvent(timestampNs: time, thread: thread, payload: .sample(stack: id)))
    }
}
