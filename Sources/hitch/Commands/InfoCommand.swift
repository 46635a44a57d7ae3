import Foundation
import HitchAnalysis
import HitchReader
import HitchTrace

// `hitch info TRACE`: what a trace holds, read in one streaming pass.
enum InfoCommand: Subcommand {
    static let name = "info"
    static let summary = "Summarize a trace: duration, threads, events by kind, drops, metadata."
    static let help = """
    USAGE: hitch info TRACE [--format text|json]

    Reads an FXT trace in one streaming pass and prints its duration, threads (by name), event
    counts by kind, the app arguments intervals and instants carry (by name), dropped events, the
    sample source of a sampled recording and why it was used, metadata and any warnings (skipped or truncated records).
    Exits 2 when the trace holds no events.

    ARGUMENTS:
      TRACE                 An .fxt trace file.

    OPTIONS:
      --format text|json    Output format (default: text).
      -o, --output FILE     Write to FILE (- for standard output, the default).
      -h, --help            Show this help.

    EXAMPLES:
      hitch info Traces/feed-naive-120hz.fxt
      hitch info Traces/feed-naive-120hz.fxt --format json
    """

    struct ThreadInfo: Codable {
        var name: String
        var processID, threadID: UInt64
        var eventCount: Int
    }

    struct Info: Codable {
        var path: String
        var fileBytes, ticksPerSecond: UInt64
        var durationNs, firstTimestampNs, lastTimestampNs: Int64
        var eventCount: Int
        var eventCounts: [String: Int]
        /// Intervals and instants carrying each app argument (docs/FORMAT.md §5 "Arguments"), by name.
        var argumentCounts: [String: Int]
        var droppedEvents: UInt64
        var threads: [ThreadInfo]
        var metadata: [String: String]
        var warningCount: Int
        var warnings: [String]
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let output = try arguments.output()
        let path = try arguments.positionals(name, count: 1...1, what: "exactly one TRACE")[0]
        try TraceFiles.check(path)
        let info: Info
        do {
            info = try summarize(path: path)
        } catch let error as TraceReadError {
            throw TraceFiles.error(error, path: path)
        }
        try writeOutput(format == "json" ? try JSONOutput.text(info) : text(info) + "\n", to: output, inputs: [path])
        // A trace without events is what a recording that never reached its file leaves: say so.
        if info.eventCount == 0 {
            throw CLIError("\(path): the trace holds no events (its recording wrote nothing after the header)")
        }
        return .ok
    }

    static func summarize(path: String) throws -> Info {
        var reader = try TraceReader(path: path)
        var counts: [String: Int] = [:]
        var argumentCounts: [StringID: Int] = [:]
        var perThread: [UInt32: Int] = [:]
        var first = Int64.max, last = Int64.min, total = 0
        while let event = try reader.next() {
            total += 1
            counts[event.payload.kindName, default: 0] += 1
            let arguments = reader.arguments
            if !arguments.isEmpty { for argument in arguments.all { argumentCounts[argument.name, default: 0] += 1 } }
            guard event.thread.rawValue != 0 else { continue }   // stack and symbol definitions have no time
            perThread[event.thread.rawValue, default: 0] += 1
            first = min(first, event.timestampNs)
            last = max(last, event.payload.endNs ?? event.timestampNs, event.timestampNs)
        }
        if total == 0 || first == .max { first = 0; last = 0 }
        let threads = reader.threads.map {
            ThreadInfo(name: $0.name, processID: $0.processID, threadID: $0.threadID, eventCount: perThread[$0.id.rawValue] ?? 0)
        }
        return Info(path: path, fileBytes: reader.fileSize, ticksPerSecond: reader.ticksPerSecond,
                    durationNs: last - first, firstTimestampNs: first, lastTimestampNs: last,
                    eventCount: total, eventCounts: counts,
                    argumentCounts: Dictionary(argumentCounts.map { (reader.string($0.key), $0.value) }, uniquingKeysWith: +),
                    droppedEvents: reader.droppedEventCount,
                    threads: threads, metadata: reader.metadata, warningCount: reader.warningCount,
                    warnings: reader.warnings.map(\.description))
    }

    static func text(_ info: Info) -> String {
        var lines: [String] = []
        lines.append("trace      \(info.path) (\(info.fileBytes) bytes, \(info.ticksPerSecond) ticks/s)")
        lines.append(String(format: "duration   %.3f ms", Double(info.durationNs) / 1e6))
        lines.append("events     \(info.eventCount)")
        for (kind, count) in info.eventCounts.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            lines.append("  " + kind.padding(toLength: 20, withPad: " ", startingAt: 0) + "\(count)")
        }
        if !info.argumentCounts.isEmpty {
            lines.append("arguments  (on intervals and instants)")
            for (name, count) in info.argumentCounts.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
                lines.append("  " + name.padding(toLength: 20, withPad: " ", startingAt: 0) + "\(count)")
            }
        }
        lines.append("dropped    \(info.droppedEvents)" + (info.droppedEvents > 0 ? " (the recorder's writer could not keep up)" : ""))
        // Where the thread states come from (docs/FORMAT.md "Thread states").
        let schedReason = info.metadata[MetadataKey.schedSourceReason].map { " (\($0))" } ?? ""
        lines.append("sched      " + (info.metadata[MetadataKey.schedSource].map { $0 + schedReason } ?? "none (recorded without thread states)"))
        lines.append("threads    \(info.threads.count)")
        for thread in info.threads {
            lines.append("  " + "\(thread.name) [\(thread.processID)/\(thread.threadID)]".padding(toLength: 36, withPad: " ", startingAt: 0)
                         + "\(thread.eventCount) events")
        }
        if let source = info.metadata[MetadataKey.samplerSource] {
            // Which sample source ran and why (the same entries are in the metadata below).
            let rate = info.metadata[MetadataKey.samplerRateHz].map { " at \($0) Hz" } ?? ""
            let reason = info.metadata[MetadataKey.samplerSourceReason].map { ": \($0)" } ?? ""
            lines.append("sampler    \(source)\(rate)\(reason)")
            if let fallback = info.metadata[MetadataKey.samplerPerfFallbackThreads] {
                lines.append("           \(fallback) threads on the timer signal instead: \(info.metadata[MetadataKey.samplerPerfFallbackReason] ?? "")")
            }
        }
        if !info.metadata.isEmpty {
            lines.append("metadata")
            for (key, value) in info.metadata.sorted(by: { $0.key < $1.key }) { lines.append("  \(key) = \(value)") }
        }
        if info.warningCount > 0 {
            lines.append("warnings   \(info.warningCount)")
            for warning in info.warnings { lines.append("  \(warning)") }
        }
        return lines.joined(separator: "\n")
    }
}
