// GNU-style argument parsing by hand: `--name value`, `--name=value`, boolean `--flag`,
// `--` ends options. Each accessor names the flag in its error.

struct Arguments {
    private var remaining: [String]

    init(_ arguments: [String]) { remaining = arguments }

    var isEmpty: Bool { remaining.isEmpty }

    /// True when the first word is not an option (a nested subcommand's name or a positional).
    var startsWithWord: Bool { remaining.first.map { !$0.hasPrefix("-") } ?? false }

    /// Removes the first word if it is not an option (a nested subcommand's name).
    mutating func popFirstWord() -> String? {
        guard let first = remaining.first, !first.hasPrefix("-") else { return nil }
        remaining.removeFirst()
        return first
    }

    /// True if `--help` or `-h` is present (anywhere before `--`).
    mutating func wantsHelp() -> Bool {
        flag("--help") || flag("-h")
    }

    /// Removes and returns whether a boolean flag is present.
    mutating func flag(_ name: String) -> Bool {
        let end = remaining.firstIndex(of: "--") ?? remaining.endIndex
        guard let index = remaining[..<end].firstIndex(of: name) else { return false }
        remaining.remove(at: index)
        return true
    }

    /// Removes and returns the value of `--name VALUE` or `--name=VALUE`; the last one wins.
    mutating func option(_ name: String) throws -> String? {
        var value: String?
        var index = 0
        while index < remaining.count, remaining[index] != "--" {
            let word = remaining[index]
            if word == name {
                guard index + 1 < remaining.count, remaining[index + 1] != "--" else {
                    throw CLIError("option '\(name)' needs a value")
                }
                value = remaining[index + 1]
                remaining.removeSubrange(index...(index + 1))
            } else if word.hasPrefix(name + "=") {
                value = String(word.dropFirst(name.count + 1))
                remaining.remove(at: index)
            } else {
                index += 1
            }
        }
        return value
    }

    /// Every value of a repeatable option, in order.
    mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        while let value = try optionFirst(name) { values.append(value) }
        return values
    }

    private mutating func optionFirst(_ name: String) throws -> String? {
        var index = 0
        while index < remaining.count, remaining[index] != "--" {
            let word = remaining[index]
            if word == name {
                guard index + 1 < remaining.count else { throw CLIError("option '\(name)' needs a value") }
                let value = remaining[index + 1]
                remaining.removeSubrange(index...(index + 1))
                return value
            } else if word.hasPrefix(name + "=") {
                remaining.remove(at: index)
                return String(word.dropFirst(name.count + 1))
            }
            index += 1
        }
        return nil
    }

    /// An option parsed as one of `accepted` values.
    mutating func choice(_ name: String, _ accepted: [String], default fallback: String) throws -> String {
        guard let value = try option(name) else { return fallback }
        guard accepted.contains(value) else {
            throw CLIError("option '\(name)' must be one of \(accepted.joined(separator: ", ")); got '\(value)'")
        }
        return value
    }

    /// An option parsed as a number within `range`.
    mutating func number<T: LosslessStringConvertible & Comparable>(_ name: String, in range: ClosedRange<T>, default fallback: T) throws -> T {
        guard let text = try option(name) else { return fallback }
        guard let value = T(text), range.contains(value) else {
            throw CLIError("option '\(name)' must be a number from \(range.lowerBound) to \(range.upperBound); got '\(text)'")
        }
        return value
    }

    /// The positional arguments left once every option has been taken. Fails on any
    /// unrecognised option, so a typo never passes silently.
    mutating func positionals() throws -> [String] {
        var result: [String] = []
        var afterDashes = false
        for word in remaining {
            if afterDashes { result.append(word); continue }
            if word == "--" { afterDashes = true; continue }
            if word.hasPrefix("-") && word != "-" {
                throw CLIError("unknown option '\(word)' (see --help)")
            }
            result.append(word)
        }
        remaining.removeAll()
        return result
    }
}
