// A small HTML/SVG builder that escapes by construction.
//
// Tag and attribute names are `StaticString`s (they come from this source code, never from a trace);
// every `String` that reaches the output — text and attribute values — is escaped. Links can only point
// at fragments inside the page (`Fragment`), so a trace can never smuggle in a `javascript:` URL or a
// request to the network. Raw markup is accepted only as `StaticString` (CSS and the page script live
// in this module's source), or as `SourceMarkup` made from one.

/// An in-page link target (`id="…"` / `href="#…"`), restricted to [A-Za-z0-9_-].
public struct Fragment: Hashable, Sendable {
    public let identifier: String

    /// Builds an id from a prefix written in source and a value that may come from a trace; every
    /// character outside [A-Za-z0-9_-] becomes `_` followed by its code point in hex, so distinct inputs
    /// give distinct ids.
    public init(_ prefix: StaticString, _ value: String) {
        var identifier = prefix.description
        identifier.reserveCapacity(identifier.utf8.count + value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "-":
                identifier.unicodeScalars.append(scalar)
            default:
                identifier += "_" + String(scalar.value, radix: 16)
            }
        }
        self.identifier = identifier
    }

    public init(_ prefix: StaticString, _ number: some BinaryInteger) {
        self.init(prefix, String(number))
    }
}

/// One attribute; the name is source text, the value is escaped when written.
public struct Attribute: Sendable {
    let name: StaticString
    let value: String

    /// Any attribute whose value is not a URL. URL-valued attributes (`href`, `src`, …) are refused
    /// here and only reachable through `link(to:)`.
    public init(_ name: StaticString, _ value: String) {
        precondition(!Attribute.urlAttributes.contains(name.description),
                     "URL attributes go through Attribute.link(to:)")
        self.name = name
        self.value = value
    }

    public static func link(to fragment: Fragment) -> Attribute {
        Attribute(unchecked: "href", "#" + fragment.identifier)
    }

    /// A link to a file beside the page (another report the same job wrote), or nil when `path` is not
    /// a plain relative path: components of [A-Za-z0-9._-] only, no `..`, no leading `/`, so it can name
    /// no scheme, no host and nothing above the page's folder.
    public static func link(toFileBesideThePage path: String) -> Attribute? {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, components.allSatisfy({ component in
            !component.isEmpty && component != ".." && component != "."
                && component.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0) }
        }) else { return nil }
        return Attribute(unchecked: "href", "./" + path)
    }

    public static func id(_ fragment: Fragment) -> Attribute {
        Attribute(unchecked: "id", fragment.identifier)
    }

    public static func `class`(_ value: String) -> Attribute { Attribute("class", value) }

    /// An inline style made only of source-written properties and numbers (bar widths, colors by index),
    /// so no trace string can reach CSS.
    public static func style(_ declarations: [(property: StaticString, value: Double, unit: StaticString)]) -> Attribute {
        var text = ""
        for declaration in declarations {
            let value = declaration.value.isFinite ? declaration.value : 0
            text += declaration.property.description + ":" + Format.number(value, decimals: 3)
                + declaration.unit.description + ";"
        }
        return Attribute(unchecked: "style", text)
    }

    private init(unchecked name: StaticString, _ value: String) {
        self.name = name
        self.value = value
    }

    private static let urlAttributes: Set<String> = [
        "href", "src", "xlink:href", "action", "formaction", "srcset", "poster", "data", "background",
        "ping", "cite", "codebase", "manifest", "style",
    ]
}

/// Appends escaped markup to a string. Elements nest through closures, so tags always balance.
public struct HTMLWriter: Sendable {
    public private(set) var output: String = ""

    public init() {}

    /// Text content, escaped. Never use for anything but element content.
    public mutating func text(_ value: String) {
        HTMLWriter.appendEscaped(value, to: &output)
    }

    /// A name that came from a trace: escaped, and bidi-isolated so a right-to-left override inside it
    /// cannot reorder the text around it.
    public mutating func name(_ value: String) {
        element("bdi") { $0.text(value) }
    }

    /// A symbol or dotted name from a trace: like `name`, with a line-break opportunity after each
    /// part (`<wbr>` after '.', '(' and ','), so a long name wraps between its parts, never inside a word.
    public mutating func dottedName(_ value: String) {
        element("bdi") { w in
            var part = ""
            for character in value {
                part.append(character)
                if character == "." || character == "(" || character == "," {
                    w.text(part); part = ""
                    w.void("wbr")
                }
            }
            w.text(part)
        }
    }

    /// Markup written in this module's source (CSS, the page script, fixed fragments).
    public mutating func trusted(_ markup: StaticString) {
        output += markup.description
    }

    /// Markup written in this module's source, as a page carries it (`SourceMarkup`).
    mutating func trusted(_ markup: SourceMarkup) {
        output += markup.text
    }

    public mutating func element(_ tag: StaticString, _ attributes: [Attribute] = [],
                                 _ body: (inout HTMLWriter) -> Void = { _ in }) {
        open(tag, attributes)
        body(&self)
        output += "</"
        output += tag.description
        output += ">"
    }

    public mutating func element(_ tag: StaticString, _ attributes: [Attribute] = [], text: String) {
        element(tag, attributes) { $0.text(text) }
    }

    /// An element with no content and no end tag (`<br>`, `<meta>`, SVG shapes written `<rect …/>`).
    public mutating func void(_ tag: StaticString, _ attributes: [Attribute] = [], selfClosing: Bool = false) {
        open(tag, attributes, selfClosing: selfClosing)
    }

    private mutating func open(_ tag: StaticString, _ attributes: [Attribute], selfClosing: Bool = false) {
        output += "<"
        output += tag.description
        for attribute in attributes {
            output += " "
            output += attribute.name.description
            output += "=\""
            HTMLWriter.appendEscaped(attribute.value, to: &output)
            output += "\""
        }
        output += selfClosing ? "/>" : ">"
    }

    /// Escapes the five characters that matter in text and quoted attribute values, and replaces
    /// characters HTML forbids (NUL, other C0 controls but tab/newline/CR, noncharacters) with U+FFFD.
    public static func appendEscaped(_ value: String, to output: inout String) {
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            case "\t", "\n", "\r": output.unicodeScalars.append(scalar)
            default:
                let value = scalar.value
                if value < 0x20 || (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value)
                    || value & 0xFFFE == 0xFFFE {
                    output += "\u{FFFD}"
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
    }

    public static func escaped(_ value: String) -> String {
        var result = ""
        appendEscaped(value, to: &result)
        return result
    }
}
