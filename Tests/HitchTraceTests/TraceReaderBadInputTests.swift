import Foundation
import Testing
import HitchReader
import HitchTrace

/// Little-endian bytes of FXT words.
func fxtBytes(_ words: [UInt64]) -> [UInt8] {
    words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
}

/// A valid prefix: magic, initialization (1 tick = 1 ns), string 1 = "cat", string 2 = "name",
/// thread 1 = (pid 1, tid 2).
let validPrefix: [UInt64] = [
    FXT.magic,
    0x21, 1_000_000_000,
    0x2 | 2 << 4 | 1 << 16 | 3 << 32, 0x746163,          // "cat"
    0x2 | 2 << 4 | 2 << 16 | 4 << 32, 0x656d616e,        // "name"
    0x3 | 3 << 4 | 1 << 16, 1, 2,
]
/// An instant event on thread 1 with category 1 and name 2 at `ticks`.
func instantWords(_ ticks: UInt64) -> [UInt64] { [0x4 | 2 << 4 | 1 << 24 | 1 << 32 | 2 << 48, ticks] }

func readEverything(_ bytes: [UInt8]) throws(TraceReadError) -> (count: Int, warnings: [TraceReadWarning]) {
    var reader = try TraceReader(bytes: bytes)
    var count = 0
    while try reader.next() != nil { count += 1 }
    return (count, reader.warnings)
}

func expectReadError(_ bytes: [UInt8], _ check: (TraceReadError) -> Bool) {
    do {
        _ = try readEverything(bytes)
        Issue.record("expected a TraceReadError")
    } catch {
        #expect(check(error), "\(error)")
        #expect(!error.description.contains("\n"))
        #expect(error.description.contains("byte"))
    }
}

struct TraceReaderBadInputTests {
    @Test func emptyFile() { expectReadError([]) { $0 == .empty } }

    @Test func wrongMagic() {
        expectReadError(Array("{\"traceEvents\":[]}".utf8)) { if case .badMagic(0, _) = $0 { true } else { false } }
    }

    @Test func validPrefixReads() throws {
        let result = try readEverything(fxtBytes(validPrefix + instantWords(5) + instantWords(6)))
        #expect(result.count == 2 && result.warnings.isEmpty)
    }

    @Test func truncatedFinalRecordIsAWarning() throws {
        var bytes = fxtBytes(validPrefix + instantWords(5) + instantWords(6))
        bytes.removeLast(3)
        let result = try readEverything(bytes)
        #expect(result.count == 1)
        #expect(result.warnings.count == 1 && result.warnings[0].message.contains("truncated"))
        #expect(result.warnings[0].offset == UInt64(fxtBytes(validPrefix + instantWords(5)).count))
    }

    @Test func zeroSizedRecordIsAnErrorAtItsOffset() {
        let bytes = fxtBytes(validPrefix + [0x4])
        expectReadError(bytes) { $0 == .impossibleRecordSize(offset: UInt64(fxtBytes(validPrefix).count), header: 0x4) }
    }

    @Test func impossibleLargeRecordIsATruncationNotAnAllocation() throws {
        // A large record (type 15) claiming 2^32-1 words: skipped by seeking, never buffered.
        let result = try readEverything(fxtBytes(validPrefix + [0xF | 0xFFFF_FFFF << 4, 0]))
        #expect(result.count == 0 && result.warnings.count == 1)
    }

    @Test func undefinedStringAndThreadRefsAreSkipped() throws {
        let badString: [UInt64] = [0x4 | 2 << 4 | 1 << 24 | 1 << 32 | 99 << 48, 7]
        let badThread: [UInt64] = [0x4 | 2 << 4 | 9 << 24 | 1 << 32 | 2 << 48, 8]
        let result = try readEverything(fxtBytes(validPrefix + badString + badThread + instantWords(9)))
        #expect(result.count == 1)
        #expect(result.warnings.count == 2)
        #expect(result.warnings[0].message.contains("string ref"))
        #expect(result.warnings[1].message.contains("thread ref"))
    }

    @Test func unknownRecordTypesAreSkipped() throws {
        let unknown: [UInt64] = [0xC | 3 << 4, 1, 2]
        let result = try readEverything(fxtBytes(validPrefix + unknown + instantWords(9)))
        #expect(result.count == 1)
        #expect(result.warnings.count == 1 && result.warnings[0].message.contains("unknown record type 12"))
    }

    @Test func oversizedFieldsInsideARecordAreSkipped() throws {
        // A string record whose length field exceeds its record, and an argument larger than its event.
        let badStringRecord: [UInt64] = [0x2 | 2 << 4 | 3 << 16 | 0x7FFF << 32, 0]
        let badArgument: [UInt64] = [0x4 | 3 << 4 | 1 << 20 | 1 << 24 | 1 << 32 | 2 << 48, 1, 0x4 | 9 << 4 | 1 << 16]
        let result = try readEverything(fxtBytes(validPrefix + badStringRecord + badArgument + instantWords(9)))
        #expect(result.count == 1)
        #expect(result.warnings.count == 2)
    }

    @Test func randomBytesNeverCrashOrHang() {
        var generator = SeededGenerator(seed: 42)
        for round in 0..<200 {
            let count = Int.random(in: 0...4096, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 2 == 0 { bytes = fxtBytes(validPrefix) + bytes }   // past the magic check
            let startsWithMagic = bytes.count >= 8 && fxtBytes([FXT.magic]) == Array(bytes.prefix(8))
            do {
                let result = try readEverything(bytes)
                // Every event takes at least one 8-byte word; every warning points inside the input;
                // a file without the magic is never read as a trace.
                #expect(startsWithMagic, "round \(round): a file without the FXT magic read as a trace")
                #expect(result.count <= bytes.count / 8, "round \(round): \(result.count) events from \(bytes.count) bytes")
                #expect(result.warnings.allSatisfy { $0.offset < UInt64(bytes.count) }, "round \(round): \(result.warnings.prefix(3))")
                // The same bytes read the same way twice.
                let again = try readEverything(bytes)
                #expect(again.count == result.count && again.warnings == result.warnings, "round \(round)")
            } catch {
                #expect(!error.description.contains("\n"))
            }
        }
    }
}

/// SplitMix64: a small deterministic generator for test inputs.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
