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
    var trimmingSpaces: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\n" || first == "\t" || first == "\r" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\n" || last == "\t" || last == "\r" { text = text.dropLast() }
        return text
    }
}
