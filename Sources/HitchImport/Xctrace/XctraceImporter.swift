#if canImport(Glibc)
import Glibc
#endif
import HitchReader
import HitchTrace

// `xctrace export --input T.trace --xpath '/trace-toc/run[@number="1"]/data/table[@schema="…"]'`
// -> frames, Apple's hitches, samples and signposts. An export is a `<trace-query-result>` with one
// `<node>` per table: a `<schema name="…">` naming the columns by `<mnemonic>`, then one `<row>` per
// record whose children are the columns' values in order. A value defined once with `id="N"` is
// repeated anywhere later as `<… ref="N"/>`; the importer keeps the definitions (all but
// timestamps, which exports do not repeat, up to `maxDefinitions`) and resolves every ref.
// Files are read as a stream (XMLTokenizer); several files, or one with several tables, may be
// given. Tables read:
//
// - `hitches`: Apple's hitches (start, duration, process, swap-id, narrative-description), kept as
//   the platform verdict of the frame they hit.
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
//
// A frame is reconstructed from its present P: expected at P minus Apple's hitch duration (P when
// no hitch hit it), so it is judged late by what Apple measured; begun two periods before that
// expectation, committed at its `hitches-updates` end (else in time), its render ended at its
// `hitches-renders` end. Other tables are counted and skipped.

/// One resolved value of a row: an element with its text, `fmt` and a few attributes, and children.
final class XValue {
    let name: String
    var text = ""
    var fmt: String?
    var attributes: [(String, String)] = []
    var children: [XValue] = []
    init(name: String) { self.name = name }

    func child(_ name: String) -> XValue? { children.first { $0.name == name } }
    func attribute(_ key: String) -> String? { attributes.first { $0.0 == key }?.1 }
    var integer: Int64? { Int64(text.trimmingSpaces) }
    /// The first descendant (depth first) named `name`.
    func find(_ name: String) -> XValue? {
        for child in children {
            if child.name == name { return child }
            if let found = child.find(name) { return found }
        }
        return nil
    }
}

private extension String {
    var trimmingSpaces: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\n" || first == "\t" || first == "\r" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\n" || last == "\t" || last == "\r" { text = text.dropLast() }
        return text
    }
}

public struct XctraceImporter {
    /// Definitions kept for refs; past this many, new ones are not kept (a ref to one is counted).
    public var maxDefinitions = 1_000_000

    private var definitions: [String: XValue] = [:]
    private var hitches: [Hitch] = []
    private struct Hitch { var startNs: Int64; var durationNs: Int64; var swap: Int64?; var pid: Int64; var narrative: String }
    /// Presents, 24 bytes each (an export of millions stays in bounded memory): swap ids are kept as
    /// numbers (-1: none or not numeric), process names once per pid.
    private struct Present { var atNs: Int64; var swap: Int64; var pid: Int64; var display: Int64 = -1 }
    private var presents: [Present] = []
    private var processNames: [Int64: String] = [:]
    private var vsyncIntervals: [(atNs: Int64, periodNs: Int64)] = []
    /// Each display's latest vsync, for exports whose vsync rows are instants.
    private var lastVsyncByDisplay: [String: Int64] = [:]
    private var stacks: [[UInt64]: StackID] = [:]
    private var symbols: Set<UInt64> = []
    private var threads: [Int64: ThreadID] = [:]
    private var mainThread: ThreadID?
    private var firstSampleNs = Int64.max
    /// The app's commits (`hitches-updates`) and the render server's renders (`hitches-renders`):
    /// each one's end, by swap id (24 bytes each, sorted by swap at the end).
    private struct SwapEnd { var swap: Int64; var endNs: Int64; var pid: Int64 }
    private var updateEnds: [SwapEnd] = []
    private var renderEnds: [SwapEnd] = []
    private var gpuEnds: [SwapEnd] = []
    static let maxSwapEnds = 2_000_000
    /// Cause edges read so far, as hashes of (time, source event, destination event) whose lowest
    /// bit says which table (`swiftui-causes` 0, `swiftui-full-causes` 1): both list the same edges,
    /// the full table more, so an edge the other table gave is read once.
    private var causeKeys: Set<UInt64> = []
    static let maxCauseKeys = 2_000_000
    /// `device-display-info`: each display's refresh period (from its maximum rate), and the main one.
    private var displayPeriods: [Int64: Int64] = [:]
    private var mainDisplay: Int64?

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
                            if let defined = definitions[ref] { value = defined } else {
                                sink.skip("refs to values not kept or never defined (read as empty)")
                                value = XValue(name: element)
                            }
                        } else {
                            value = XValue(name: element)
                            for (key, text) in attributes {
                                switch key {
                                case "fmt": value.fmt = text
                                case "id": if !element.hasSuffix("-time"), definitions.count < maxDefinitions { definitions[text] = value }
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
        switch table {
        case "hitches":
            guard let start = time("start"), let duration = time("duration"), duration >= 0 else { sink.skip("hitches rows without a start and duration"); return }
            let narrative = column("narrative-description").map { $0.fmt ?? $0.text } ?? ""
            guard hitches.count < 4_000_000 else { sink.skip("hitches past 4,000,000"); return }
            hitches.append(Hitch(startNs: start, durationNs: duration, swap: column("swap-id").flatMap(Self.number), pid: pid(column("process")), narrative: narrative))
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
                stage("gpu", start, end.endNs, on: sink.thread(pid: 0, tid: UInt64.max - 2, name: "GPU", role: "render"), into: sink)
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
                viewType: sink.string(String(view.prefix(200))), identity: identity, endNs: start &+ duration))))
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
                category: sink.string("swiftui"), name: sink.string(String(label.prefix(200))), endNs: start &+ duration)))
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
                category: sink.string("signpost"), name: sink.string(String(name.prefix(200))), endNs: start &+ duration)))
        default:
            sink.skip("rows of tables other than hitches, display, time-profile, os-signpost and swiftui (\(table.prefix(40)))")
        }
    }

    /// A stage (`render`, `gpu`, `frame wait`) of the display pipeline on its own thread.
    private func stage(_ name: String, _ startNs: Int64, _ endNs: Int64, on thread: ThreadID, into sink: ImportSink) {
        sink.emit(TraceEvent(timestampNs: startNs, thread: thread, payload: .intervalComplete(
            category: sink.string(HitchCategory.stage), name: sink.string(name), endNs: endNs)))
    }

    /// The render server's thread (role render): presents, renders and render ends.
    private func renderServerThread(_ sink: ImportSink) -> ThreadID {
        sink.thread(pid: 0, tid: UInt64.max - 1, name: "render server", role: "render")
    }

    /// An id or count: the element's text (`4685385`), else its `fmt` in decimal or hex (`0x477e49`).
    static func number(_ value: XValue) -> Int64? {
        if let number = Int64(value.text.trimmingSpaces) { return number }
        let fmt = value.fmt?.trimmingSpaces ?? ""
        return fmt.hasPrefix("0x") ? Int64(fmt.dropFirst(2), radix: 16) : Int64(fmt)
    }

    /// A cause graph node's label: a `typed-array`'s first value (label, color, symbol, ... follow;
    /// its `fmt` joins them all), else the element's `fmt` or text. At most 200 characters.
    static func nodeLabel(_ value: XValue?) -> String? {
        guard let value else { return nil }
        let node = value.name == "typed-array" ? value.children.first { $0.name != "sentinel" } : value
        guard let node else { return nil }
        let text = (node.fmt ?? node.text).trimmingSpaces
        return text.isEmpty ? nil : String(text.prefix(200))
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

    /// A view's identity from its `id` text: FNV-1a, so one id is one identity across rows.
    static func identity(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
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
                             role: name.hasPrefix("Main Thread") ? "main" : nil)
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
            let text = frame.attribute("addr") ?? ""
            let address = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
            guard let address else { continue }
            addresses.append(address)
            if !symbols.contains(address), symbols.count < 4_000_000 {
                symbols.insert(address)
                let binary = frame.child("binary")
                let loadText = binary?.attribute("load-addr") ?? ""
                let load = loadText.hasPrefix("0x") ? UInt64(loadText.dropFirst(2), radix: 16) : UInt64(loadText)
                sink.emit(TraceEvent(timestampNs: time, thread: thread, payload: .symbol(Symbol(
                    address: address, size: 1, function: sink.string(String((frame.attribute("name") ?? "?").prefix(1000))),
                    image: sink.string(binary?.attribute("name") ?? ""), offset: load.map { address &- $0 } ?? 0))))
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

    // MARK: Frames

    /// Turns the presents into frames, Apple's hitches into their lateness and verdicts. Call after
    /// the last file.
    public mutating func finish(into sink: ImportSink) {
        guard !presents.isEmpty else {
            if !hitches.isEmpty { sink.skip("hitches without display-surface-swap or displayed-surfaces-interval rows (no frames to judge)", count: hitches.count) }
            return
        }
        // The app: the process with the most hitches, else the most presents.
        var counts: [Int64: Int] = [:]
        for hitch in hitches { counts[hitch.pid, default: 0] += 1 }
        if counts.isEmpty { for present in presents { counts[present.pid, default: 0] += 1 } }
        let app = counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key ?? presents[0].pid
        // Presents of other processes are left out (a row with an empty process among named ones
        // too); where no present names a process (display-surface-swap has no process column),
        // every one is kept.
        if app != 0, presents.contains(where: { $0.pid != 0 }) { presents.removeAll { $0.pid != app } }
        presents.sort { $0.atNs < $1.atNs }
        let frames = presents
        vsyncIntervals.sort { $0.atNs < $1.atNs }
        let processName = processNames[app] ?? "app"
        let main = mainThread ?? sink.thread(pid: UInt64(bitPattern: app), tid: UInt64(bitPattern: app), name: "Main Thread", role: "main")
        let renderServer = renderServerThread(sink)
        sink.metadata(MetadataKey.importedFrom.name, "xctrace", thread: main, timestampNs: frames[0].atNs)
        // Instruments' display tables say when each frame was shown, not when its work began: the
        // frame starts written below are placeholders, not work to replay at another rate.
        sink.metadata(MetadataKey.frameWorkTimes.name, "none", thread: main, timestampNs: frames[0].atNs)
        sink.metadata(MetadataKey.process.name, processName, thread: main, timestampNs: frames[0].atNs)
        var bySwap: [Int64: Int] = [:]
        for (index, hitch) in hitches.enumerated() where hitch.pid == app || app == 0 {
            if let swap = hitch.swap { bySwap[swap] = index }
        }
        updateEnds.sort { ($0.swap, $0.endNs) < ($1.swap, $1.endNs) }
        renderEnds.sort { ($0.swap, $0.endNs) < ($1.swap, $1.endNs) }
        gpuEnds.sort { ($0.swap, $0.endNs) < ($1.swap, $1.endNs) }
        var used = Set<Int>()
        var steps: [Int64] = []
        var vsyncIndex = 0
        var hitchCursor = 0
        let appHitches = hitches.enumerated().filter { $0.element.pid == app || app == 0 }.sorted { $0.element.startNs &+ $0.element.durationNs < $1.element.startNs &+ $1.element.durationNs }
        for (index, present) in frames.enumerated() {
            if index > 0 {
                let step = present.atNs - frames[index - 1].atNs
                if step >= 2_000_000, step <= 100_000_000 { steps.append(step); if steps.count > 16 { steps.removeFirst() } }
            }
            while vsyncIndex + 1 < vsyncIntervals.count, vsyncIntervals[vsyncIndex + 1].atNs <= present.atNs { vsyncIndex += 1 }
            let period = vsyncIntervals.isEmpty || vsyncIntervals[vsyncIndex].atNs > present.atNs
                ? displayPeriod(present.display) ?? (steps.min() ?? (frames.count > 1 ? nil : 16_666_667)) ?? nextStep(frames, from: index)
                : vsyncIntervals[vsyncIndex].periodNs
            // Apple's hitch on this present: by swap id, else the one that ends within half a period of it.
            var hitch: Hitch?
            if present.swap >= 0, let match = bySwap[present.swap], !used.contains(match) {
                hitch = hitches[match]; used.insert(match)
            } else {
                while hitchCursor < appHitches.count, appHitches[hitchCursor].element.startNs &+ appHitches[hitchCursor].element.durationNs < present.atNs - period / 2 { hitchCursor += 1 }
                if hitchCursor < appHitches.count, !used.contains(appHitches[hitchCursor].offset),
                   abs(appHitches[hitchCursor].element.startNs &+ appHitches[hitchCursor].element.durationNs - present.atNs) <= period / 2 {
                    hitch = appHitches[hitchCursor].element; used.insert(appHitches[hitchCursor].offset)
                }
            }
            let lateness = hitch?.durationNs ?? 0
            let expected = present.atNs - lateness
            let vsync = expected - 2 * period
            let frameID = UInt64(index + 1)
            sink.emit(TraceEvent(timestampNs: vsync, thread: main, payload: .frameBegan(FrameBegan(frameID: frameID, vsyncNs: vsync, targetNs: expected - period, periodNs: period))))
            sink.emitPlatformVerdict(hitch != nil ? .janky : .onTime, frameID: frameID, atNs: vsync, thread: main,
                                     detail: hitch.map { $0.narrative.isEmpty ? "hitch" : String($0.narrative.prefix(200)) }, hitchNs: hitch?.durationNs)
            // The app's commit and the render server's render of this swap, where the export has them
            // (within the frame: after its vsync, by its present).
            func inFrame(_ t: Int64) -> Bool { t >= vsync && t <= present.atNs }
            let commit = Self.end(of: present.swap, in: updateEnds, pid: app).flatMap { inFrame($0) ? $0 : nil }
            sink.emit(TraceEvent(timestampNs: commit ?? expected - period, thread: main, payload: .frameCommitted(frameID: frameID)))
            // The render ends when both the render server and the GPU are done with the swap.
            let renderEnd = [Self.end(of: present.swap, in: renderEnds, pid: nil), Self.end(of: present.swap, in: gpuEnds, pid: nil)]
                .compactMap { $0 }.filter(inFrame).max()
            if let render = renderEnd {
                sink.emit(TraceEvent(timestampNs: render, thread: renderServer, payload: .frameRenderEnded(frameID: frameID)))
            }
            sink.emit(TraceEvent(timestampNs: present.atNs, thread: renderServer, payload: .framePresented(frameID: frameID)))
        }
        let unmatched = hitches.indices.filter { !used.contains($0) && (hitches[$0].pid == app || app == 0) }.count
        if unmatched > 0 { sink.skip("Apple hitches that matched no present (by swap id or time)", count: unmatched) }
    }

    /// A display's refresh period from `device-display-info`: the present's display, else the main
    /// display, else the only one.
    private func displayPeriod(_ display: Int64) -> Int64? {
        if let period = displayPeriods[display] { return period }
        if let main = mainDisplay, let period = displayPeriods[main] { return period }
        return displayPeriods.count == 1 ? displayPeriods.first?.value : nil
    }

    /// The latest end recorded for `swap` (of process `pid` when given), from a list sorted by swap;
    /// at most 64 rows of one swap are looked at (a swap has one commit and one render per surface).
    private static func end(of swap: Int64, in list: [SwapEnd], pid: Int64?) -> Int64? {
        guard swap >= 0 else { return nil }
        var low = 0, high = list.count
        while low < high { let mid = (low + high) / 2; if list[mid].swap < swap { low = mid + 1 } else { high = mid } }
        var latest: Int64?
        let limit = min(list.count, low + 64)
        while low < limit, list[low].swap == swap {
            if pid == nil || pid == 0 || list[low].pid == 0 || list[low].pid == pid { latest = max(latest ?? .min, list[low].endNs) }
            low += 1
        }
        return latest
    }

    /// The step to the next present (the first frame's period before any step is known).
    private func nextStep(_ frames: [Present], from index: Int) -> Int64 {
        var step = Int64.max
        for i in (index + 1)..<min(frames.count, index + 17) {
            let s = frames[i].atNs - frames[i - 1].atNs
            if s >= 2_000_000, s <= 100_000_000 { step = min(step, s) }
        }
        return step == .max ? 16_666_667 : step
    }
}
