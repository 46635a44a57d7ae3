#if canImport(Glibc)
import Glibc
#endif
import HitchAnalysis
import HitchImport
import HitchReader
import HitchTrace

// The one path for each CLI chore the analysis commands share (analyze, check, diff, report):
// the common options, loading inputs (checked before anything is read, errors naming the file and
// the next step), and writing output (through `OutputFile`).

struct CommandContext {
    /// The subcommand's name, for messages ("analyze").
    let command: String
    var options: AnalyzerOptions
    /// `-o FILE`; nil or "-" is standard output.
    var output: String?
    /// `--input-format`: how to read every trace (nil: recognised per file).
    var inputFormat: String? = nil
    /// `--process`: the app to read from a Perfetto input with several.
    var process: PerfettoProcessSelection? = nil
    /// True when `--refresh` named the rates (the default list is implicit): a gate then refuses a
    /// rate it cannot judge instead of leaving it out.
    var refreshRatesGiven = false

    /// The options' help lines, the same in every command that takes them.
    static let optionsHelp = """
      --refresh LIST         Refresh rates in Hz to judge at, comma separated (default 60,120).
      --device-budget SIZE   Device memory budget for the LLM memory figures: 1.2GB, 800MB, 6GiB (default 1.2GB).
      --full-names           Show Swift functions with their full demangled names (default: simplified,
                             as Instruments shows them: module, type and function, no specialization noise).
      --hang-ms MS           The shortest stretch away from the frame loop that is a hang (default 250, Apple's).
      --brief-hang-ms MS     The shortest that is brief unresponsiveness, below a hang (default 100, Apple's).
    \(TraceInputs.optionHelp)
    """

    /// Parses `--refresh`, `--device-budget`, `--full-names` and (when `takesOutput`) `-o`.
    static func parse(_ arguments: inout Arguments, command: String, takesOutput: Bool = true) throws -> CommandContext {
        var options = AnalyzerOptions()
        let refreshList = try arguments.option("--refresh")
        if let refreshList { options.refreshRatesHz = try Quantities.rates(refreshList, option: "--refresh") }
        if let size = try arguments.option("--device-budget") {
            options.deviceBudgetBytes = try Quantities.bytes(size, option: "--device-budget")
        }
        if let old = try arguments.option("--device-budget-mb") {
            throw CLIError("option '--device-budget-mb' is now '--device-budget SIZE' in every command: use --device-budget \(old)MB")
        }
        options.fullSymbolNames = arguments.flag("--full-names")
        options.hangThresholdMs = try arguments.number("--hang-ms", in: 1.0...3_600_000, default: AnalyzerOptions.defaultHangThresholdMs)
        options.briefHangThresholdMs = try arguments.number("--brief-hang-ms", in: 1.0...3_600_000, default: min(AnalyzerOptions.defaultBriefHangThresholdMs, options.hangThresholdMs))
        if options.briefHangThresholdMs > options.hangThresholdMs {
            throw CLIError("option '--brief-hang-ms' (\(Quantities.countText(options.briefHangThresholdMs))) must not be above '--hang-ms' (\(Quantities.countText(options.hangThresholdMs))): brief unresponsiveness is the tier below a hang")
        }
        let inputFormat = try arguments.option("--input-format").map { try TraceInputs.checkedFormat($0) }
        let process = try TraceInputs.processSelection(&arguments)
        let output = takesOutput ? try arguments.output() : nil
        return CommandContext(command: command, options: options, output: output, inputFormat: inputFormat, process: process,
                              refreshRatesGiven: refreshList != nil)
    }

    /// A gate (diff) refuses a rate `--refresh` asked for that the analysis could not judge (a replay
    /// of frames without work times), with the reason; exit 2.
    func requireAskedRates(_ analysis: Analysis, path: String) throws {
        guard refreshRatesGiven, let reason = analysis.replayUnavailable else { return }
        let missing = options.refreshRatesHz.map(Analyzer.rateKey).filter { analysis.hitches[$0] == nil }
        guard !missing.isEmpty else { return }
        throw CLIError("'\(path)' cannot be judged at \(missing.map { $0 + " Hz" }.joined(separator: ", ")): \(reason)")
    }

    // MARK: Evidence

    /// The help lines of the evidence options, the same in every command that gates on figures.
    static let evidenceHelp = """
      --min-frames N         Refuse a trace with fewer judged frames (default 1: a trace without frames
                             is refused; 0 accepts one, e.g. a decode-only trace).
      --allow-cut-short      Judge a trace cut short (a killed recorder: its file ends inside a record, or lacks
                             the end-of-recording marker it promised) instead of refusing it.
      --accept-disagreement  Grade (check) or compare (diff) an import although Hitch and the recording platform
                             disagree on more than 5% of its frames (docs/IMPORT.md "Trust"); without it, check
                             fails and diff gives no verdict.
    """

    /// Parses `--min-frames`, `--allow-cut-short` and `--accept-disagreement` (check, diff, history add).
    static func evidenceRule(_ arguments: inout Arguments) throws -> EvidenceRule {
        EvidenceRule(minimumFrames: try arguments.number("--min-frames", in: 0...1_000_000_000, default: EvidenceRule.defaultMinimumFrames),
                     allowCutShort: arguments.flag("--allow-cut-short"), acceptPlatformDisagreement: arguments.flag("--accept-disagreement"))
    }

    /// Refuses (exit 2, one line) an analysis with too little to judge.
    static func requireEvidence(_ analysis: Analysis, _ rule: EvidenceRule, what: String = "trace") throws {
        if let refusal = rule.refusal(of: analysis, what: what) { throw CLIError(refusal) }
        warnIfCutShort(analysis)
    }

    // MARK: Inputs

    /// Checks every trace path before any is read: it exists, is a readable regular file, and is
    /// not given twice. Traces of other tools are imported when read (`TraceInputs`).
    func checkTraces(_ paths: [String]) throws {
        var seen: [(String, FileIdentity)] = []
        for path in paths {
            try TraceFiles.check(path, allowingImports: true)
            if let identity = FileIdentity(path) {
                if let earlier = seen.first(where: { $0.1 == identity }) {
                    throw CLIError("'\(path)' is the same file as '\(earlier.0)': each trace counts once; give each run once")
                }
                seen.append((path, identity))
            }
        }
    }

    /// Analyzes traces as runs of one analysis (several traces = merged runs). Runs of different
    /// workloads or refresh rates are refused unless `merge` is set.
    func analyze(_ paths: [String], merge: Bool = false) throws -> Analysis {
        try checkTraces(paths)
        let inputs = try TraceInputs.prepare(paths, forced: inputFormat, process: process)
        defer { TraceInputs.cleanUp(inputs) }
        if paths.count > 1, !merge {
            let identities = try inputs.map { ($0.path, try TraceFiles.workloadIdentity($0.fxtPath, name: $0.path)) }
            if let different = identities.first(where: { $0.1 != identities[0].1 }) {
                throw CLIError("'\(identities[0].0)' (\(identities[0].1)) and '\(different.0)' (\(different.1)) are not runs of one workload: "
                               + "compare them with 'hitch diff \(identities[0].0) \(different.0)', or pass --merge to merge them anyway")
            }
        }
        return try analyzeMerged(inputs)
    }

    /// One analysis per trace (what `diff` compares).
    func analyzeEach(_ paths: [String]) throws -> [Analysis] {
        try checkTraces(paths)
        let inputs = try TraceInputs.prepare(paths, forced: inputFormat, process: process)
        defer { TraceInputs.cleanUp(inputs) }
        return try inputs.map { try analyzeMerged([$0]) }
    }

    private func analyzeMerged(_ inputs: [TraceInputs.Prepared]) throws -> Analysis {
        try analyzer(reading: inputs).finish()
    }

    /// An analyzer that has read `inputs` as its runs (errors name the file).
    func analyzer(reading inputs: [TraceInputs.Prepared]) throws -> Analyzer {
        let progress = ProgressBar(label: "analyzing", runs: inputs.count)
        defer { progress.finish() }
        var analyzer = Analyzer(options: options)
        for (index, input) in inputs.enumerated() {
            let path = input.path
            do {
                var reader = try TraceReader(path: input.fxtPath)
                try analyzer.add(&reader, path: path) { progress.update(run: index, fraction: $0) }
                if reader.warningCount > 0 {
                    analyzer.addWarning("\(path): \(reader.warningCount) records skipped (first: \(reader.warnings.first?.description ?? "?"))")
                }
            } catch let error as TraceReadError {
                throw TraceFiles.error(error, path: path)
            }
        }
        return analyzer
    }

    /// Says on stderr, where a reader sees it (not only in the report's last lines), which runs were cut short.
    static func warnIfCutShort(_ analysis: Analysis) {
        for run in analysis.runs where run.isCutShort {
            let how = run.endedCleanly ? "no end-of-recording marker: the app was killed or crashed while recording"
                : "its file ends inside a record\(run.cutShortAtByte.map { " at byte \($0)" } ?? "")"
            writeWarning("'\(run.path)' was cut short (\(how)): the figures cover only what was written before the cut")
        }
    }

    // MARK: Output

    /// Writes the command's output to `-o` (or standard output), refusing to overwrite an input.
    func write(_ text: String, inputs: [String]) throws {
        try writeOutput(text, to: output, inputs: inputs)
    }
}

/// Checks and errors for trace files, shared by every command that reads one.
enum TraceFiles {
    /// One line naming the file and what to do, for a path that cannot be a trace.
    /// With `allowingImports`, a file another tool wrote (Chrome JSON, framestats, ...) passes: the
    /// analysis commands import it (`TraceInputs`).
    static func check(_ path: String, allowingImports: Bool = false) throws {
        if path == "-" { throw CLIError("'-': traces are read from files, not standard input; save it to a file first") }
        guard let kind = FileKind(path) else {
            let code = errno
            throw CLIError(code == ENOENT ? "'\(path)': no such file" : "'\(path)': cannot read it (\(String(cString: strerror(code))))")
        }
        switch kind {
        case .directory:
            throw CLIError("'\(path)' is a directory: give the trace files in it (e.g. \(path.hasSuffix("/") ? path : path + "/")*.fxt)")
        case .regular:
            break
        case .other:
            throw CLIError("'\(path)' is not a regular file (a device, pipe or socket): give a trace file (.fxt)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError("'\(path)': cannot read it (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &head, head.count)
        guard count > 0 else {
            // /proc and /sys files report size 0 and hold text, not traces.
            throw CLIError(path.hasPrefix("/proc/") || path.hasPrefix("/sys/")
                           ? "'\(path)' is a kernel file, not a trace: give a trace file (.fxt)"
                           : "'\(path)' is empty: not a trace (record one with 'hitch record' or the HitchTrace library)")
        }
        if !allowingImports, ImportFormat.sniff(head.prefix(count)) == .chrome {
            throw CLIError("'\(path)' is Chrome JSON, not an FXT trace: run 'hitch import chrome \(path) -o \(fxtName(path))' and use that file")
        }
    }

    /// "trace.json" -> "trace.fxt".
    static func fxtName(_ path: String) -> String {
        (path.hasSuffix(".json") ? String(path.dropLast(5)) : path) + ".fxt"
    }

    /// The reader's error as one line naming the file.
    static func error(_ error: TraceReadError, path: String) -> CLIError {
        switch error {
        case .cannotOpen: CLIError(error.description)
        case .badMagic(_, let found) where error.offset == 0:
            CLIError("'\(path)' is not an FXT trace (its first 8 bytes are 0x\(String(found, radix: 16)), not the FXT magic record) nor one Hitch imports "
                     + "(Chrome JSON, Perfetto, Instruments XML, Android framestats: 'hitch import --help'); traces come from 'hitch record' or the HitchTrace library")
        default: CLIError("'\(path)': \(error.description)")
        }
    }

    /// The metadata keys that make two recordings runs of one workload (docs/METRICS.md "Merging runs").
    static let identityKeys: [MetadataKey] = [.workload, .variant, .weights, .buffering, .parameterCount, .refreshRateHz]

    /// What workload a trace recorded, from the metadata at its start: "workload=feed, variant=naive, refreshRateHz=120".
    static func workloadIdentity(_ fxtPath: String, name path: String) throws -> String {
        var metadata: [String: String] = [:]
        do {
            var reader = try TraceReader(path: fxtPath)
            var events = 0
            // The recorder writes metadata first; stop at the first frame (or after a bounded scan).
            while events < 200_000, let event = try reader.next() {
                events += 1
                if case .frameBegan = event.payload { break }
            }
            metadata = reader.metadata
        } catch {
            throw TraceFiles.error(error, path: path)
        }
        let parts = identityKeys.compactMap { key -> String? in
            guard var value = metadata[key] else { return nil }
            if key == .refreshRateHz, let rate = Double(value) { value = Analyzer.rateKey(rate) }
            return "\(key.name)=\(value)"
        }
        return parts.isEmpty ? "no workload metadata" : parts.joined(separator: ", ")
    }

    /// Refuses to compare runs of different workloads (metadata `workload`), or recorded at
    /// different refresh rates (`refreshRateHz`) unless `acrossRates`: `hitch diff`'s rule, on the
    /// keys of the merge rule above that a comparison does not vary. A run without the key (an
    /// import from another tool) is compared as it is.
    static func checkComparable(_ runs: [(path: String, analysis: Analysis)], acrossWorkloads: Bool, acrossRates: Bool) throws {
        guard let first = runs.first else { return }
        func rate(_ analysis: Analysis) -> String? {
            analysis.metadata[MetadataKey.refreshRateHz].map { Double($0).map(Analyzer.rateKey) ?? $0 }
        }
        for other in runs.dropFirst() {
            if !acrossWorkloads, let a = first.analysis.metadata[MetadataKey.workload], let b = other.analysis.metadata[MetadataKey.workload], a != b {
                throw CLIError("'\(first.path)' (workload=\(a)) and '\(other.path)' (workload=\(b)) record different workloads: their figures do not compare; "
                               + "diff runs of one workload, or pass --cross-workload to compare them anyway")
            }
            if !acrossRates, let a = rate(first.analysis), let b = rate(other.analysis), a != b {
                throw CLIError("'\(first.path)' was recorded at \(a) Hz and '\(other.path)' at \(b) Hz: hitch figures at different rates do not compare; "
                               + "diff runs recorded at one rate, or pass --cross-rate to compare them anyway")
            }
        }
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal (never in CI logs).
final class ProgressBar {
    private let label: String
    private let runs: Int
    private let enabled: Bool
    private var lastDrawn = -1
    private var drew = false

    init(label: String, runs: Int) {
        self.label = label
        self.runs = max(1, runs)
        enabled = standardErrorIsTerminal
    }

    func update(run: Int, fraction: Double) {
        guard enabled else { return }
        let overall = (Double(run) + min(max(fraction, 0), 1)) / Double(runs)
        let percent = Int(overall * 100)
        guard percent != lastDrawn else { return }
        lastDrawn = percent
        let width = 30
        let filled = Int(overall * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let which = runs > 1 ? " trace \(run + 1)/\(runs)" : ""
        writeStandardError("\r\(label)\(which) [\(bar)] \(percent)%")
        drew = true
    }

    func finish() {
        if drew { writeStandardError("\r" + String(repeating: " ", count: 60) + "\r") }
    }
}
