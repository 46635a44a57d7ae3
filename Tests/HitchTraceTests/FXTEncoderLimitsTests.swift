import Foundation
import HitchReader
import Testing
@testable import HitchTrace

/// The trace format at its limits, in one real recording: more distinct strings than FXT's 32,767
/// string indexes (view names and argument values from several threads, sampled symbols), with
/// context switch and blob records among the events. What the reader reads must be what was
/// written, name by name, and each event's arguments its own.
///
/// Past 32,767 strings the writer reuses indexes round robin. Every new string here is an
/// argument of an instant whose category, name and argument names were defined long before, so
/// when the reuse comes round to one of their indexes it does so while that record is being
/// written: the definition must take another index, or the record names the new string there.
@Suite(.serialized) struct FXTEncoderLimitsTests {
    @Test func aRecordingOfMoreStringsThanIndexesReadsBackNameByName() async {
        await #expect(processExitsWith: .success) { try Self.moreStringsThanIndexesRecorded() }
    }

    static let threads = 4
    static let perThread = 5_500

    /// What one thread wrote, in its order: an instant (category "strings", name "value", the same
    /// in every thread) whose two string arguments are a value and a view name of its own, then a
    /// body evaluation of that view.
    static func written(thread: Int) -> [(value: String, view: String)] {
        (0..<perThread).map { ("value \(thread).\($0)", "View \(thread).\($0)") }
    }

    static func moreStringsThanIndexesRecorded() throws {
        let path = temporaryTracePath("string-indexes")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path)
        // Samples of every recording thread: stacks and symbols are blob records among the events.
        let sampler = try? Sampler.start(SamplerConfiguration(rateHz: 250, threads: .all), recorder: recorder)
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                Trace.setCurrentThreadName("strings-\(thread)")
                for (i, entry) in written(thread: thread).enumerated() {
                    let view = TraceName.intern(entry.view)
                    Trace.instant("value", category: "strings", with: .string("text", TraceName.intern(entry.value)), .string("view", view))
                    Trace.bodyEvaluation(viewType: view, identity: UInt64(i)) {}
                    if i % 64 == 0 { usleep(200) }   // the writer keeps up: nothing dropped, context switches recorded
                }
                group.leave()
            }
        }
        group.wait()
        // A symbol per string index and more, with names of their own, as the sampler writes them.
        for i in 0..<Self.perThread { recorder.defineSymbol(address: 0x10_0000 + UInt64(i) * 16, size: 16, function: "function_\(i)", image: "strings", offset: 0) }
        _ = sampler?.stop()
        let summary = try recorder.stop()
        #expect(summary.droppedEventCount == 0)

        var reader = try TraceReader(path: path)
        var read: [String: [(value: String, view: String)]] = [:]
        var bodies: [String: [String]] = [:]
        var symbols = 0, argumentsAfterOtherRecords = 0, switches = 0, distinct = Set<String>()
        func text(_ argument: EventArguments.Argument?) -> String {
            guard let argument, case .string(let id) = argument.value else { return "(not a string)" }
            return reader.string(argument.name) + "=" + reader.string(id)
        }
        while let event = try reader.next() {
            let thread = reader.threadName(event.thread)
            switch event.payload {
            case .bodyEvaluation(let body):
                bodies[thread, default: []].append(reader.string(body.viewType))
                #expect(reader.arguments.isEmpty)
            case .instant(let category, let name) where thread.hasPrefix("strings-"):
                let arguments = reader.arguments
                read[thread, default: []].append((reader.string(category) + "/" + reader.string(name) + " " + text(arguments.first),
                                                  text(arguments.second)))
                distinct.insert(text(arguments.first))
            case .symbol(let symbol):
                symbols += 1
                distinct.insert(reader.string(symbol.function))
                if !reader.arguments.isEmpty { argumentsAfterOtherRecords += 1 }
            case .stackDefinition:
                if !reader.arguments.isEmpty { argumentsAfterOtherRecords += 1 }
            case .schedSwitch:
                switches += 1
                if !reader.arguments.isEmpty { argumentsAfterOtherRecords += 1 }
            default:
                break
            }
        }
        #expect(reader.warnings.isEmpty)
        #expect(argumentsAfterOtherRecords == 0, "context switch and blob records read with the previous event's arguments")
        for thread in 0..<threads {
            let expected = written(thread: thread).map { ("strings/value text=" + $0.value, "view=" + $0.view) }
            let got = read["strings-\(thread)"] ?? []
            #expect(got.count == expected.count, "strings-\(thread): \(got.count) of \(expected.count) instants read")
            let wrong = zip(expected, got).enumerated().filter { $0.element.0 != $0.element.1 }
            #expect(wrong.isEmpty, "strings-\(thread): \(wrong.count) wrong, first at \(wrong.first.map { "\($0.offset): wrote \($0.element.0), read \($0.element.1)" } ?? "")")
            #expect(bodies["strings-\(thread)"] == written(thread: thread).map(\.view), "strings-\(thread): view names")
            for entry in got { distinct.insert(entry.1) }
        }
        #expect(distinct.count > 40_000 && symbols >= Self.perThread)
        // Context switches among the events where the kernel permits them (perf_event_paranoid).
        if reader.metadata["schedSource"] == "perf-context-switch" { #expect(switches > 0) }
    }
}
