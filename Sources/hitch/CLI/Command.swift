import HitchAnalysis

// The shape every subcommand shares, in the manner of swift-argument-parser:
// `hitch <subcommand> --help` prints usage, arguments, options and an example.

/// Process exit codes: 0 ok, 1 a check failed, 2 bad usage or unreadable input.
enum ExitCode: Int32 {
    case ok = 0
    case checkFailed = 1
    case usageOrInput = 2
}

/// A failure the CLI turns into one line on stderr and an exit code.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var exitCode: ExitCode
    init(_ message: String, exitCode: ExitCode = .usageOrInput) {
        self.message = message
        self.exitCode = exitCode
    }
    var description: String { message }
}

protocol Subcommand: SendableMetatype {
    /// The word after `hitch`, e.g. "analyze".
    static var name: String { get }
    /// One line for `hitch --help`.
    static var summary: String { get }
    /// Full help: usage, arguments, options, example.
    static var help: String { get }
    /// Runs with the arguments after the subcommand name.
    static func run(_ arguments: inout Arguments) throws -> ExitCode
    /// True for a command whose first word names a nested subcommand with its own help (`record`, `bench`, `history`).
    static var hasNestedSubcommands: Bool { get }
}

extension Subcommand {
    static var hasNestedSubcommands: Bool { false }
}

/// A registered subcommand, erased to plain values (the registry in main.swift lists these).
struct SubcommandEntry: Sendable {
    var name: String
    var summary: String
    var help: String
    var run: @Sendable (inout Arguments) throws -> ExitCode
    var hasNestedSubcommands: Bool
}

extension Subcommand {
    static var entry: SubcommandEntry {
        SubcommandEntry(name: name, summary: summary, help: help, run: { try run(&$0) },
                        hasNestedSubcommands: hasNestedSubcommands)
    }
}

/// Runs the nested subcommand named by the first positional word (`hitch record feed …`).
func dispatch(_ arguments: inout Arguments, among children: [SubcommandEntry], parent: String) throws -> ExitCode {
    let names = children.map(\.name).joined(separator: ", ")
    guard let word = arguments.popFirstWord() else {
        throw CLIError("'hitch \(parent)' needs one of: \(names)")
    }
    guard let child = children.first(where: { $0.name == word }) else {
        let closest = Spelling.closest(to: word, among: children.map(\.name), limit: 1)
        throw CLIError("unknown \(parent) '\(word)'" + (closest.isEmpty ? "" : "; did you mean '\(closest[0])'?") + " (expected one of: \(names))")
    }
    if try arguments.wantsHelp(parent + " " + child.name) {
        print(child.help)
        return .ok
    }
    return try child.run(&arguments)
}
