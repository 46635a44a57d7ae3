import Foundation
import Testing
import HitchReader

/// Checks the written bytes against the FXT spec's bit layouts, without the project's reader.
struct FXTLayoutTests {
    struct RawRecord { var offset: Int; var words: [UInt64] }

    /// Splits a file into records by the header's size field (and records string table entries).
    func records(_ path: String) throws -> (records: [RawRecord], strings: [Int: String]) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let words: [UInt64] = data.withUnsafeBytes { raw in
            (0..<(raw.count / 8)).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) }
        }
        #expect(data.count % 8 == 0)
        var result: [RawRecord] = [], strings: [Int: String] = [:]
        var i = 0
        while i < words.count {
            let size = Int((words[i] >> 4) & 0xFFF)
            #expect(size > 0)
            guard size > 0, i + size <= words.count else { break }
            let record = RawRecord(offset: i * 8, words: Array(words[i..<(i + size)]))
            if words[i] & 0xF == 2 {
                let length = Int((words[i] >> 32) & 0x7FFF)
                let bytes = data.subdata(in: (i + 1) * 8..<((i + 1) * 8 + length))
                strings[Int((words[i] >> 16) & 0x7FFF)] = String(decoding: bytes, as: UTF8.self)
                // String streams are zero-padded to 8 bytes and sized exactly.
                #expect(size == 1 + (length + 7) / 8)
                let padding = data.subdata(in: ((i + 1) * 8 + length)..<((i + size) * 8))
                #expect(padding.allSatisfy { $0 == 0 })
            }
            result.append(record)
            i += size
        }
        return (result, strings)
    }

    /// An event record header word: [0..3] type 4, [4..15] size, [16..19] event type, [20..23] args,
    /// [24..31] thread ref, [32..47] category ref, [48..63] name ref.
    func eventHeader(words: UInt64, type: UInt64, args: UInt64, thread: UInt64, category: UInt64, name: UInt64) -> UInt64 {
        var header: UInt64 = 0x4 | words << 4
        header |= type << 16 | args << 20 | thread << 24
        return header | category << 32 | name << 48
    }

    @Test func recordsMatchTheSpecBitLayouts() throws {
        let path = temporaryTracePath("layout")
        defer { unlink(path) }
        let writer = try TraceFileWriter(path: path, ticksPerSecond: 1_000_000_000)
        let main = writer.thread(name: "main", threadID: 0x42, processID: 0x7)
        let s = writer.string
        writer.write(TraceEvent(timestampNs: 1000, thread: main, payload: .intervalComplete(category: s("stage"), name: s("filter"), endNs: 2000)))
        writer.write(TraceEvent(timestampNs: 3000, thread: main, payload: .bodyEvaluation(BodyEvaluation(viewType: s("Row"), identity: 42, endNs: 3500))))
        writer.write(TraceEvent(timestampNs: 4000, thread: main, payload: .bodyEvaluation(BodyEvaluation(viewType: s("Row"), identity: 1 << 40, endNs: 4500))))
        writer.write(TraceEvent(timestampNs: 5000, thread: main, payload: .counter(name: s("bytes"), value: 1.5)))
        writer.write(TraceEvent(timestampNs: 6000, thread: main, payload: .token(TokenEvent(stage: .shown, index: -5))))
        writer.write(TraceEvent(timestampNs: 7000, thread: main, payload: .invalidation(Invalidation(source: s("M.q"), target: s("Row"), targetIdentity: 1, stack: nil))))
        try writer.close()

        let (records, strings) = try records(path)
        func ref(_ text: String) -> UInt64 { UInt64(strings.first { $0.value == text }!.key) }

        // Magic record, byte for byte, then the initialization record.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(Array(bytes.prefix(8)) == [0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00])
        #expect(records[1].words == [0x21, 1_000_000_000])

        // Thread record: type 3, 3 words, index in [16..23], then process and thread koids.
        let threadRecord = try #require(records.first { $0.words[0] & 0xF == 3 })
        let threadIndex = (threadRecord.words[0] >> 16) & 0xFF
        let threadHeader: UInt64 = 0x3 | 3 << 4 | threadIndex << 16
        #expect(threadRecord.words == [threadHeader, 0x7, 0x42])

        // Kernel object record naming the thread: type 7, ZX_OBJ_TYPE_THREAD (2), name ref, one
        // koid argument "process".
        let threadObject = try #require(records.first { $0.words[0] & 0xF == 7 && ($0.words[0] >> 16) & 0xFF == 2 })
        let objectHeader: UInt64 = 0x7 | 4 << 4 | 2 << 16 | ref("main") << 24 | 1 << 40
        let koidArg: UInt64 = 0x8 | 2 << 4 | ref("process") << 16
        #expect(threadObject.words == [objectHeader, 0x42, koidArg, 0x7])

        let events = records.filter { $0.words[0] & 0xF == 4 }
        #expect(events.count == 6)
        let t: UInt64 = threadIndex
        // Duration complete: event type 4, no args, thread ref, category and name refs, ts, end ts.
        let completeHeader = eventHeader(words: 3, type: 4, args: 0, thread: t, category: ref("stage"), name: ref("filter"))
        #expect(events[0].words == [completeHeader, 1000, 2000])
        // A body: one uint32 argument (type 2, 1 word, value in [32..63]).
        let bodyHeader = eventHeader(words: 4, type: 4, args: 1, thread: t, category: ref("hitch.body"), name: ref("Row"))
        let identityArg: UInt64 = 0x2 | 1 << 4 | ref("identity") << 16 | 42 << 32
        #expect(events[1].words == [bodyHeader, 3000, identityArg, 3500])
        // A wider identity: uint64 argument (type 4, 2 words).
        let wideArg: UInt64 = 0x4 | 2 << 4 | ref("identity") << 16
        #expect(events[2].words[2] == wideArg)
        #expect(events[2].words[3] == 1 << 40)
        // Counter: event type 1, a double argument (type 5), then the counter id word.
        let counterHeader = eventHeader(words: 5, type: 1, args: 1, thread: t, category: ref("counter"), name: ref("bytes"))
        let doubleArg: UInt64 = 0x5 | 2 << 4 | ref("value") << 16
        #expect(events[3].words == [counterHeader, 5000, doubleArg, 1.5.bitPattern, 0])
        // Token: an int32 argument (type 1) holding -5 in [32..63].
        let minusFive = UInt64(UInt32(bitPattern: -5))
        let int32Arg: UInt64 = 0x1 | 1 << 4 | ref("index") << 16 | minusFive << 32
        #expect(events[4].words[2] == int32Arg)
        #expect((events[4].words[0] >> 48) == ref("shown"))
        // Invalidation: a string argument (type 6) whose value is a string ref in [32..47].
        let stringArg: UInt64 = 0x6 | 1 << 4 | ref("target") << 16 | ref("Row") << 32
        #expect(events[5].words[2] == stringArg)
    }
}
