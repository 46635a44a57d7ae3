import Foundation
import Testing
import HitchReader
@testable import HitchTrace

/// What a trace says about its stacks: definitions, symbols, samples and invalidation stacks.
struct DecodedStacks {
    var stacks: [StackID: [UInt64]] = [:]
    var symbols: [(address: UInt64, size: UInt64, function: String)] = []
    var samples: [StackID] = []
    var invalidationStacks: [StackID] = []
    var metadata: [String: String] = [:]

    init(path: String) throws {
        var reader = try TraceReader(path: path)
        while let event = try reader.next() {
            switch event.payload {
            case .stackDefinition(let stack, let addresses): stacks[stack] = addresses
            case .symbol(let symbol): symbols.append((symbol.address, symbol.size, reader.string(symbol.function)))
            case .sample(let stack): samples.append(stack)
            case .invalidation(let invalidation): if let stack = invalidation.stack { invalidationStacks.append(stack) }
            default: break
            }
        }
        metadata = reader.metadata
    }

    /// Function names of a stack, innermost first, from the trace's own symbol records.
    func names(_ stack: StackID) -> [String] {
        (stacks[stack] ?? []).map { address in
            symbols.first { address >= $0.address && address - $0.address < $0.size }?.function ?? "?"
        }
    }
}

final class InvalidationSourceModel: @unchecked Sendable { // touched by one test thread only
    private var storage = ""
    var query: String {
        get { storage }
        @inline(never) set {
            storage = newValue
            Trace.invalidation(source: "InvalidationSourceModel.query", target: "Row", targetIdentity: 7,
                               stack: Backtrace.capture())
        }
    }
}

@inline(never) func typeIntoInvalidationSource(_ model: InvalidationSourceModel) { model.query = "s" }

// Part of the serialized SamplerTests suite: one sampling session and one recording at a time.
extension SamplerTests {
    @Test func samplesLandInTheTraceWithStacksAndSymbols() async {
        await #expect(processExitsWith: .success) { try Self.samplesLandInTheTraceWithStacksAndSymbolsRecorded() }
    }

    static func samplesLandInTheTraceWithStacksAndSymbolsRecorded() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sampling-\(getpid()).fxt").path
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path)
        defer { _ = try? recorder.stop() }
        let sampler = try FaultSupport.startSampler(.init(rateHz: 1000, threads: .registered), recorder: recorder)
        let run = onRegisteredThread { SamplerWorkload.outer(seconds: 0.3) }
        let statistics = sampler.stop()
        try recorder.stop()
        SamplerWorkload.sink &+= run.result

        let trace = try DecodedStacks(path: path)
        #expect(UInt64(trace.samples.count) == statistics.samplesRecorded)
        // Enough samples to mean something; the rate itself is SamplerTests' (on CPU time, since a
        // loaded or sanitized run gets fewer wall-clock ticks, and perf events sample CPU time only).
        #expect(trace.samples.count >= max(10, Int(0.5 * 1000 * run.cpuSeconds)),
                "\(trace.samples.count) samples for \(run.cpuSeconds) s of CPU; \(statistics)")
        #expect(trace.metadata["samplerSource"] == sampler.source.rawValue)
        #expect(trace.samples.allSatisfy { trace.stacks[$0] != nil }, "every sampled stack is defined")
        let hot = trace.samples.filter { trace.names($0).contains { $0.contains("SamplerWorkload.hot(") } }
        #expect(Double(hot.count) >= 0.9 * Double(trace.samples.count))
        #expect(trace.metadata["samplerRateHz"] == "1000")
        #expect(trace.metadata["samplerSamplesDropped"] == "0")
    }

    @Test func invalidationCarriesTheWritersStackWhenBacktracesAreOn() async {
        await #expect(processExitsWith: .success) { try Self.invalidationCarriesTheWritersStackWhenBacktracesAreOnRecorded() }
    }

    static func invalidationCarriesTheWritersStackWhenBacktracesAreOnRecorded() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("backtrace-\(getpid()).fxt").path
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path)
        defer { _ = try? recorder.stop() }
        Backtrace.isEnabled = true
        defer { Backtrace.isEnabled = false }
        let model = InvalidationSourceModel()
        typeIntoInvalidationSource(model)
        try recorder.stop()

        let trace = try DecodedStacks(path: path)
        let stack = try #require(trace.invalidationStacks.first)
        let names = trace.names(stack)
        #expect(names.first?.contains("InvalidationSourceModel.query.setter") == true, "\(names)")
        #expect(names.dropFirst().first?.contains("typeIntoInvalidationSource") == true, "\(names)")
    }
}
