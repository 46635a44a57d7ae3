import Foundation
import Testing
import HitchAnalysis
import HitchReport
import HitchImport
import HitchReader

/// Thread-state, machine-state and context-switch records survive Chrome JSON export, import, and the
/// imported trace's FXT write (docs/FORMAT.md "Thread states").
@Suite struct SchedChromeRoundTripTests {
    static let payloads: [TraceEvent.Payload] = [
        .threadState(ThreadStateReading(frameID: 3, phase: .frameBegan, cpuNs: 1 << 40, runnableWaitNs: 5_000,
                                        voluntarySwitches: 9, involuntarySwitches: 2)),
        .threadState(ThreadStateReading(frameID: 3, phase: .committed, cpuNs: 7, runnableWaitNs: nil,
                                        voluntarySwitches: nil, involuntarySwitches: nil)),
        .machineState(MachineStateReading(stealNs: 40_000_000, cpuPressureSomeUs: 17, cgroupThrottledUs: nil, onlineCPUs: 2)),
        .schedSwitch(SchedSwitch(direction: .switchedOut, preempted: true, cpu: 1)),
        .schedSwitch(SchedSwitch(direction: .switchedIn, preempted: false, cpu: 1)),
    ]

    @Test func schedRecordsRoundTripThroughChromeJSON() throws {
        var list = TraceEventList()
        let main = list.thread("main")
        for (index, payload) in Self.payloads.enumerated() { list.append(1_000 + Int64(index) * 1_000, main, payload) }
        let json = try ChromeTraceExporter.exportToString(&list)
        let trace = try ChromeTraceImporter.importBytes(Array(json.utf8))
        #expect(trace.warnings.isEmpty, "\(trace.warnings)")
        let imported = trace.events.filter { $0.payload.kindName != "metadata" }
        #expect(imported.map(\.timestampNs) == list.events.map(\.timestampNs))
        #expect(imported.map { "\($0.payload)" } == Self.payloads.map { "\($0)" })

        // `hitch import chrome` writes the imported trace as FXT: the records read back the same.
        let path = NSTemporaryDirectory() + "sched-chrome-\(getpid()).fxt"
        defer { unlink(path) }
        try trace.writeFXT(to: path)
        var reader = try TraceReader(path: path)
        var read: [TraceEvent.Payload] = []
        while let event = try reader.next() { read.append(event.payload) }
        #expect(reader.warnings.isEmpty)
        #expect(read.map { "\($0)" } == Self.payloads.map { "\($0)" })
    }
}
