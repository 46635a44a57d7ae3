import HitchAnalysis
import HitchReport
import HitchReader
import HitchTrace
import Testing

struct FoldedStacksTests {
    /// A small trace: three functions, an image-only symbol, an unknown address, a name with `;`.
    static func syntheticTrace() -> TraceEventList {
        var list = TraceEventList()
        let main = list.thread("main")
        let none = ThreadID(rawValue: 0)
        func symbol(_ address: UInt64, _ size: UInt64, _ function: String, image: String = "/app/bin/feed", offset: UInt64 = 0) -> TraceEvent.Payload {
            .symbol(Symbol(address: address, size: size, function: list.intern(function), image: list.intern(image), offset: offset))
        }
        list.append(1_000_000, main, .instant(category: list.intern("input"), name: list.intern("keystroke")))
        let definitions: [TraceEvent.Payload] = [
            symbol(0x1000, 0x100, "outer()"),
            symbol(0x2000, 0x100, "middle()"),
            symbol(0x3000, 0x80, "hot()"),
            symbol(0x5000, 1, "", image: "/usr/lib/libfoo.so", offset: 0x42),
            symbol(0x6000, 0x10, "weird;name"),
            .stackDefinition(stack: StackID(rawValue: 1), addresses: [0x3010, 0x2010, 0x1010]),
            .stackDefinition(stack: StackID(rawValue: 2), addresses: [0x2020, 0x1020]),
            .stackDefinition(stack: StackID(rawValue: 3), addresses: [0x5000, 0x1030]),
            .stackDefinition(stack: StackID(rawValue: 4), addresses: [0x9999]),
            .stackDefinition(stack: StackID(rawValue: 5), addresses: [0x3020, 0x2030, 0x1040]),
            .stackDefinition(stack: StackID(rawValue: 6), addresses: [0x6004, 0x1000]),
        ]
        for payload in definitions { list.append(0, none, payload) }
        // Samples at 1 ms steps from the trace's start (1 ms): stacks 1 1 2 3 4 5 6 1.
        for (step, stack) in [1, 1, 2, 3, 4, 5, 6, 1].enumerated() {
            list.append(1_000_000 + Int64(step) * 1_000_000, main, .sample(stack: StackID(rawValue: UInt32(stack))))
        }
        return list
    }

    @Test func foldsEveryStackRootFirstWithCounts() throws {
        var input = Self.syntheticTrace()
        let text = try FoldedStacks.render(&input)
        #expect(text == """
        0x9999 1
        outer();libfoo.so+0x42 1
        outer();middle() 1
        outer();middle();hot() 4
        outer();weird:name 1

        """)
    }

    @Test func windowKeepsSamplesFromInclusiveToExclusive() throws {
        // Samples sit at 0, 1, ..., 7 ms from the start; [2 ms, 5 ms) holds steps 2, 3, 4.
        var input = Self.syntheticTrace()
        let text = try FoldedStacks.render(&input, fromNs: 2_000_000, toNs: 5_000_000)
        #expect(text == "0x9999 1\nouter();libfoo.so+0x42 1\nouter();middle() 1\n")
    }

    @Test func traceWithoutSamplesFoldsToNothing() throws {
        var list = TraceEventList()
        let main = list.thread("main")
        list.append(5, main, .instant(category: list.intern("input"), name: list.intern("keystroke")))
        #expect(try FoldedStacks.render(&list) == "")
    }
}
