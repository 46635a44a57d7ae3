import Foundation
import HitchAnalysis
import HitchImport
import HitchReader
import HitchTrace

// `hitch bench import`: generates one input per format on the fly (an FXT trace from the synthetic
// generator, a framestats dump, a Perfetto trace, an xctrace export), then measures, side by side
// in one run, the bare FXT reader over the FXT file and each importer over its input: MB/s on the
// thread's CPU time, each importer's ratio to the reader, and each importer's peak resident memory.
enum BenchImport: Subcommand {
    static let name = "import"
    static let summary = "Importer throughput (MB/s per format) beside the FXT reader's, and memory."
    static let help = """
    USAGE: hitch bench import [--size 64MB] [--formats LIST] [--keep DIR] [--format text|json]

    Generates an input of about --size bytes per format (framestats at most 64MB: dumps hold 120
    frames a window, and the importer reads a dump whole), imports each into an FXT file, and reads
    a generated FXT trace of the same size with the bare TraceReader. Prints MB/s per format on the
    measuring thread's CPU time, each importer's ratio to the reader, and each import's peak
    resident memory (VmHWM, reset before each).

    OPTIONS:
      --size SIZE       Input size per format (default 64MB; 1GB for the memory check).
      --formats LIST    Comma-separated formats (default fxt,framestats,perfetto,xctrace).
      --keep DIR        Write the generated inputs into DIR and keep them (e.g. for /usr/bin/time -v
                        hitch import perfetto DIR/bench.pftrace -o out.fxt).
      --format FMT      text (default) or json. JSON: one object per format with inputBytes,
                        megabytesPerSecond, megabytesPerSecondWall, toReaderRatio, peakResidentMB, frames.
      -h, --help        Show this help.

    EXAMPLES:
      hitch bench import --format json
      hitch bench import --size 1GB --formats perfetto,xctrace --keep /tmp/big
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let size = try Quantities.bytes(try arguments.option("--size") ?? "64MB", option: "--size")
        let formats = (try arguments.option("--formats") ?? "fxt,framestats,perfetto,xctrace").split(separator: ",").map(String.init)
        let keep = try arguments.option("--keep")
        let output = try arguments.choice("--format", ["text", "json"], default: "text")
        _ = try arguments.positionals("bench import", count: 0...0, what: "no arguments")
        let known = ["fxt", "framestats", "perfetto", "xctrace"]
        for format in formats where !known.contains(format) {
            throw CLIError("option '--formats' takes \(known.joined(separator: ", ")); got '\(format)'")
        }
        let directory = keep ?? NSTemporaryDirectory() + "hitch-bench-import-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }

        var results: [(String, [(String, Double)])] = []
        var readerRate = 0.0
        for format in ["fxt"] + formats.filter({ $0 != "fxt" }) {
            let input = directory + "/bench." + (format == "perfetto" ? "pftrace" : format == "xctrace" ? "xml" : format == "framestats" ? "txt" : "fxt")
            let bytes = try generate(format, path: input, bytes: format == "framestats" ? min(size, 64 << 20) : size)
            ProcessMemory.resetPeak()
            let start = BenchClock.monotonicSeconds(), cpuStart = BenchClock.threadCPUSeconds()
            var frames = 0
            if format == "fxt" {
                do {
                    var reader = try TraceReader(path: input)
                    var event = TraceEvent(timestampNs: 0, thread: ThreadID(rawValue: 0), payload: .droppedEvents(count: 0))
                    while try reader.next(into: &event) { if case .frameBegan = event.payload { frames += 1 } }
                } catch { throw CLIError("\(error)") }
            } else {
                let out = directory + "/imported-\(format).fxt"
                do {
                    frames = try TraceImport.run(ImportFormat(rawValue: format)!, inputs: [input], output: out).frames
                } catch { throw CLIError("\(error)") }
                unlink(out)
            }
            let cpu = BenchClock.threadCPUSeconds() - cpuStart, wall = BenchClock.monotonicSeconds() - start
            let peak = Double(ProcessMemory.peakResidentBytes) / 1_048_576
            let rate = Double(bytes) / 1_048_576 / cpu
            if format == "fxt" { readerRate = rate }
            if !formats.contains(format) && format == "fxt" && keep == nil { unlink(input) }
            results.append((format, [
                ("inputBytes", Double(bytes)),
                ("megabytesPerSecond", (rate * 10).rounded() / 10),
                ("megabytesPerSecondWall", (Double(bytes) / 1_048_576 / wall * 10).rounded() / 10),
                ("toReaderRatio", ((rate / readerRate) * 1000).rounded() / 1000),
                ("peakResidentMB", (peak * 10).rounded() / 10),
                ("frames", Double(frames)),
            ]))
            if keep == nil { unlink(input) }
        }
        if output == "json" {
            let object = Dictionary(results.map { format, figures in (format, Dictionary(figures, uniquingKeysWith: { first, _ in first })) },
                                    uniquingKeysWith: { first, _ in first })
            try writeStandardOutput(JSONOutput.text(object))
        } else {
            for (format, figures) in results {
                try writeStandardOutputLine(format.padding(toLength: 11, withPad: " ", startingAt: 0)
                                            + figures.map { "\($0.0) \(BenchAnalyze.jsonNumber($0.1))" }.joined(separator: ", "))
            }
        }
        return .ok
    }

    // MARK: Generated inputs

    /// Writes an input of about `bytes` bytes; returns its size.
    static func generate(_ format: String, path: String, bytes: UInt64) throws -> UInt64 {
        if format == "fxt" {
            let writer: TraceFileWriter
            do { writer = try TraceFileWriter(path: path) } catch { throw CLIError("\(error)") }
            var generator = SyntheticTrace(seed: 7)
            _ = generator.write(to: writer, targetBytes: bytes)
            do { return try writer.close() } catch { throw CLIError("\(error)") }
        }
        guard let file = FileHandle(forWritingAtPath: path) ?? (FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil) else {
            throw CLIError("cannot write '\(path)'")
        }
        defer { try? file.close() }
        var written: UInt64 = 0
        var chunk: [UInt8] = []
        func flush() { file.write(Data(chunk)); written += UInt64(chunk.count); chunk.removeAll(keepingCapacity: true) }
        let period: Int64 = 16_666_667
        var frame: Int64 = 0
        switch format {
        case "framestats":
            chunk += Array("** Graphics info for pid 42 [com.example.bench] **\n\nWindow: com.example.bench/.Main\n---PROFILEDATA---\n".utf8)
            chunk += Array("Flags,FrameTimelineVsyncId,IntendedVsync,Vsync,InputEventId,HandleInputStart,AnimationStart,PerformTraversalsStart,DrawStart,FrameDeadline,FrameStartTime,FrameInterval,SyncQueued,SyncStart,IssueDrawCommandsStart,SwapBuffers,FrameCompleted,DequeueBufferDuration,QueueBufferDuration,GpuCompleted,SwapBuffersCompleted,DisplayPresentTime,CommandSubmissionCompleted,\n".utf8)
            while written + UInt64(chunk.count) < bytes {
                let v = 1_000_000_000 + frame * period
                let done = v + (frame % 97 == 0 ? 2 * period : period / 2)
                let row: [Int64] = [0, frame, v, v, 0, v + 100_000, v + 200_000, v + 1_000_000, v + 2_000_000, v + period, v, period,
                                    v + 3_000_000, v + 3_100_000, v + 3_500_000, done - 1_000_000, done - 500_000, 100_000, 100_000,
                                    done, done - 600_000, v + 2 * period + (done - v) / period * period, done - 700_000]
                chunk += Array((row.map(String.init).joined(separator: ",") + ",\n").utf8)
                frame += 1
                if chunk.count > 1 << 20 { flush() }
            }
            chunk += Array("---PROFILEDATA---\n".utf8)
        case "perfetto":
            var proto = ProtoWriter()
            let descriptor = ProtoWriter.message { m in
                m.varint(1, 11)
                m.bytes(4, ProtoWriter.message { t in t.varint(1, 42); t.varint(2, 42); t.string(5, "com.example.bench") })
            }
            proto.bytes(1, ProtoWriter.message { p in p.varint(10, 2); p.bytes(60, descriptor) })
            chunk += proto.data
            var cookie: Int64 = 1
            while written + UInt64(chunk.count) < bytes {
                var packets = ProtoWriter()
                let v = 1_000_000_000 + frame * period
                let late = frame % 97 == 0 ? period : 0
                func packet(_ ts: Int64, _ sequence: Int64, _ body: (inout ProtoWriter) -> Void) {
                    packets.bytes(1, ProtoWriter.message { p in p.varint(8, UInt64(ts)); p.varint(10, UInt64(sequence)); body(&p) })
                }
                func timeline(_ ts: Int64, _ kind: UInt32, _ fields: (inout ProtoWriter) -> Void) {
                    packet(ts, 3) { p in p.bytes(76, ProtoWriter.message { e in e.bytes(kind, ProtoWriter.message(fields)) }) }
                }
                for (ts, type) in [(v + 100_000, UInt64(1)), (v + period / 2 + late, 2)] {
                    packet(ts, 2) { p in
                        p.bytes(11, ProtoWriter.message { e in e.varint(9, type); e.varint(11, 11); if type == 1 { e.string(23, "Choreographer#doFrame \(1000 + frame)") } })
                    }
                }
                let token = 1000 + frame, display = 900_000 + frame
                let c = cookie; cookie += 4
                timeline(v, 3) { e in e.varint(1, UInt64(c)); e.varint(2, UInt64(token)); e.varint(3, UInt64(display)); e.varint(4, 42); e.string(5, "bench#0") }
                timeline(v + period, 5) { e in e.varint(1, UInt64(c)) }
                timeline(v, 4) { e in
                    e.varint(1, UInt64(c + 1)); e.varint(2, UInt64(token)); e.varint(3, UInt64(display)); e.varint(4, 42); e.string(5, "bench#0")
                    e.varint(6, late > 0 ? 2 : 1); e.varint(9, late > 0 ? 64 : 1); e.varint(10, 1)
                }
                timeline(v + period / 2 + late, 5) { e in e.varint(1, UInt64(c + 1)) }
                timeline(v + period + late, 1) { e in e.varint(1, UInt64(c + 2)); e.varint(2, UInt64(display)); e.varint(3, 600) }
                timeline(v + 2 * period + late, 5) { e in e.varint(1, UInt64(c + 2)) }
                timeline(v + period + late, 2) { e in e.varint(1, UInt64(c + 3)); e.varint(2, UInt64(display)); e.varint(3, 600); e.varint(4, 1); e.varint(7, 1) }
                timeline(v + 2 * period + late, 5) { e in e.varint(1, UInt64(c + 3)) }
                chunk += packets.data
                frame += 1
                if chunk.count > 1 << 20 { flush() }
            }
        default:   // xctrace
            chunk += Array("<?xml version=\"1.0\"?>\n<trace-query-result>\n<node><schema name=\"display-surface-swap\"><col><mnemonic>start</mnemonic></col><col><mnemonic>process</mnemonic></col></schema>\n".utf8)
            chunk += Array("<row><start-time id=\"1\">1000000000</start-time><process id=\"2\" fmt=\"Bench (42)\"><pid id=\"3\">42</pid></process></row>\n".utf8)
            frame = 1
            let swapsEnd = bytes / 16
            while written + UInt64(chunk.count) < swapsEnd {
                chunk += Array("<row><start-time id=\"t\(frame)\">\(1_000_000_000 + frame * period)</start-time><process ref=\"2\"/></row>\n".utf8)
                frame += 1
                if chunk.count > 1 << 20 { flush() }
            }
            chunk += Array("</node>\n<node><schema name=\"time-profile\"><col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>stack</mnemonic></col></schema>\n".utf8)
            chunk += Array("<row><sample-time id=\"s0\">1000000000</sample-time><thread id=\"4\" fmt=\"Main Thread 0x1 (Bench, pid: 42)\"><tid id=\"5\">1</tid><process ref=\"2\"/></thread><tagged-backtrace id=\"6\"><backtrace id=\"7\"><frame id=\"8\" name=\"Bench.work()\" addr=\"0x100004a10\"><binary id=\"9\" name=\"Bench\" load-addr=\"0x100000000\"/></frame><frame id=\"10\" name=\"main\" addr=\"0x100001000\"><binary ref=\"9\"/></frame></backtrace></tagged-backtrace></row>\n".utf8)
            var sample: Int64 = 1
            while written + UInt64(chunk.count) < bytes {
                chunk += Array("<row><sample-time id=\"s\(sample)\">\(1_000_000_000 + sample * 1_000_000)</sample-time><thread ref=\"4\"/><tagged-backtrace ref=\"6\"/></row>\n".utf8)
                sample += 1
                if chunk.count > 1 << 20 { flush() }
            }
            chunk += Array("</node>\n</trace-query-result>\n".utf8)
        }
        flush()
        return written
    }
}

/// The protobuf wire format, written: enough to generate Perfetto traces for the benchmark.
struct ProtoWriter {
    var data: [UInt8] = []

    static func message(_ build: (inout ProtoWriter) -> Void) -> [UInt8] {
        var writer = ProtoWriter()
        build(&writer)
        return writer.data
    }

    mutating func rawVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 { data.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        data.append(UInt8(v))
    }

    mutating func varint(_ field: UInt32, _ value: UInt64) { rawVarint(UInt64(field) << 3); rawVarint(value) }
    mutating func bytes(_ field: UInt32, _ value: [UInt8]) { rawVarint(UInt64(field) << 3 | 2); rawVarint(UInt64(value.count)); data += value }
    mutating func string(_ field: UInt32, _ value: String) { bytes(field, Array(value.utf8)) }
}
