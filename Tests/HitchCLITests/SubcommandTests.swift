import Foundation
import Testing

/// The conventions every subcommand shares, as swift-argument-parser has them: `--version`, help
/// with its sections for every registered command, usage on a bare `hitch`, did-you-mean.
@Suite struct SubcommandTests {
    @Test func versionHelpAndUsage() throws {
        let version = try HitchCLI.run(["--version"])
        #expect(version.status == 0)
        #expect(!version.stdout.isEmpty)
        let help = try HitchCLI.run(["help", "analyze"])
        #expect(help.stdout.hasPrefix("USAGE: hitch analyze"))
        #expect(try HitchCLI.run(["help", "record", "feed"]).stdout.hasPrefix("USAGE: hitch record feed"))
        let bare = try HitchCLI.run([])
        #expect(bare.status == 2)
        #expect(bare.stdout.isEmpty)
        #expect(bare.stderr.contains("USAGE: hitch <subcommand>"))
    }

    @Test func didYouMean() throws {
        let subcommand = try HitchCLI.run(["anlyze", tuned])
        #expect(subcommand.status == 2)
        #expect(subcommand.stderr.contains("did you mean 'analyze'?"))
        let option = try HitchCLI.run(["analyze", tuned, "--refrsh", "60"])
        #expect(option.status == 2)
        #expect(option.stderr.contains("did you mean '--refresh'?"), "\(option.stderr)")
        #expect(try HitchCLI.run(["bench", "analyse"]).stderr.contains("did you mean 'analyze'?"))
    }

    /// Every registered command, as `hitch --help` and each parent's help list them (not a list kept
    /// here), has help with the sections; one that takes positional arguments explains them.
    @Test func everySubcommandsHelpHasTheSections() throws {
        var commands = Self.subcommands(inHelp: try HitchCLI.run(["--help"]).stdout)
        var checked: [String] = []
        while let command = commands.first {
            commands.removeFirst()
            checked.append(command)
            let r = try HitchCLI.run(command.split(separator: " ").map(String.init) + ["--help"])
            #expect(r.status == 0, "\(command)")
            for section in ["USAGE: hitch " + command, "OPTIONS:", "EXAMPLE", "-h, --help"] {
                #expect(r.stdout.contains(section), "\(command) --help lacks \(section)")
            }
            // `USAGE: hitch info TRACE`, `hitch diff BASE NEW`: an upper-case word first names positionals.
            let usagePrefix = "USAGE: hitch " + command
            let usage = r.stdout.split(separator: "\n").first { $0.hasPrefix(usagePrefix) } ?? ""
            let first = usage.dropFirst(usagePrefix.count).split(separator: " ").first ?? ""
            if first.first?.isUppercase == true, first.allSatisfy({ $0.isUppercase || $0 == "." }) {
                #expect(r.stdout.contains("ARGUMENTS:"), "\(command) --help lacks ARGUMENTS:")
            }
            commands += Self.subcommands(inHelp: r.stdout).map { command + " " + $0 }
        }
        // The commands a hand-kept list once missed are among those found.
        for command in ["history", "history add", "bench ui", "bench import", "record feed"] {
            #expect(checked.contains(command), "\(command) is not listed in its parent's help")
        }
    }

    /// The names of a help's subcommand section (`subcommandSection`): a heading whose lines are each
    /// two spaces, a lower-case name, two spaces or more and a summary, with no line wrapped.
    static func subcommands(inHelp help: String) -> [String] {
        var names: [String] = [], section: [String] = [], sectionHolds = true
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) + [Substring("")] {
            if line.hasPrefix("  ") {
                let name = line.dropFirst(2).prefix { $0 != " " }, rest = line.dropFirst(2 + name.count)
                let isEntry = !name.isEmpty && name.allSatisfy { $0.isLowercase && $0.isLetter } && rest.hasPrefix("  ")
                    && !rest.drop(while: { $0 == " " }).isEmpty
                sectionHolds = sectionHolds && isEntry
                section.append(String(name))
                continue
            }
            if sectionHolds, section.count > 1, !section.contains("hitch") { names += section }
            section = []
            sectionHolds = true
        }
        return names
    }
}
