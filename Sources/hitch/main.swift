#if canImport(Glibc)
import Glibc
#endif

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
    DemoCommand.entry,
    HistoryCommand.entry,
]

@MainActor func printTopLevelHelp() {
    var text = """
    hitch: find the frames your app shows late, and why.

    USAGE: hitch <subcommand> [options]

    SUBCOMMANDS:

    """
    let width = subcommands.map { $0.name.count }.max() ?? 0
    for command in subcommands {
        text += "  " + command.name + String(repeating: " ", count: width - command.name.count + 2) + command.summary + "\n"
    }
    text += "\nSee 'hitch <subcommand> --help' for details."
    print(text)
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

let words = Array(CommandLine.arguments.dropFirst())
guard let first = words.first else {
    printTopLevelHelp()
    finish(.usageOrInput)
}
if first == "--help" || first == "-h" || first == "help" {
    printTopLevelHelp()
    finish(.ok)
}
guard let command = subcommands.first(where: { $0.name == first }) else {
    writeError("unknown subcommand '\(first)'; expected one of: \(subcommands.map(\.name).joined(separator: ", "))")
    finish(.usageOrInput)
}
var arguments = Arguments(Array(words.dropFirst()))
// `hitch bench analyze --help` is the nested benchmark's help, which `dispatch` prints.
if !(command.hasNestedSubcommands && arguments.startsWithWord), arguments.wantsHelp() {
    print(command.help)
    finish(.ok)
}
do {
    finish(try command.run(&arguments))
} catch let error as CLIError {
    writeError(error.message)
    finish(error.exitCode)
} catch {
    writeError("\(error)")
    finish(.usageOrInput)
}
