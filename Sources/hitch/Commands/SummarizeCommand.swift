#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis

// `hitch summarize TRACE...`: one mergeable summary per trace (docs/FLEET.md), the map step of a
// fleet run. A trace that cannot be read is one error line and the rest are still summarized.
enum SummarizeCommand: Subcommand {
    static let name = "summarize"
    static let summary = "Write each trace's mergeable summary (JSON) for 'hitch merge' and fleet runs."
    static let help = """
    USAGE: hitch summarize TRACE... [-o FILE|DIR] [--dimension KEY=VALUE]... [options]

    Analyzes each trace on its own and writes its summary: the totals its figures come from (hitch
    and animating time per rate and per cause, the frame-time sketches, every offender's weight,
    decode totals, hang totals and the longest hangs, counts), its dimensions and its metadata, as JSON of the versioned schema
    docs/summary.schema.json. 'hitch merge' turns any number of summaries into a fleet's figures,
    exactly as if the traces were analyzed together (docs/FLEET.md).
    Dimensions come from the trace's metadata (workload, variant, appVersion, device, os, commit,
    branch, host); --dimension adds or overrides one.
    A trace that cannot be read is reported on one line and the others are still summarized; the
    exit code is then 2.

    ARGUMENTS:
      TRACE                  Trace files (FXT, or another tool's, imported on the way in).

    OPTIONS:
      -o, --output FILE|DIR  Standard output by default (or -): one summary a line, in the order given
                             (JSON Lines). One TRACE: the summary file. Several TRACEs, or an existing
                             directory, or a name ending in '/': the directory to write NAME.summary.json
                             in, one per trace (NAME: the trace's file name less its extension; a name
                             taken by an earlier trace gets -2, -3, ...).
      --dimension KEY=VALUE  A dimension of every trace given (repeatable): --dimension device=pixel-8.
      --as NAME              The name a trace's summary gives it (default its path), once per TRACE in
                             order, e.g. the object-store URL of a trace a fleet job downloaded.
    \(CommandContext.optionsHelp)
      -h, --help             Show this help.

    EXAMPLES:
      hitch summarize Traces/feed-naive-120hz.fxt -o naive.summary.json
      hitch summarize runs/*.fxt -o summaries/ --dimension appVersion=2.4.1
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        var dimensions: [String: String] = [:]
        for pair in try arguments.options("--dimension") {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw CLIError("option '--dimension' takes KEY=VALUE, e.g. --dimension device=pixel-8; got '\(pair)'")
            }
            dimensions[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        let names = try arguments.options("--as")
        let context = try CommandContext.parse(&arguments, command: self.name)
        let paths = try arguments.positionals(self.name, count: 1...Int.max, what: "at least one TRACE")
        guard names.isEmpty || names.count == paths.count else {
            throw CLIError("option '--as' names the traces in order: \(names.count) given for \(paths.count) traces")
        }
        let directory = try outputDirectory(context.output, traces: paths.count)
        var taken: Set<String> = []
        var failed = 0
        for (index, path) in paths.enumerated() {
            do {
                let summary = try summarize(path, as: names.isEmpty ? path : names[index], context: context, dimensions: dimensions)
                let text = String(decoding: try JSONOutput.encoder(pretty: false).encode(summary), as: UTF8.self) + "\n"
                let target = directory.map { $0 + "/" + fileName(for: path, taken: &taken) } ?? context.output
                try writeOutput(text, to: target, inputs: paths)
            } catch let error as CLIError {
                failed += 1
                writeError(error.message)
            } catch {
                failed += 1
                writeError("'\(path)': \(error)")
            }
        }
        if failed > 0 {
            if paths.count > 1 { writeError("\(failed) of \(paths.count) traces could not be summarized (each named above); the others were") }
            return .usageOrInput
        }
        return .ok
    }

    /// One trace's summary, naming the trace `name` (errors name the file).
    static func summarize(_ path: String, as name: String, context: CommandContext, dimensions: [String: String]) throws -> TraceSummary {
        try context.checkTraces([path])
        let inputs = try TraceInputs.prepare([path], forced: context.inputFormat, process: context.process)
        defer { TraceInputs.cleanUp(inputs) }
        let (summary, analysis) = try context.analyzer(reading: inputs).summary(path: name, dimensions: dimensions)
        CommandContext.warnIfCutShort(analysis)
        return summary
    }

    /// The directory summaries go to, or nil for one file, or standard output (one summary a line).
    static func outputDirectory(_ output: String?, traces: Int) throws -> String? {
        guard let output, output != "-" else { return nil }
        var status = stat()
        let isDirectory = stat(output, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
        guard isDirectory || output.hasSuffix("/") || traces > 1 else { return nil }
        if !isDirectory {
            do { try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true) } catch {
                throw CLIError("cannot create the directory '\(output)' for the summaries: \(error.localizedDescription)")
            }
        }
        return output.hasSuffix("/") ? String(output.dropLast()) : output
    }

    /// "feed-naive-120hz.summary.json"; a name an earlier trace took gets "-2", "-3", ...
    static func fileName(for path: String, taken: inout Set<String>) -> String {
        let file = (path as NSString).lastPathComponent
        let stem = (file as NSString).deletingPathExtension.isEmpty ? file : (file as NSString).deletingPathExtension
        var name = stem + ".summary.json"
        var n = 2
        while taken.contains(name) { name = "\(stem)-\(n).summary.json"; n += 1 }
        taken.insert(name)
        return name
    }
}
