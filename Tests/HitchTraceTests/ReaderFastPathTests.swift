import Testing
import HitchReader

/// The reader decodes the recorder's event shape (every string and thread by reference) in a
/// straight line and any other shape the general way; both must give the same events and arguments.
struct ReaderFastPathTests {
    /// `validPrefix` plus string 3 = "n" and string 4 = "s" (argument names).
    private let prefix = validPrefix + [0x2 | 2 << 4 | 3 << 16 | 1 << 32, 0x6e, 0x2 | 2 << 4 | 4 << 16 | 1 << 32, 0x73]

    /// An instant with a uint32 and a string argument, and a complete event with an int64 argument,
    /// every string and the thread by reference (the straight-line decode).
    private var byReference: [UInt64] {
        [0x4 | 4 << 4 | 0 << 16 | 2 << 20 | 1 << 24 | 1 << 32 | 2 << 48, 100,
         0x2 | 1 << 4 | 3 << 16 | 7 << 32,
         0x6 | 1 << 4 | 4 << 16 | 2 << 32,
         0x4 | 5 << 4 | 4 << 16 | 1 << 20 | 1 << 24 | 1 << 32 | 2 << 48, 200,
         0x3 | 2 << 4 | 3 << 16, UInt64(bitPattern: -5),
         260]
    }

    /// The same events with the thread, the category, a name and an argument name inline (the general decode).
    private var inline: [UInt64] {
        [0x4 | 8 << 4 | 0 << 16 | 2 << 20 | 0 << 24 | (0x8000 | 3) << 32 | 2 << 48, 100, 1, 2, 0x746163,
         0x2 | 2 << 4 | (0x8000 | 1) << 16 | 7 << 32, 0x6e,
         0x6 | 1 << 4 | 4 << 16 | 2 << 32,
         0x4 | 6 << 4 | 4 << 16 | 1 << 20 | 1 << 24 | 1 << 32 | (0x8000 | 4) << 48, 200, 0x656d616e,
         0x3 | 2 << 4 | 3 << 16, UInt64(bitPattern: -5),
         260]
    }

    /// Each event's description, its arguments as "name=value" (strings resolved), and the warnings.
    private func decode(_ words: [UInt64]) throws -> (events: [String], arguments: [String], warnings: Int) {
        var reader = try TraceReader(bytes: fxtBytes(prefix + words))
        var events: [String] = [], arguments: [String] = []
        while let event = try reader.next() {
            events.append("\(event)")
            let kept = [reader.arguments.first, reader.arguments.second].compactMap { $0 }
            arguments.append(kept.map { argument in
                let value: String
                switch argument.value {
                case .string(let id): value = reader.string(id)
                case .int(let n): value = String(n)
                case .uint(let n): value = String(n)
                case .double(let d): value = String(d)
                }
                return reader.string(argument.name) + "=" + value
            }.joined(separator: " "))
        }
        return (events, arguments, reader.warningCount)
    }

    @Test func referencesAndInlineStringsDecodeAlike() throws {
        let fast = try decode(byReference), general = try decode(inline)
        #expect(fast.events.count == 2 && fast.warnings == 0 && general.warnings == 0)
        #expect(fast.events == general.events)
        #expect(fast.arguments == ["n=7 s=name", "n=-5"])
        #expect(general.arguments == fast.arguments)
    }

    @Test func aTruncatedArgumentFallsBackAndWarns() throws {
        // The straight-line decode meets an argument larger than its record: the general decode skips it, with a warning.
        let words: [UInt64] = [0x4 | 3 << 4 | 1 << 20 | 1 << 24 | 1 << 32 | 2 << 48, 1, 0x4 | 9 << 4 | 3 << 16] + instantWords(9)
        let result = try decode(words)
        #expect(result.events.count == 1)
        #expect(result.warnings == 1)
    }
}
