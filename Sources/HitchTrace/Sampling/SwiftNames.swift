// Readable Swift function names. Traces keep the runtime's full demangling ("function signature
// specialization <Arg[0] = Dead> of static HitchWorkloads.FeedPipeline.normalize(Swift.Array<…>) -> …");
// a flame graph or an offender list shows what Instruments and `swift demangle --simplified` show,
// keeping the module: `HitchWorkloads.FeedPipeline.normalize(_:)`.
//
// Rules, applied to the demangled text:
// - specialization, partial-apply, merged and async-resume wrappers are dropped (the function is the same);
// - a reabstraction thunk is just "thunk";
// - parameter lists become their labels, `(_:in:)`; result types, `throws`, `async` and a
//   closure's signature and attributes are dropped; `static` and `(extension in M):` too;
// - private discriminators `(name in _0123…)` become `name`;
// - generic arguments lose their module prefixes and `where` clauses.

public enum SwiftNames {
    /// The simplified form of a demangled Swift name; other names (C, C++) come back unchanged.
    public static func simplified(_ name: String) -> String {
        guard name.contains("(") || name.contains(" ") || name.contains("<") else { return name }
        if name.contains("::") { return cxxSimplified(name) }   // a demangled C++ name (Swift's never hold "::")
        var text = Substring(name)
        if let suffix = text.range(of: " with unmangled suffix ") { text = text[..<suffix.lowerBound] }
        // Wrappers around the function, outermost first.
        var changed = true
        while changed {
            changed = false
            for prefix in ["merged ", "partial apply forwarder for ", "partial apply for ", "specialized ", "dispatch thunk of ", "@objc "] where text.hasPrefix(prefix) {
                text = text.dropFirst(prefix.count); changed = true
            }
            for prefix in ["generic specialization ", "function signature specialization ", "generic partial specialization "] where text.hasPrefix(prefix) {
                // "<…> of " follows, with balanced angle brackets inside.
                let rest = text.dropFirst(prefix.count)
                if rest.first == "<", let close = matching(rest, from: rest.startIndex), rest[rest.index(after: close)...].hasPrefix(" of ") {
                    text = rest[rest.index(close, offsetBy: 5)...]; changed = true
                }
            }
            if text.first == "(", let close = text.firstIndex(of: ")"), text[text.index(after: close)...].hasPrefix(" ") {
                let inner = text[text.index(after: text.startIndex)..<close]
                if inner.allSatisfy(\.isNumber), let of = text.range(of: " partial function for ") {   // "(1) await resume partial function for …"
                    text = text[of.upperBound...]; changed = true
                }
            }
        }
        if text.hasPrefix("reabstraction thunk") || text.hasPrefix("thunk for") { return "thunk" }
        return entity(text)
    }

    /// A demangled C++ name (the Swift runtime's own functions, `__cxa_demangle`'s output) the way
    /// the Swift names above read: its qualified name without parameter lists, template arguments,
    /// return type, cv-qualifiers or clone suffixes. `swift::Mutex::withLock<…>(…)::{lambda()#1}::operator()(…) const`
    /// -> `swift::Mutex::withLock::{lambda#1}::operator()`.
    static func cxxSimplified(_ name: String) -> String {
        var text = Substring(name)
        if let clone = text.range(of: " [clone ") { text = text[..<clone.lowerBound] }
        let anonymous = "(anonymous namespace)"
        var out = ""
        var depth = 0
        var i = text.startIndex
        while i < text.endIndex {
            let rest = text[i...]
            if depth == 0, rest.hasPrefix(anonymous) {
                out += "(anonymous)"; i = text.index(i, offsetBy: anonymous.count); continue
            }
            if depth == 0, out.hasSuffix("operator") {
                // The operator's own symbol is part of the name: `operator()`, `operator<<`, `operator->`.
                let symbol = rest.prefix { "()[]<>=!+-*/%&|^~,".contains($0) }
                let taken = symbol.hasPrefix("()") ? Substring("()") : symbol.hasPrefix("[]") ? Substring("[]")
                    : symbol.prefix { $0 != "(" }
                if !taken.isEmpty { out += taken; i = text.index(i, offsetBy: taken.count); continue }
            }
            let c = text[i]
            switch c {
            case "<", "(": depth += 1
            case ">" where depth > 0: depth -= 1
            case ")" where depth > 0: depth -= 1
            default: if depth == 0 { out.append(c) }
            }
            i = text.index(after: i)
        }
        // A template instance's return type comes first ("void swift::Lazy::getValue"); qualifiers last.
        for qualifier in [" const", " volatile", " &&", " &", " noexcept"] where out.hasSuffix(qualifier) { out.removeLast(qualifier.count) }
        var braces = 0, lastSpace: String.Index? = nil
        for index in out.indices {
            switch out[index] {
            case "{": braces += 1
            case "}": braces -= 1
            case " " where braces == 0: lastSpace = index
            default: break
            }
        }
        if let space = lastSpace { out = String(out[out.index(after: space)...]) }
        return out.isEmpty ? name : out
    }

    /// The index of the bracket closing the one at `start` ("(" or "<"), skipping "->".
    static func matching(_ text: Substring, from start: Substring.Index) -> Substring.Index? {
        scanAtDepth(text, from: start) { _, _, depth in depth == 0 }
    }

    /// The index of the next " in " at bracket depth 0 (what separates a closure from its context).
    static func nextIn(_ text: Substring, from start: Substring.Index) -> Substring.Index? {
        scanAtDepth(text, from: start) { index, c, depth in depth == 0 && c == " " && text[index...].hasPrefix(" in ") }
    }

    /// Walks `text` from `start`, keeping the bracket depth ("->" is an arrow, not a bracket), and
    /// returns the first index where `stop(index, character, depth after it)` holds.
    private static func scanAtDepth(_ text: Substring, from start: Substring.Index,
                                    stop: (Substring.Index, Character, Int) -> Bool) -> Substring.Index? {
        var depth = 0
        var index = start
        var previous: Character = " "
        while index < text.endIndex {
            let c = text[index]
            switch c {
            case "(", "<", "[": depth += 1
            case ")", "]": depth -= 1
            case ">" where previous != "-": depth -= 1
            default: break
            }
            if stop(index, c, depth) { return index }
            previous = c
            index = text.index(after: index)
        }
        return nil
    }

    private static func isIdentifier(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" || c == "$" }

    static func entity(_ text: Substring) -> String {
        var out = ""
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            let rest = text[i...]
            if out.isEmpty || out.last == " " {
                if rest.hasPrefix("static ") { i = text.index(i, offsetBy: 7); continue }
                if rest.hasPrefix("(extension in "), let colon = rest.range(of: "):") { i = colon.upperBound; continue }
            }
            if c == "(" {
                // "(in _HEX)." and "(name in _HEX)": a private declaration's discriminator.
                if let close = rest.firstIndex(of: ")"), !rest[rest.index(after: rest.startIndex)..<close].contains("("),
                   let marker = rest[..<close].range(of: "in _"),
                   rest[marker.upperBound..<close].allSatisfy({ $0.isHexDigit }) {
                    let name = rest[rest.index(after: rest.startIndex)..<marker.lowerBound].trimmingTrailingSpace
                    out += name
                    i = text.index(after: close)
                    if name.isEmpty, i < text.endIndex, text[i] == "." { i = text.index(after: i) }
                    continue
                }
                guard let close = matching(text, from: i) else { out.append(c); i = text.index(after: i); continue }
                let isClosure = out.hasSuffix(" ") && out.dropLast().split(separator: " ").suffix(2).first.map { $0.hasSuffix("closure") } == true
                if !isClosure {
                    out += labels(text[text.index(after: i)..<close])
                }
                // What follows the parameter list up to the context (" in ") is its signature's tail.
                let after = text.index(after: close)
                if let next = nextIn(text, from: after) { i = next } else { i = text.endIndex }
                if isClosure, out.hasSuffix(" ") { out.removeLast() }
                continue
            }
            if c == "@", out.hasSuffix(" ") {
                // A closure's attributes and signature ("closure #1 @Swift.MainActor () -> () in …").
                if let next = nextIn(text, from: i) { out.removeLast(); i = next } else { i = text.endIndex }
                continue
            }
            if c == "<", let last = out.last, isIdentifier(last), let close = matching(text, from: i) {
                out += "<" + generics(text[text.index(after: i)..<close]) + ">"
                i = text.index(after: close)
                continue
            }
            if c == " ", rest.hasPrefix(" : ") {
                // "….getter : Type": the accessor's type.
                if let next = nextIn(text, from: text.index(after: i)) { i = next } else { i = text.endIndex }
                continue
            }
            out.append(c)
            i = text.index(after: i)
        }
        return out
    }

    /// "_: HeadlessUI.ViewNode, in: HeadlessUI.Rect" -> "(_:in:)"; "HeadlessUI.ViewNode" -> "(_:)".
    static func labels(_ parameters: Substring) -> String {
        guard !parameters.trimmingTrailingSpace.isEmpty else { return "()" }
        var result = "("
        func take(_ part: Substring) {
            let part = part.drop { $0 == " " }
            if let colon = part.firstIndex(of: ":"), part[..<colon].allSatisfy(isIdentifier), !part[..<colon].isEmpty {
                result += part[..<colon] + ":"
            } else {
                result += "_:"
            }
        }
        var start = parameters.startIndex
        while let comma = scanAtDepth(parameters, from: start, stop: { _, c, depth in c == "," && depth == 0 }) {
            take(parameters[start..<comma])
            start = parameters.index(after: comma)
        }
        take(parameters[start...])
        return result + ")"
    }

    /// Generic arguments without module prefixes or `where` clauses: "A where A: Swift.Sendable" -> "A".
    static func generics(_ arguments: Substring) -> String {
        var text = arguments
        if let clause = text.range(of: " where ") { text = text[..<clause.lowerBound] }
        var out = ""
        var word = ""
        for c in text {
            if isIdentifier(c) { word.append(c); continue }
            if c == "." { word = ""; continue }   // "HeadlessUI.Padding" -> "Padding"
            out += word; word = ""
            out.append(c)
        }
        return out + word
    }
}

private extension Substring {
    var trimmingTrailingSpace: Substring {
        var s = self
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
