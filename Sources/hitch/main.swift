#if canImport(Glibc)
import Glibc
#endif
import HitchAnalysis

// Wiring only: every subcommand lives in Commands/, one file each. Add yours to this list.
let subcommands: [SubcommandEntry] = [
    InfoCommand.entry,
    AnalyzeCommand.entry,
    CheckCommand.entry,
    DiffCommand.entry,
    ReportCommand.entry,
    ExportCommand.entry,
    ImportCommand.entry,
    RecordCommand.entry,
    BenchCommand.entry,
    BudgetCommand.entry,
    GenerateCommand.entry,
    DemoCommand.entry,
    HistoryCommand.entry,
]

/// The version `hitch --version` prints.
let hitchVersion = "0.1.0"

@MainActor func topLevelHelp() -> String {
    var text = """
    hitch: find the frames your app shows late, and why.

    USAGE: hitch <subcommand> [options]

    OPTIONS:
      --version               Show the version.
      -h, --help              Show this help.

    SUBCOMMANDS:

    """
    let width = subcommands.map { $0.name.count }.max() ?? 0
    for command in subcommands {
        text += "  " + command.name + String(repeating: " ", count: width - command.name.count + 2) + command.summary + "\n"
    }
    text += "\nSee 'hitch help <subcommand>' or 'hitch <subcommand> --help' for details."
    return text
}

/// Exits with `code` once standard output is flushed; output that could not be written is exit 2.
func finish(_ code: ExitCode) -> Never {
    do {
        try flushStandardOutput()
    } catch {
        writeError("\(error)")
        exit(ExitCode.usageOrInput.rawValue)
    }
    exit(code.rawValue)
}

@MainActor func subcommand(named word: String) throws -> SubcommandEntry {
    guard let command = subcommands.first(where: { $0.name == word }) else {
        let closest = Spelling.closest(to: word, among: subcommands.map(\.name), limit: 1)
        throw CLIError("unknown subcommand '\(word)'" + (closest.isEmpty ? "" : "; did you mean '\(closest[0])'?")
                       + " (subcommands: \(subcommands.map(\.name).joined(separator: ", ")); see 'hitch --help')")
    }
    return command
}

let words = Array(CommandLine.arguments.dropFirst())
do {
    guard let first = words.first else {
        // Bare `hitch` is a usage error: the usage goes to stderr, as swift-argument-parser does.
        writeStandardError(topLevelHelp() + "\n")
        finish(.usageOrInput)
    }
    switch first {
    case "--help", "-h":
        print(topLevelHelp())
        finish(.ok)
    case "--version":
        print(hitchVersion)
        finish(.ok)
    case "help":
        // `hitch help`, `hitch help analyze`, `hitch help record feed`.
        let topic = Array(words.dropFirst())
        guard let name = topic.first else { print(topLevelHelp()); finish(.ok) }
        let command = try subcommand(named: name)
        if topic.count >= 2 {
            var nested = Arguments(Array(topic.dropFirst()) + ["--help"])
            finish(try command.run(&nested))
        }
        print(command.help)
        finish(.ok)
    default:
        break
    }
    if first.hasPrefix("-") {
        let closest = Spelling.closest(to: first, among: ["--help", "--version"], limit: 1)
        throw CLIError("unknown option '\(first)'" + (closest.isEmpty ? "" : "; did you mean '\(closest[0])'?") + " (see 'hitch --help')")
    }
    let command = try subcommand(named: first)
    var arguments = Arguments(Array(words.dropFirst()))
    // `hitch bench analyze --help` is the nested benchmark's help, which `dispatch` prints.
    if !(command.hasNestedSubcommands && arguments.startsWithWord), try arguments.wantsHelp(first) {
        print(command.help)
        finish(.ok)
    }
    finish(try command.run(&arguments))
} catch let error as CLIError {
    writeError(error.message)
    finish(error.exitCode)
} catch {
    writeError("\(error)")
    finish(.usageOrInput)
}
