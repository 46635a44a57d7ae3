// The page shell (head, Content-Security-Policy, navigation, sections) and the small building blocks
// sections share: tables, stat blocks, badges, fact lists.

struct PageSection {
    var fragment: Fragment
    var title: String
    var body: (inout HTMLWriter) -> Void
}

enum Page {
    /// The policy the page enforces on itself: nothing may load (no network at all), styles are inline,
    /// and the only script that may run is ours, allowed by its hash — not by 'unsafe-inline', so a script
    /// element smuggled into the markup would be refused even if escaping ever failed.
    static var contentSecurityPolicy: String {
        "default-src 'none'; style-src 'unsafe-inline'; script-src " + SHA256.cspSource(for: PageAssets.pageScript.text)
            + "; img-src data:; base-uri 'none'; form-action 'none'"
    }

    /// The page: its header, the sections in order, and a navigation of them all. The navigation
    /// follows the first `leadSections` sections (0: it closes the header), so a page whose first
    /// answer is a chart shows it before a long list of links.
    static func render(title: String, subtitle: [String], sections: [PageSection], footer: String, leadSections: Int = 0) -> String {
        var w = HTMLWriter()
        w.trusted("<!doctype html>\n")
        w.element("html", [Attribute("lang", "en")]) { w in
            w.element("head") { w in
                w.void("meta", [Attribute("charset", "utf-8")])
                w.void("meta", [Attribute("http-equiv", "Content-Security-Policy"), Attribute("content", contentSecurityPolicy)])
                w.void("meta", [Attribute("name", "viewport"), Attribute("content", "width=device-width, initial-scale=1")])
                w.void("meta", [Attribute("name", "color-scheme"), Attribute("content", "light dark")])
                w.void("meta", [Attribute("name", "referrer"), Attribute("content", "no-referrer")])
                w.element("title", text: title)
                w.element("style") { $0.trusted(PageAssets.pageStylesheet) }
            }
            w.trusted("\n")
            w.element("body") { w in
                w.element("main") { w in
                    func navigation(_ w: inout HTMLWriter) {
                        guard sections.count > 1 else { return }
                        w.element("nav", [Attribute("class", "toc"), Attribute("aria-label", "Sections")]) { w in
                            for section in sections {
                                w.element("a", [Attribute.link(to: section.fragment)], text: section.title)
                            }
                        }
                    }
                    w.element("header", [Attribute("class", "top")]) { w in
                        w.element("h1") { $0.name(title) }
                        for line in subtitle { w.element("p", [Attribute("class", "sub")]) { $0.name(line) } }
                        if leadSections == 0 { navigation(&w) }
                    }
                    for (index, section) in sections.enumerated() {
                        if index == leadSections && index > 0 { navigation(&w) }
                        w.trusted("\n")
                        w.element("section", [Attribute("class", "card"), Attribute.id(section.fragment)]) { w in
                            w.element("h2", text: section.title)
                            section.body(&w)
                        }
                    }
                    w.element("footer", text: footer)
                }
                w.trusted("\n")
                w.element("script") { $0.trusted(PageAssets.pageScript) }
            }
        }
        w.trusted("\n")
        return w.output
    }
}

/// A table whose cells are escaped text; numeric cells carry their value for sorting.
struct TableBuilder {
    struct Column { var title: String; var numeric: Bool }
    enum Cell {
        case text(String)
        case name(String)                     // from a trace: bidi-isolated
        case number(Double, String)           // sort value, display text
        case badge(String, String)            // class, text
    }

    var columns: [Column]
    var rows: [(cells: [Cell], highlight: Bool)] = []

    init(_ columns: [(String, Bool)]) { self.columns = columns.map { Column(title: $0.0, numeric: $0.1) } }

    mutating func add(_ cells: [Cell], highlight: Bool = false) { rows.append((cells, highlight)) }

    /// Writes the table; with `filterable`, a search box (used by the script) filters rows by first cell.
    func write(_ w: inout HTMLWriter, fragment: Fragment, filterable: Bool = false, caption: String? = nil) {
        if filterable && rows.count > 8 {
            w.void("input", [Attribute("class", "filter"), Attribute("type", "search"), Attribute("placeholder", "Filter…"),
                             Attribute("aria-label", "Filter rows"), Attribute("data-table", fragment.identifier)])
        }
        w.element("div", [Attribute("class", "scroll")]) { w in
            w.element("table", [Attribute.id(fragment)]) { w in
                if let caption { w.element("caption", [Attribute("class", "note")], text: caption) }
                w.element("thead") { w in
                    w.element("tr") { w in
                        for column in columns {
                            w.element("th", [Attribute("scope", "col"), Attribute("data-sortable", "1")], text: column.title)
                        }
                    }
                }
                w.element("tbody") { w in
                    for row in rows {
                        w.element("tr", row.highlight ? [Attribute("class", "hl")] : []) { w in
                            for cell in row.cells {
                                switch cell {
                                case .text(let text): w.element("td", text: text)
                                case .name(let name): w.element("td") { $0.dottedName(name) }
                                case .number(let value, let text):
                                    w.element("td", [Attribute("data-v", Format.number(value.isFinite ? value : 0, decimals: 6))], text: text)
                                case .badge(let cls, let text):
                                    w.element("td") { $0.element("span", [Attribute("class", "badge " + cls)], text: text) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

enum Blocks {
    static func stats(_ w: inout HTMLWriter, _ items: [(key: String, value: String)]) {
        w.element("div", [Attribute("class", "stats")]) { w in
            for item in items {
                w.element("div", [Attribute("class", "stat")]) { w in
                    w.element("div", [Attribute("class", "v")], text: item.value)
                    w.element("div", [Attribute("class", "k")], text: item.key)
                }
            }
        }
    }

    static func facts(_ w: inout HTMLWriter, _ items: [(key: String, value: String)]) {
        w.element("dl", [Attribute("class", "facts")]) { w in
            for item in items {
                w.element("dt") { $0.name(item.key) }
                w.element("dd") { $0.name(item.value) }
            }
        }
    }

    /// "Showing 15 of 40 offenders" under a list capped at `shown`; nothing when the list is whole.
    static func showing(_ w: inout HTMLWriter, shown: Int, of total: Int, what: String) {
        guard total > shown else { return }
        note(&w, "Showing \(Format.count(shown)) of \(Format.count(total)) \(what).")
    }

    static func note(_ w: inout HTMLWriter, _ text: String) {
        w.element("p", [Attribute("class", "note")], text: text)
    }

    /// A horizontal meter of parts against a limit (memory budget): parts in series colors, overflow red.
    static func meter(_ w: inout HTMLWriter, parts: [(label: String, value: Double)], limit: Double, unitText: (Double) -> String,
                      isBudget: Bool = true) {
        let parts = parts.filter { $0.value > 0 }   // a part the trace did not record is left out, not drawn as 0
        let total = parts.reduce(0) { $0 + $1.value }
        let scale = max(limit, total, 1e-12)
        Charts.legend(&w, parts.map { "\($0.label): \(unitText($0.value))" })
        w.element("div", [Attribute("class", "meter"), Attribute("role", "img"),
                          Attribute("aria-label", "total \(unitText(total)) of \(unitText(limit))")]) { w in
            for (index, part) in parts.enumerated() {
                w.element("span", [Attribute("class", "s\(index % 6)"), Attribute("title", part.label),
                                   Attribute.style([("width", part.value / scale * 100, "%")])])
            }
        }
        if isBudget {
            note(&w, "Total \(unitText(total)) of a \(unitText(limit)) budget" + (total > limit ? " — over budget" : ""))
        }
    }
}
