import HitchAnalysis

// GNU-style argument parsing by hand: `--name value`, `--name=value`, boolean `--flag`,
// `--` ends options. Each accessor names the flag in its error. Every option a command asks for is
// remembered, so a misspelled one is refused with the closest names the command knows.

struct Arguments {
    private var remaining: [String]
    /// Every option and flag name the command asked for: what it accepts.
    private(set) var known: [String] = ["--help", "-h"]
    /// The known names that are boolean flags (they take no value).
    private var flags: [String] = []

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

    /// True if `--help` or `-h` is present (anywhere before `--`) and nothing else is; help with
    /// other words is an error naming them, as any extra argument is.
    mutating func wantsHelp(_ command: String) throws -> Bool {
        guard flag("--help") || flag("-h") else { return false }
        guard remaining.isEmpty else {
            throw CLIError("'hitch \(command) --help' takes nothing else; unexpected " + remaining.map { "'\($0)'" }.joined(separator: " "))
        }
        return true
    }

    private mutating func note(_ name: String) {
        if !known.contains(name) { known.append(name) }
    }

    /// Removes and returns whether a boolean flag is present (given once or more).
    mutating func flag(_ name: String) -> Bool {
        note(name)
        if !flags.contains(name) { flags.append(name) }
        var found = false
        while let index = remaining[..<(remaining.firstIndex(of: "--") ?? remaining.endIndex)].firstIndex(of: name) {
            remaining.remove(at: index)
            found = true
        }
        return found
    }

    /// Removes and returns the value of `--name VALUE` or `--name=VALUE`; the last one wins.
    mutating func option(_ name: String) throws -> String? {
        var value: String?
        while let next = try optionFirst(name) { value = next }
        return value
    }

    /// `-o FILE` or `--output FILE` (the last one wins); "-" means standard output.
    mutating func output() throws -> String? {
        note("-o"); note("--output")
        var value: String?
        var index = 0
        while index < remaining.count, remaining[index] != "--" {
            let word = remaining[index]
            if word == "-o" || word == "--output" {
                guard index + 1 < remaining.count, remaining[index + 1] != "--" else { throw CLIError("option '\(word)' needs a value (a file, or - for standard output)") }
                value = remaining[index + 1]
                remaining.removeSubrange(index...(index + 1))
            } else if word.hasPrefix("--output=") {
                value = String(word.dropFirst("--output=".count))
                remaining.remove(at: index)
            } else {
                index += 1
            }
        }
        if value?.isEmpty == true { throw CLIError("option '-o' needs a file name (or - for standard output)") }
        return value
    }

    /// Every value of a repeatable option, in order.
    mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        while let value = try optionFirst(name) { values.append(value) }
        return values
    }

    private mutating func optionFirst(_ name: String) throws -> String? {
        note(name)
        var index = 0
        while index < remaining.count, remaining[index] != "--" {
            let word = remaining[index]
            if word == name {
                guard index + 1 < remaining.count, remaining[index + 1] != "--" else { throw CLIError("option '\(name)' needs a value") }
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
            let closest = Spelling.closest(to: value, among: accepted, limit: 1)
            throw CLIError("option '\(name)' must be one of \(accepted.joined(separator: ", ")); got '\(value)'"
                           + (closest.isEmpty ? "" : " (did you mean '\(closest[0])'?)"))
        }
        return value
    }

    /// An option parsed as a number within `range`: out of range is an error, never clamped.
    mutating func number<T: LosslessStringConvertible & Comparable>(_ name: String, in range: ClosedRange<T>, default fallback: T) throws -> T {
        guard let text = try option(name) else { return fallback }
        guard let value = T(text.trimmingSpaces), range.contains(value) else {
            throw CLIError("option '\(name)' must be a number from \(range.lowerBound) to \(range.upperBound); got '\(text)'")
        }
        return value
    }

    /// The positional arguments left once every option has been taken. Fails on any
    /// unrecognised option, so a typo never passes silently, naming the closest known option.
    mutating func positionals() throws -> [String] {
        var result: [String] = []
        var afterDashes = false
        for word in remaining {
            if afterDashes { result.append(word); continue }
            if word == "--" { afterDashes = true; continue }
            if word.hasPrefix("-") && word != "-" && Double(word) == nil {
                let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
                if flags.contains(name) { throw CLIError("option '\(name)' takes no value; got '\(word)'") }
                let closest = Spelling.closest(to: name, among: known.filter { $0.hasPrefix("--") }, limit: 2)
                throw CLIError("unknown option '\(name)'" + (closest.isEmpty ? "" : "; did you mean " + closest.map { "'\($0)'" }.joined(separator: " or ") + "?")
                               + " (see --help)")
            }
            result.append(word)
        }
        remaining.removeAll()
        return result
    }

    /// The positionals, which must number within `count`; `what` names them for the error.
    mutating func positionals(_ command: String, count: ClosedRange<Int>, what: String) throws -> [String] {
        let words = try positionals()
        if words.count > count.upperBound {
            let extra = words[count.upperBound...].map { "'\($0)'" }.joined(separator: " ")
            throw CLIError("'hitch \(command)' takes \(count.upperBound == 0 ? "no arguments" : what); unexpected \(extra) (see --help)")
        }
        if words.count < count.lowerBound { throw CLIError("'hitch \(command)' needs \(what) (see --help)") }
        return words
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

extension Arguments {
    /// `--refresh HZ` of a recording (`Quantities.refreshRange`, default `Quantities.defaultRecordingRefreshHz`).
    mutating func recordingRefreshRate() throws -> Double {
        try number("--refresh", in: Quantities.refreshRange, default: Quantities.defaultRecordingRefreshHz)
    }

    /// `--threshold PERCENT` of a comparison (`Quantities.thresholdRange`, default `RunComparison.defaultThresholdPercent`).
    mutating func thresholdPercent() throws -> Double {
        try number("--threshold", in: Quantities.thresholdRange, default: RunComparison.defaultThresholdPercent)
    }
}
