import Foundation
import Testing
import HitchAnalysis
import HitchImport
import HitchReader
import HitchTrace

/// Hang events and the watchdog's captures survive Chrome JSON export, import, the imported
/// trace's FXT write and the FXT read (docs/FORMAT.md "Hangs"), with every word and time.
@Suite struct ChromeTraceExporterHangTests {
    /// The events with their strings resolved, for comparing across the formats' string tables.
    static func described(_ payload: TraceEvent.Payload, _ text: (StringID) -> String) -> String {
        switch payload {
        case let .hang(h): "hang end \(h.endNs) source \(text(h.source)) type \(text(h.type))"
        case let .hangStack(c): "capture since \(c.sinceNs) stack \(c.stack.map { "\($0.rawValue)" } ?? "-") call \(text(c.systemCall)) wait \(text(c.waitChannel)) state \(c.schedState)"
        default: "\(payload.kindName)"
        }
    }

    @Test func hangsRoundTripThroughChromeJSONAndFXT() throws {
        var list = TraceEventList()
        let main = list.thread("main")
        let payloads: [TraceEvent.Payload] = [
            .hang(Hang(endNs: 401_000_000, source: list.intern("watchdog"), type: list.intern(""))),
            .hang(Hang(endNs: 2_180_000_000, source: list.intern("instruments"), type: list.intern("Brief Unresponsiveness"))),
            .hangStack(HangStack(sinceNs: 1_000, stack: StackID(rawValue: 7), systemCall: list.intern("futex"),
                                 waitChannel: list.intern("futex_wait_queue"), schedState: UInt8(ascii: "S"))),
            .hangStack(HangStack(sinceNs: 1_000, stack: nil, systemCall: list.intern(""), waitChannel: list.intern(""), schedState: 0)),
        ]
        for (index, payload) in payloads.enumerated() { list.append(1_000 + Int64(index) * 1_000, main, payload) }
        let expected = payloads.map { Self.described($0, list.string) }

        let json = try ChromeTraceExporter.exportToString(&list)
        let trace = try ChromeTraceImporter.read(bytes: Array(json.utf8))
        #expect(trace.warnings.isEmpty, "\(trace.warnings)")
        let imported = trace.events.filter { $0.payload.kindName != "metadata" }
        #expect(imported.map(\.timestampNs) == list.events.map(\.timestampNs))
        #expect(imported.map { Self.described($0.payload, trace.string) } == expected)

        let path = NSTemporaryDirectory() + "hang-chrome-\(getpid()).fxt"
        defer { unlink(path) }
        try ChromeTraceExporterTests.importChrome(json, to: path)
        var reader = try TraceReader(path: path)
        var read: [String] = []
        while let event = try reader.next() {
            if event.payload.kindName != "metadata" { read.append(Self.described(event.payload, reader.string)) }
        }
        #expect(reader.warnings.isEmpty)
        #expect(read == expected)
    }
}
