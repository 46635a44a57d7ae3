#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HitchAnalysis
import HitchHistory
import HitchReport

// `hitch merge SUMMARY...`: the reduce step of a fleet run. Trace summaries (`hitch summarize`) and
// fleet summaries (its own `--format state`) merge into the fleet's figures, exactly, in any order
// and any grouping (docs/FLEET.md); the figures can go into the history store as one run.
enum MergeCommand: Subcommand {
    static let name = "merge"
    static let summary = "Merge trace summaries into a fleet's figures (text, JSON, HTML, history)."
    static let help = """
    USAGE: hitch merge SUMMARY... [--by DIM[,DIM...]]... [--format text|json|html|state] [-o FILE]
                       [--db PATH|URL --commit SHA [--branch B] [--machine NAME] [--tag key=value]...]

    Merges summaries into the fleet's figures: the hitch time ratio over all animating time at every
    rate, by cause, frame-time percentiles from the merged sketches, the heaviest offenders, decode;
    how the traces' own ratios are spread; the same broken down by dimension; and the worst traces.
    Merging is exact: the figures equal 'hitch analyze' of every trace as runs of one analysis, in
    any order and any grouping of partial merges (docs/FLEET.md "Merging", which also says where they
    differ by definition: a session split over traces, traces at different rates, machine peaks).

    ARGUMENTS:
      SUMMARY                Files from 'hitch summarize' or 'hitch merge --format state', or directories
                             of them (every *.json inside, sorted by name).

    OPTIONS:
      --by DIM[,DIM...]      A breakdown (repeatable): --by appVersion,device gives one row per pair of
                             values (default: workload; appVersion; device; os; appVersion,device; a
                             fleet summary's own groupings when one is given).
      --format FORMAT        text (default), json (the fleet's figures), html (the fleet page), state (a
                             fleet summary, to merge again).
      -o, --output FILE      Write to FILE (- for standard output, the default).
      --title TEXT           html: the page title (default "Fleet of N traces").
      --worst-reports DIR    html: link the worst traces to DIR/worst-001.html, … (DIR relative to the page;
                             the fleet job writes these reports; scripts/fleet.py --worst-reports).
      --worst-report-count N html: how many of those reports there are (default 10).
      --device-budget SIZE   The decode memory budget the figures are judged against (default 1.2GB).
      --db PATH|URL          Also store the fleet's figures as one run: an SQLite file or postgres:// URL
                             (a fleet's shared PostgreSQL; docs/HISTORY.md).
      --commit SHA           With --db: the commit the traces were recorded at (required).
      --branch B             With --db: the branch the run goes on (default fleet, a series of its own
                             beside single runs').
      --machine NAME         With --db: the name stored as the run's machine (default fleet).
      --tag key=value        With --db: any label (repeatable); kind=fleet and traces=N are added.
      -h, --help             Show this help.

    EXAMPLES:
      hitch merge summaries/ --by appVersion,device -o fleet.html --format html
      hitch merge part1.fleet.json part2.fleet.json --format json -o fleet.json
      hitch merge summaries/ --db "$HITCH_DB" --commit "$(git rev-parse HEAD)"
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", ["text", "json", "html", "state"], default: "text")
        let by = try arguments.options("--by").map(groupingOption)
        let worstReports = try arguments.option("--worst-reports")
        let worstReportCount = try arguments.number("--worst-report-count", in: 0...FleetSummary.worstTraceLimit, default: 10)
        let title = try arguments.option("--title")
        let deviceBudget = try arguments.option("--device-budget").map { try Quantities.bytes($0, option: "--device-budget") }
        let history = try HistoryTarget.parse(&arguments)
        let output = try arguments.output()
        let inputs = try arguments.positionals(name, count: 1...Int.max, what: "at least one SUMMARY")
        let files = try summaryFiles(inputs)
        let summaries = try files.map(read)
        try refuseTraceSummarizedTwice(summaries, files: files)
        let groupings = by.isEmpty ? (summaries.lazy.compactMap { if case .fleet(let f) = $0 { f.groupings } else { nil } }.first
                                      ?? FleetSummary.defaultGroupings) : by
        for (summary, file) in zip(summaries, files) {
            if case .fleet(let partial) = summary, partial.groupings != groupings {
                throw CLIError("'\(file)' was grouped by \(describe(partial.groupings)), not \(describe(groupings)): fleet summaries grouped differently cannot merge; merge them with the same --by")
            }
        }
        let fleet: FleetSummary
        do {
            guard let merged = try FleetSummary.merged(summaries.map { $0.fleet(groupings: groupings) }) else {
                throw CLIError("no summaries to merge")
            }
            fleet = merged
        } catch let error as SummaryError {
            throw CLIError(error.description)
        }
        let figures = fleet.figures(deviceBudgetBytes: deviceBudget ?? AnalyzerOptions().deviceBudgetBytes)
        let text: String
        switch format {
        case "json": text = try JSONOutput.text(figures)
        case "state": text = String(decoding: try JSONOutput.encoder(pretty: false).encode(fleet), as: UTF8.self) + "\n"
        case "html": text = FleetReport.render(figures, title: title ?? "Fleet of \(Format.count(figures.traces)) traces", worstReports: worstReports.map { ($0, worstReportCount) })
        default: text = FleetTextReport.render(figures)
        }
        try writeOutput(text, to: output, inputs: files)
        if let history { try history.store(fleet: fleet, figures: figures) }
        return .ok
    }

    /// "workload; appVersion,device".
    static func describe(_ groupings: [[String]]) -> String { groupings.map { $0.joined(separator: ",") }.joined(separator: "; ") }

    /// "appVersion,device" -> ["appVersion", "device"].
    static func groupingOption(_ value: String) throws -> [String] {
        let dimensions = value.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) }
        guard !dimensions.isEmpty, !dimensions.contains(where: \.isEmpty) else {
            throw CLIError("option '--by' takes dimension names separated by commas, e.g. --by appVersion,device; got '\(value)'")
        }
        return dimensions
    }

    /// The files named, directories replaced by the *.json files in them (sorted).
    static func summaryFiles(_ inputs: [String]) throws -> [String] {
        var files: [String] = []
        for input in inputs {
            var status = stat()
            guard stat(input, &status) == 0 else { throw CLIError("'\(input)': no such file or directory") }
            guard status.st_mode & S_IFMT == S_IFDIR else { files.append(input); continue }
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: input) } catch {
                throw CLIError("'\(input)': cannot list the directory (\(error.localizedDescription))")
            }
            let found = names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
            guard !found.isEmpty else { throw CLIError("'\(input)' holds no summaries (*.json): write them with 'hitch summarize TRACE... -o \(input)'") }
            files.append(contentsOf: found.map { (input.hasSuffix("/") ? input : input + "/") + $0 })
        }
        return files
    }

    static func read(_ path: String) throws -> SummaryFile {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIError("'\(path)': cannot read it (\(error.localizedDescription))")
        }
        do { return try SummaryFile.decode(data, name: path) } catch { throw CLIError(error.description) }
    }

    /// Two trace summaries of one trace would count it twice.
    static func refuseTraceSummarizedTwice(_ summaries: [SummaryFile], files: [String]) throws {
        var seen: [String: String] = [:]
        for (summary, file) in zip(summaries, files) {
            guard case .trace(let trace) = summary else { continue }
            if let earlier = seen[trace.path] {
                throw CLIError("'\(earlier)' and '\(file)' both summarize '\(trace.path)': each trace counts once; give one summary per trace")
            }
            seen[trace.path] = file
        }
    }
}

/// `--db`, `--commit`, `--branch`, `--machine`, `--tag`: where `hitch merge` stores the fleet's figures.
struct HistoryTarget {
    var location: String
    var commit: String
    var branch: String
    var machine: String
    var tags: [String: String]

    /// Nil without `--db`; the other options need it.
    static func parse(_ arguments: inout Arguments) throws -> HistoryTarget? {
        let location = try arguments.option("--db")
        let commit = try arguments.option("--commit")
        let branch = try arguments.option("--branch")
        let machine = try arguments.option("--machine")
        let tags = try HistoryCommand.tags(&arguments)
        guard let location else {
            if commit != nil || branch != nil || machine != nil || !tags.isEmpty {
                throw CLIError("options --commit, --branch, --machine and --tag say how to store the fleet's figures: give --db PATH|URL too")
            }
            return nil
        }
        guard let commit, !commit.isEmpty else { throw CLIError("storing the fleet's figures (--db) needs --commit SHA") }
        guard branch.map({ !$0.isEmpty }) ?? true else { throw CLIError("option '--branch' must not be empty") }
        return HistoryTarget(location: location, commit: commit, branch: branch ?? "fleet", machine: machine ?? "fleet", tags: tags)
    }

    /// Stores the figures as one run, named by the fleet summary's content: the same traces merged
    /// again store nothing new.
    func store(fleet: FleetSummary, figures: FleetFigures) throws {
        let state = try JSONOutput.encoder(pretty: false).encode(fleet)
        let record = RunIdentity.fleetRun(state: state, figures: figures, commit: commit, branch: branch, machineName: machine, tags: tags,
                                          timeMs: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
        var rest = Arguments(["--db", location])
        let store = try HistoryCommand.openStore(&rest, access: .create)
        defer { store.close() }
        let added = try HistoryCommand.store { () throws(HistoryError) in try store.add(record) }
        writeStandardError(added ? "hitch: stored the fleet's figures as run \(record.id.prefix(12)) (\(record.metrics.count) metrics, commit \(commit), branch \(branch))\n"
                           : "hitch: run \(record.id.prefix(12)) is already stored (the same fleet, commit and machine); nothing written\n")
    }
}
