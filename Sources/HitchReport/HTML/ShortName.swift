// Names as a person reads them in a report: a symbol loses its module path from the left (the
// function and its type stay), and a name too long for its slot loses whole parts from the left,
// never letters from the middle of a word. The full name stays in the tooltip or the text formats.

enum ShortName {
    /// "closure #1 in HitchWorkloads.RGBAImage.resized(width:height:)" → "closure #1 in
    /// RGBAImage.resized(width:height:)": each dotted path of three or more parts drops its first
    /// (the module); paths of two parts ("Swift.print", "libc.so") stay whole.
    static func symbol(_ name: String) -> String {
        var out = ""
        var path: [Substring] = []
        var current = ""
        func flushPath() {
            if !current.isEmpty { path.append(Substring(current)); current = "" }
            guard !path.isEmpty else { return }
            let kept = path.count >= 3 && path[0].first?.isUppercase == true ? path.dropFirst() : path[...]
            out += kept.joined(separator: ".")
            path = []
        }
        for character in name {
            if character.isLetter || character.isNumber || character == "_" || character == "$" {
                current.append(character)
            } else if character == ".", !current.isEmpty {
                path.append(Substring(current)); current = ""
            } else {
                flushPath()
                out.append(character)
            }
        }
        flushPath()
        return out
    }

    /// Where a name may be cut: between the parts of a path or the words of a phrase.
    static func isCutPoint(_ character: Character) -> Bool { character == "." || character == " " || character == "/" }

    /// `label` in at most `characters`, dropping whole parts from the left ("…Inflater.bits(_:)");
    /// nil when not even the last part fits (draw no label then: the tooltip has it).
    static func fitFromLeft(_ label: String, characters: Int) -> String? {
        guard label.count > characters else { return label }
        guard characters >= 2 else { return nil }
        // Cut points outside brackets ("f(_: Swift.Int)" is never cut inside its signature).
        var cuts: [String.Index] = []
        var depth = 0
        for index in label.indices {
            switch label[index] {
            case "(", "<", "[": depth += 1
            case ")", ">", "]": depth = max(0, depth - 1)
            default: if depth == 0 && isCutPoint(label[index]) { cuts.append(index) }
            }
        }
        var best: String?
        // From the right, keep the longest tail that fits with its "…".
        for index in cuts.reversed() {
            let candidate = "…" + label[label.index(after: index)...]
            if candidate.count <= characters { best = String(candidate) } else { break }
        }
        return best
    }
}
