import Foundation
import Testing
import HitchReader
@testable import HitchTrace

/// The recording API's smaller promises: exact tick/ns round trips, bounded dynamic names,
/// arguments on intervals and instants, the one-call frame mark.
@Suite(.serialized) struct RecordingAPITests {
    @Test func nanosecondsRoundTripExactlyThroughTicks() {
        var generator = SystemRandomNumberGenerator()
        for ticksPerSecond in [TraceClock.ticksPerSecond, 1_000_000_000, 2_299_999_886, 3_000_000_007] {
            let converter = TickConverter(ticksPerSecond: ticksPerSecond)
            var mismatches = 0
            for _ in 0..<100_000 {
                let ns = Int64.random(in: 0..<(1 << 52), using: &generator)
                if converter.nanoseconds(fromTicks: converter.ticks(fromNanoseconds: ns)) != ns { mismatches += 1 }
            }
            #expect(mismatches == 0, "\(ticksPerSecond) ticks/s: \(mismatches) of 100,000 round trips off")
        }
        var mismatches = 0
        for _ in 0..<100_000 {
            let ns = Int64.random(in: 0..<(1 << 52), using: &generator)
            if TraceTimestamp(nanoseconds: ns).nanoseconds != ns { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    @Test func dynamicNamesAreBoundedAndStillResolveInTheTrace() async {
        await #expect(processExitsWith: .success) { try Self.dynamicNamesAreBoundedAndStillResolveInTheTraceRecorded() }
    }

    static func dynamicNamesAreBoundedAndStillResolveInTheTraceRecorded() throws {
        let path = temporaryTracePath("dynamic-names")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path)
        let count = TraceName.dynamicNameCapacity + 904
        // The table is process-wide and other suites run in parallel: names of this run's own
        // (a unique prefix) so none is already in the table, which would be a hit, not an eviction.
        let prefix = "names-\(UInt32.random(in: 0...UInt32.max)) row"
        for i in 0..<count { Trace.instant("\(prefix) \(i)", category: "dynamic") }
        let summary = try recorder.stop()
        #expect(summary.dynamicNameEvictions >= 904)
        var reader = try TraceReader(path: path)
        var names = Set<String>()
        while let event = try reader.next() {
            if case .instant(let category, let name) = event.payload, reader.string(category) == "dynamic" {
                names.insert(reader.string(name))
            }
        }
        #expect(names.count == count)
        #expect(names.contains("\(prefix) 0") && names.contains("\(prefix) \(count - 1)") && !names.contains(TraceName.evictedName))
        #expect(reader.metadata["dynamicNameEvictions"] == String(summary.dynamicNameEvictions))
    }

    @Test func argumentsAreWrittenOnIntervalsAndInstants() async {
        await #expect(processExitsWith: .success) { try Self.argumentsAreWrittenOnIntervalsAndInstantsRecorded() }
    }

    static func argumentsAreWrittenOnIntervalsAndInstantsRecorded() throws {
        let path = temporaryTracePath("arguments")
        defer { unlink(path) }
        let recorder = try TraceRecorder.start(path: path)
        let rows = Trace.interval("filter", category: .stage, with: .int("rows", 120), .double("ratio", 0.5)) { 120 }
        Trace.instant("cache miss", with: .string("kind", "thumb \(rows)"))
        Trace.interval("plain") { }   // @discardableResult: no `_ =` needed
        try recorder.stop()
        let arguments = try FXTScan.arguments(path: path)
        #expect(arguments["filter"] == ["rows": "120", "ratio": "0.5"])
        #expect(arguments["cache miss"] == ["kind": "thumb 120"])
        #expect(arguments["plain"] == [:])
        // The reader still decodes them as ordinary events.
        var reader = try TraceReader(path: path)
        var kinds: [String: String] = [:]
        while let event = try reader.next() {
            switch event.payload {
            case .intervalComplete(_, let name, _): kinds[reader.string(name)] = "interval"
            case .instant(_, let name): kinds[reader.string(name)] = "instant"
            default: break
            }
        }
        #expect(kinds == ["filter": "interval", "cache miss": "instant", "plain": "interval"])
    }
}

/// A minimal FXT walk for what the reader does not surface: each event's arguments by event name.
enum FXTScan {
    static func arguments(path: String) throws -> [String: [String: String]] {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        func word(_ at: Int) -> UInt64 { data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt64.self) } }
        var strings: [Int: String] = [:]
        var result: [String: [String: String]] = [:]
        var at = 0
        while at + 8 <= data.count {
            let header = word(at)
            let words = Int((header >> 4) & 0xFFF)
            guard words > 0, at + words * 8 <= data.count else { break }
            switch header & 0xF {
            case 2:   // string record
                let length = Int((header >> 32) & 0x7FFF)
                strings[Int((header >> 16) & 0x7FFF)] = String(decoding: data[(at + 8)..<(at + 8 + length)], as: UTF8.self)
            case 4 where (header >> 24) & 0xFF != 0:   // event on a thread ref, string refs (the recorder's form)
                let name = strings[Int(header >> 48)] ?? "?"
                var cursor = at + 16
                var arguments: [String: String] = [:]
                for _ in 0..<Int((header >> 20) & 0xF) {
                    let argument = word(cursor)
                    let argumentName = strings[Int((argument >> 16) & 0x7FFF)] ?? "?"
                    switch argument & 0xF {
                    case 1: arguments[argumentName] = String(Int32(truncatingIfNeeded: argument >> 32))
                    case 3: arguments[argumentName] = String(Int64(bitPattern: word(cursor + 8)))
                    case 5: arguments[argumentName] = String(Double(bitPattern: word(cursor + 8)))
                    case 6: arguments[argumentName] = strings[Int((argument >> 32) & 0x7FFF)] ?? "?"
                    default: arguments[argumentName] = "type \(argument & 0xF)"
                    }
                    cursor += Int((argument >> 4) & 0xFFF) * 8
                }
                result[name] = arguments
            default: break
            }
            at += words * 8
        }
        return result
    }
}
