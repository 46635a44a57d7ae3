import HitchAnalysis
import HitchReader
import HitchTrace

/// Renders a trace's samples as collapsed stacks (Brendan Gregg's folded format, what flamegraph.pl,
/// speedscope and inferno read): one line per distinct stack, `root;caller;…;leaf count`, lines
/// sorted so the same trace always gives the same bytes.
///
/// Fed the trace's events in file order (one pass); `render()` resolves addresses through the
/// trace's symbol records. A frame with no symbol prints as `image+0xOFFSET` when its image is
/// known, else as its hex address.
public struct FoldedStacks {
    /// Only samples at or after this time count; nil: no bound. Times are nanoseconds from the
    /// trace's first event on a thread (the start `hitch info` reports as firstTimestampNs).
    public var fromNs: Int64?
    /// Only samples before this time count; nil: no bound.
    public var toNs: Int64?
    /// Frames show full demangled Swift names instead of simplified ones.
    public var fullNames = false

    private var stacks: [StackID: [UInt64]] = [:]
    private var symbols: [SymbolName] = []
    private var samples: [(timestampNs: Int64, stack: StackID)] = []
    private var traceStartNs: Int64?

    private struct SymbolName {
        var address: UInt64
        var size: UInt64
        var name: String
    }

    public init(fromNs: Int64? = nil, toNs: Int64? = nil) {
        self.fromNs = fromNs
        self.toNs = toNs
    }

    /// The folded stacks of every sample of `input` within [fromNs, toNs), in one pass.
    public static func render<Input: TraceInput>(_ input: inout Input, fromNs: Int64? = nil, toNs: Int64? = nil, fullNames: Bool = false) throws -> String {
        var folded = FoldedStacks(fromNs: fromNs, toNs: toNs)
        folded.fullNames = fullNames
        while let event = try input.nextEvent() {
            folded.consume(event) { input.string($0) }
        }
        return folded.render()
    }

    /// Takes one event; `string` resolves the trace's interned strings (e.g. `reader.string`).
    public mutating func consume(_ event: TraceEvent, string: (StringID) -> String) {
        switch event.payload {
        case .stackDefinition(let stack, let addresses):
            stacks[stack] = addresses
        case .symbol(let symbol):
            let name = Symbol.displayName(function: string(symbol.function), image: string(symbol.image), offset: symbol.offset, fullNames: fullNames)
            symbols.append(SymbolName(address: symbol.address, size: max(symbol.size, 1), name: name))
        case .sample(let stack):
            samples.append((event.timestampNs, stack))
            noteTime(of: event)
        default:
            noteTime(of: event)
        }
    }

    /// Stack and symbol definitions carry no time; untimed records sit on no thread at time 0.
    private mutating func noteTime(of event: TraceEvent) {
        guard event.thread.rawValue != 0 || event.timestampNs != 0 else { return }
        if traceStartNs.map({ event.timestampNs < $0 }) ?? true { traceStartNs = event.timestampNs }
    }

    /// The folded lines, each ending in a newline.
    public func render() -> String {
        let sortedSymbols = symbols.sorted { $0.address < $1.address }
        let start = traceStartNs ?? 0
        var counts: [StackID: Int] = [:]
        for sample in samples {
            let relative = sample.timestampNs - start
            if let fromNs, relative < fromNs { continue }
            if let toNs, relative >= toNs { continue }
            counts[sample.stack, default: 0] += 1
        }
        var lines: [String: Int] = [:]
        for (stack, count) in counts {
            let addresses = stacks[stack] ?? []
            let frames = addresses.reversed().map { Self.name(of: $0, in: sortedSymbols) }
            let key = frames.isEmpty ? "[unknown stack \(stack.rawValue)]" : frames.joined(separator: ";")
            lines[key, default: 0] += count
        }
        var output = ""
        for (stack, count) in lines.sorted(by: { $0.key < $1.key }) {
            output += stack + " " + String(count) + "\n"
        }
        return output
    }

    private static func name(of address: UInt64, in symbols: [SymbolName]) -> String {
        // Last symbol starting at or before the address; it names the frame if it covers it.
        var low = 0, high = symbols.count
        while low < high {
            let middle = (low + high) / 2
            if symbols[middle].address <= address { low = middle + 1 } else { high = middle }
        }
        if low > 0 {
            let symbol = symbols[low - 1]
            if address - symbol.address < symbol.size { return sanitized(symbol.name) }
        }
        return "0x" + String(address, radix: 16)
    }

    /// `;` separates frames and a newline ends a line in this format: neither may appear in a name.
    private static func sanitized(_ name: String) -> String {
        guard name.contains(where: { $0 == ";" || $0.isNewline }) else { return name }
        return String(name.map { $0 == ";" ? ":" : ($0.isNewline ? " " : $0) })
    }
}
