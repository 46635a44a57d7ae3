// The resolved values of an `xctrace export` row (XctraceImporter): elements, their text and
// attributes, and the elements they hold.

/// One resolved value of a row: an element with its text, `fmt` and a few attributes, and children.
final class XValue {
    let name: String
    var text = ""
    var fmt: String?
    var attributes: [(String, String)] = []
    var children: [XValue] = []
    /// A timestamp's id, kept as a bare number once its text is read (`XctraceImporter.timeDefinitions`).
    var timeID: Int?
    init(name: String) { self.name = name }

    func child(_ name: String) -> XValue? { children.first { $0.name == name } }
    func attribute(_ key: String) -> String? { attributes.first { $0.0 == key }?.1 }
    var integer: Int64? { Int64(text.trimmingSpaces) }
    /// The first descendant (depth first) named `name`.
    func find(_ name: String) -> XValue? {
        for child in children {
            if child.name == name { return child }
            if let found = child.find(name) { return found }
        }
        return nil
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line ends. Steps over ASCII bytes, not
    /// characters: every value of every row goes through here.
    var trimmingSpaces: Substring {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }
        let bytes = utf8
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isSpace(bytes[start]) { start = bytes.index(after: start) }
        while end > start, isSpace(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return self[start..<end]
    }
}

extension StringProtocol {
    /// The first `count` characters, as `prefix` gives them; without walking the characters when
    /// the text has no more bytes than that (a character is at least one byte).
    func clipped(to count: Int) -> String { utf8.count <= count ? String(self) : String(prefix(count)) }
}
