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


var words = Array(CommandLine.arguments.dropFirst())
guard let first = words.first else {
    printTopLevelHelp()
    exit(ExitCode.usageOrInput.rawValue)
}
if first == "--help" || first == "-h" || first == "help" {
    printTopLevelHelp()
    exit(ExitCode.ok.rawValue)
}
guard let command = subcommands.first(where: { $0.name == first }) else {
    writeError("unknown subcommand '\(first)'; expected one of: \(subcommands.map(\.name).joined(separator: ", "))")
    exit(ExitCode.usageOrInput.rawValue)
}
var arguments = Arguments(Array(words.dropFirst()))
if arguments.wantsHelp() {
    print(command.help)
    exit(ExitCode.ok.rawValue)
}
do {
    let code = try command.run(&arguments)
    exit(code.rawValue)
} catch let error as CLIError {
    writeError(error.message)
    exit(error.exitCode.rawValue)
} catch {
    writeError("\(error)")
    exit(ExitCode.usageOrInput.rawValue)
}
