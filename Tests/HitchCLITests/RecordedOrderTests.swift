import Foundation
import HitchAnalysis
import HitchReader
import HitchTestSupport
import HitchTrace
import Testing

/// The ordering contract on recordings made here, not only committed ones (docs/METRICS.md "File
/// order"): a fresh recording of each bundled workload, read in other orders that keep each
/// thread's order and stay within the bound the recording states, gives the same analysis, bit for
/// bit. As recorded, and as a machine without schedstat files records it: the frame threads'
/// windows then split by their context switches, which the writer drains a flush interval after
/// the events around them.
///
/// The recordings are short, of a smaller feed and a small model: the tests run the debug `hitch`,
/// whose workloads are slower than a user's (HITCH_BIN=.build/release/hitch runs the test with the
/// release build).
@Suite struct RecordedOrderTests {
    static let workloads: [(name: String, arguments: [String])] = [
        ("feed naive", ["record", "feed", "--variant", "naive", "--refresh", "120", "--seconds", "5", "--rows", "1500"]),
        ("feed tuned", ["record", "feed", "--variant", "tuned", "--refresh", "120", "--seconds", "5", "--rows", "1500"]),
        ("llm", ["record", "llm", "--tokens", "48", "--dim", "128", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ffn", "256", "--vocab", "512"]),
    ]

    @Test(arguments: workloads.indices)
    func aFreshRecordingReadInOtherOrdersWithinItsBoundGivesTheSameAnalysis(_ workload: Int) throws {
        let (name, arguments) = Self.workloads[workload]
        let directory = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/recorded.fxt"
        let recording = try HitchCLI.run(arguments + ["-o", path])
        try #require(recording.status == 0, "\(name): \(recording.stderr)")
        let recorded = try TraceOrders.load(path)
        try #require(TraceOrders.boundNs(recorded) != nil, "\(name): a recording states its flush interval")
        // On an overloaded machine the recorder's writer may fall behind its bound (the analysis
        // warns of it): the orders then stay within the bound the recording did keep.
        let list = TraceOrders.statingTheBoundItKeeps(recorded)
        let boundNs = try #require(TraceOrders.boundNs(list))
        if expectedSwitchRecords(list) {
            #expect(list.events.contains { if case .schedSwitch = $0.payload { true } else { false } }, "\(name): no context switches recorded")
        }
        for (variant, trace) in [("as recorded", list), ("without the run delay", TraceOrders.withoutRunDelay(list))] {
            let expected = try Analyzer.analyze([trace])
            // (The debug build on a loaded machine may make few frames; any frame waits for its switches.)
            #expect(expected.recorded.frameCount > 0, "\(name)")
            #expect(TraceOrders.beyondBoundEvents(trace) == 0, "\(name): the recording's own order is within its bound")
            // Random threads and runs of 1, 16 and 400 events; one thread as far ahead as the bound allows.
            for (seed, maxRun, favouring) in [(UInt64(1), 1, false), (2, 16, false), (3, 400, false), (4, 1, true), (5, 8, true)] {
                let order = TraceOrders.withinBound(trace, boundNs: boundNs, seed: seed, maxRun: maxRun, favouring: favouring)
                #expect(TraceOrders.beyondBoundEvents(order) == 0, "\(name) \(variant) order \(seed)")
                let difference = try Analyzer.analyze([order]).difference(from: expected)
                #expect(difference.isEmpty, "\(name) \(variant) order \(seed): \(difference)")
            }
        }
    }

    /// Whether the recording says the kernel gave it context switch records (perf_event_paranoid
    /// permitting): the frames' windows split by them, which the writer drains after the fact.
    func expectedSwitchRecords(_ list: TraceEventList) -> Bool {
        list.events.contains { event in
            if case .metadata(let key, let value) = event.payload {
                list.string(key) == MetadataKey.schedSource.name && list.string(value) == SchedSource.perfContextSwitch.rawValue
            } else { false }
        }
    }
}
