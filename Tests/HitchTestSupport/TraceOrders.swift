import HitchAlgorithms
import HitchAnalysis
import HitchReader
import HitchTrace

/// The file orders the ordering contract speaks of (docs/METRICS.md "File order"), for tests: each
/// thread's own order kept, the threads interleaved otherwise; within the bound a trace states,
/// or beyond it.
public enum TraceOrders {
    /// A recorded trace as an in-memory list, in its file order.
    public static func load(_ path: String) throws -> TraceEventList {
        var reader = try TraceReader(path: path)
        var list = TraceEventList()
        while let event = try reader.next() { list.events.append(event) }
        var strings: [String] = [""]
        while true {
            let text = reader.string(StringID(rawValue: UInt32(strings.count)))
            if text.isEmpty { break }
            strings.append(text)
        }
        list.strings = strings
        list.threadNames = [""] + reader.threads.map(\.name)
        return list
    }

    /// `list` in time order: what one producer writes, or a round trip through Chrome JSON.
    public static func timeOrdered(_ list: TraceEventList) -> TraceEventList {
        var out = list
        out.events.sort { $0.timestampNs < $1.timestampNs }
        return out
    }

    /// `list` with the recorder's flush interval stated first (the bound is twice that).
    public static func stating(flushIntervalMs: Int, _ list: TraceEventList) -> TraceEventList {
        var out = list
        let key = out.intern(MetadataKey.flushIntervalMs.name), value = out.intern(String(flushIntervalMs))
        out.events.insert(TraceEvent(timestampNs: 0, thread: ThreadID(rawValue: 0), payload: .metadata(key: key, value: value)), at: 0)
        return out
    }

    /// What the same recording is on a machine without schedstat files: its thread-state readings
    /// without the run delay, so the frame threads' windows are split by their context switches.
    public static func withoutRunDelay(_ list: TraceEventList) -> TraceEventList {
        var out = list
        for i in out.events.indices {
            if case .threadState(var reading) = out.events[i].payload {
                reading.runnableWaitNs = nil
                out.events[i].payload = .threadState(reading)
            }
        }
        return out
    }

    /// The time the ordering contract takes an event to be emitted at (the end of one that spans
    /// time, else its timestamp); nil for the records it does not order (metadata, stack and
    /// symbol definitions, drop counts).
    public static func emissionNs(_ event: TraceEvent) -> Int64? {
        switch event.payload {
        case .metadata, .stackDefinition, .symbol, .droppedEvents: nil
        default: event.payload.endNs ?? event.timestampNs
        }
    }

    /// The bound `list` states (twice its first `flushIntervalMs`), nil when it states none.
    public static func boundNs(_ list: TraceEventList) -> Int64? {
        for event in list.events {
            if case .metadata(let key, let value) = event.payload, list.string(key) == MetadataKey.flushIntervalMs.name,
               let ms = Int64(list.string(value)), ms > 0 {
                return 2 * ms * 1_000_000
            }
        }
        return nil
    }

    /// `list` stating a bound its own order keeps: as it is when it states none, or keeps the one
    /// it states; else with a flush interval stated first whose bound covers the latest any of its
    /// events came, and the stated bound again as room for other orders (a recorder whose writer
    /// was starved on an overloaded machine writes events later than its interval allows, and says
    /// so: the analysis warns). Orders within that bound must give the analysis of `list`, bit for bit.
    public static func statingTheBoundItKeeps(_ list: TraceEventList) -> TraceEventList {
        guard let stated = boundNs(list), beyondBoundEvents(list) > 0 else { return list }
        var latest = Int64.min, latenessNs = stated
        for event in list.events {
            guard let emitted = emissionNs(event) else { continue }
            if latest != .min { latenessNs = max(latenessNs, latest - emitted) }
            latest = max(latest, emitted)
        }
        return stating(flushIntervalMs: Int((latenessNs + stated) / 2_000_000) + 1, list)
    }

    /// Events read after the watermark passed their emission time, in this order: the count the
    /// analysis must warn of. The bound applies from the record that states it.
    public static func beyondBoundEvents(_ list: TraceEventList) -> Int {
        var boundNs: Int64? = nil, latest = Int64.min, beyond = 0
        for event in list.events {
            if boundNs == nil, case .metadata(let key, let value) = event.payload, list.string(key) == MetadataKey.flushIntervalMs.name,
               let ms = Int64(list.string(value)), ms > 0 {
                boundNs = 2 * ms * 1_000_000
            }
            guard let emitted = emissionNs(event) else { continue }
            if let boundNs, latest != .min, emitted < latest - boundNs { beyond += 1 }
            latest = max(latest, emitted)
        }
        return beyond
    }

    /// A random interleaving of the threads that stays within `boundNs` (no event is read after the
    /// watermark passed its emission time): runs of 1...`maxRun` events of one thread at a time, the
    /// thread drawn at random among those whose next event can be read now, or, `favouring`, the
    /// first such in an order drawn once (nine times in ten): one thread runs as far ahead of the
    /// others as the bound allows. Always possible: the thread holding the earliest emission still
    /// to read can go, since `list`'s own order is within the bound (a thread's events before that
    /// one were read before it there).
    public static func withinBound(_ list: TraceEventList, boundNs: Int64, seed: UInt64, maxRun: Int, favouring: Bool = false) -> TraceEventList {
        var random = SeededGenerator(seed: seed)
        // The preamble (the metadata before any event, where the bound is stated) stays first.
        let preamble = list.events.prefix { if case .metadata = $0.payload { true } else { false } }
        var streams: [UInt32: [TraceEvent]] = [:]
        for event in list.events.dropFirst(preamble.count) { streams[event.thread.rawValue, default: []].append(event) }
        let threads = streams.sorted { $0.key < $1.key }.map(\.value)
        // Per thread, the earliest emission from each position on.
        let earliest: [[Int64]] = threads.map { events in
            var suffix = [Int64](repeating: .max, count: events.count + 1)
            for i in stride(from: events.count - 1, through: 0, by: -1) { suffix[i] = min(suffix[i + 1], emissionNs(events[i]) ?? .max) }
            return suffix
        }
        var preference = Array(threads.indices)
        for i in preference.indices.reversed() { preference.swapAt(i, random.below(i + 1)) }
        var next = [Int](repeating: 0, count: threads.count)
        var latest = Int64.min
        var out = list
        out.events = Array(preamble)
        func pending() -> Int64 { threads.indices.map { earliest[$0][next[$0]] }.min() ?? .max }
        func canRead(_ thread: Int) -> Bool {
            guard next[thread] < threads[thread].count else { return false }
            guard let emitted = emissionNs(threads[thread][next[thread]]) else { return true }
            return max(latest, emitted).subtractingReportingOverflow(boundNs).partialValue <= pending()
        }
        func read(_ thread: Int) {
            let event = threads[thread][next[thread]]
            out.events.append(event)
            if let emitted = emissionNs(event) { latest = max(latest, emitted) }
            next[thread] += 1
        }
        while out.events.count < list.events.count {
            let readable = threads.indices.filter(canRead)
            guard !readable.isEmpty else {
                // Only when `list` itself reads beyond its bound: the thread holding the earliest
                // emission goes on (what the analysis then counts, `beyondBoundEvents` counts too).
                read(threads.indices.filter { next[$0] < threads[$0].count }.min { earliest[$0][next[$0]] < earliest[$1][next[$1]] }!)
                continue
            }
            let thread = favouring && random.below(10) < 9 ? preference.first(where: readable.contains)! : readable[random.below(readable.count)]
            for _ in 0..<(1 + random.below(maxRun)) where canRead(thread) { read(thread) }
        }
        return out
    }
}

extension SeededGenerator {
    /// Uniform below `bound` (at least 1), by remainder: the seeded draws of the order and scale tests.
    package mutating func below<Bound: BinaryInteger>(_ bound: Bound) -> Bound { Bound(next() % UInt64(max(1, bound))) }
}
