import Foundation
import Testing
@testable import HitchReport
import HitchAnalysis

@Suite struct HTMLEscapingTests {
    @Test func textAndAttributesAreEscaped() {
        var w = HTMLWriter()
        w.element("p", [Attribute("title", "\"><script>x</script>")], text: "<b>&'\"</b>")
        #expect(w.output == "<p title=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;\">&lt;b&gt;&amp;&#39;&quot;&lt;/b&gt;</p>")
    }

    @Test func controlCharactersAndNoncharactersBecomeReplacementCharacters() {
        #expect(HTMLWriter.escaped("a\u{0}b\u{1}c\u{7F}d\u{FFFE}e\tf\ng") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\tf\ng")
    }

    @Test func traceNamesAreBidiIsolated() {
        var w = HTMLWriter()
        w.name("\u{202E}evil")
        #expect(w.output == "<bdi>\u{202E}evil</bdi>")
    }

    @Test func fragmentsOnlyKeepSafeCharacters() {
        let fragment = Fragment("f-", "javascript:alert(1) \"x\"")
        #expect(fragment.identifier.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(Fragment("f-", "a b") != Fragment("f-", "a_b"))
        #expect(Attribute.link(to: fragment).value.hasPrefix("#"))
    }

    /// The whole report built from an analysis whose every string is hostile: each hostile string may
    /// appear only escaped, and the page's only tags are the ones the renderer writes.
    @Test func hostileNamesRenderAsText() {
        let analysis = SampleAnalysis.make(names: SampleAnalysis.hostile)
        let html = HTMLReport.render(analysis, title: SampleAnalysis.hostile("title"))
        #expect(html.components(separatedBy: "<script").count == 2)          // ours only
        #expect(html.components(separatedBy: "</script>").count == 2)
        #expect(html.components(separatedBy: "</style>").count == 2)
        #expect(!html.contains("</title><script"))
        for forbidden in ["<img", "<iframe", "<svg onload", "onerror=\"", "onmouseover='", "<!-- comment", "src=\"https"] {
            #expect(!html.contains(forbidden), "found \(forbidden)")
        }
        // Every link points inside the page.
        for part in html.components(separatedBy: "href=\"").dropFirst() {
            #expect(part.hasPrefix("#"))
        }
        // The escaped forms are there: the names were rendered, as text.
        #expect(html.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"))
        #expect(html.contains("javascript:alert(1)"))
        #expect(html.contains("<bdi>\u{202E}gnp.exe\u{202C} rtl override"))
        #expect(!html.contains("\u{0}"))
    }

    @Test func comparisonEscapesToo() {
        let base = SampleAnalysis.make(names: SampleAnalysis.hostile)
        let new = SampleAnalysis.make(seed: 9, names: SampleAnalysis.hostile, hitchEvery: 300)
        let html = HTMLReport.renderComparison(base: base, new: new, comparison: RunComparison.compare(base: [base], new: [new], thresholdPercent: 5),
                                               baseLabel: "<script>a</script>", newLabel: "\"><img src=x>", title: "</title>x")
        #expect(html.components(separatedBy: "<script").count == 2)
        #expect(!html.contains("<img"))
        #expect(!html.contains("</title>x"))
    }

    @Test func contentSecurityPolicyAllowsExactlyOurScript() {
        let html = HTMLReport.render(SampleAnalysis.make(frameCount: 50), title: "t")
        let policy = Page.contentSecurityPolicy
        #expect(policy.contains("default-src 'none'"))
        #expect(!policy.contains("script-src 'unsafe-inline'"))
        #expect(policy.contains(SHA256.cspSource(for: PageAssets.pageScript.text)))
        #expect(html.contains("<script>" + PageAssets.pageScript.text + "</script>"))
    }
}

@Suite struct SourceMarkupTests {
    @Test func compactingDropsIndentationAndJoinsLines() {
        #expect(SourceMarkup(compacting: "a{\n  b:1;\n  c:2 \n}\n\nd\ne{}").text == "a{b:1;c:2 }d e{}")
    }

    @Test func pageAssetsKeepEveryRuleAndStatement() {
        // Compaction only removes white space at line ends and starts: the rest is the same text.
        for (source, page) in [(PageAssets.stylesheet.description, PageAssets.pageStylesheet.text),
                               (PageAssets.script.description, PageAssets.pageScript.text)] {
            let strip = { (text: String) in text.filter { !$0.isWhitespace } }
            #expect(strip(source) == strip(page))
            #expect(!page.contains("\n"))
        }
    }
}

@Suite struct HTMLDeterminismTests {
    @Test func sameAnalysisGivesSameBytes() {
        let first = HTMLReport.render(SampleAnalysis.make(), title: "feed")
        let second = HTMLReport.render(SampleAnalysis.make(), title: "feed")
        #expect(first == second)
        func comparison() -> String {
            let base = SampleAnalysis.make(), new = SampleAnalysis.make(seed: 3, hitchEvery: 200)
            return HTMLReport.renderComparison(base: base, new: new, comparison: RunComparison.compare(base: [base], new: [new], thresholdPercent: 5),
                                               baseLabel: "a", newLabel: "b", title: "c")
        }
        let a = comparison(), b = comparison()
        #expect(a.contains("badge good"))
        #expect(a == b)
    }

    @Test func sectionsAppearOnlyWithData() {
        var empty = Analysis()
        empty.runs = [RunSummary()]
        let html = HTMLReport.render(empty, title: "empty")
        #expect(!html.contains("Frame timeline"))
        #expect(!html.contains("LLM decode"))
        #expect(html.contains("Trace"))
        let full = HTMLReport.render(SampleAnalysis.make(frameCount: 100), title: "full")
        for section in ["Verdict", "Frame timeline", "Frame times", "Pipeline stages", "View updates", "Main thread samples", "LLM decode"] {
            #expect(full.contains(">\(section)</h2>"), "missing \(section)")
        }
    }

    @Test func hitchesStayVisibleWhenZoomedOut() {
        // 20,000 frames in 1,000 units: every hitch still gets a bar at least 2 units wide.
        let html = HTMLReport.render(SampleAnalysis.make(frameCount: 20_000, hitchEvery: 997), title: "long")
        let hitchBars = html.components(separatedBy: "class=\"bar hitch").count - 1
        #expect(hitchBars == 20_000 / 997 + (20_000 % 997 > 5 ? 1 : 0))
        #expect(html.contains("width=\"2\" height="))
    }
}

@Suite struct HTMLRobustnessTests {
    /// Degenerate figures (NaN, infinities, zero peaks, one frame, zero-length stacks) render without
    /// crashing and without "nan"/"inf" leaking into SVG coordinates.
    @Test func degenerateFiguresRender() {
        var analysis = SampleAnalysis.make(frameCount: 1)
        analysis.frames[0].frameTimeMs = .nan
        analysis.frames.append(analysis.frames[0])
        analysis.frames[1].frameTimeMs = .infinity
        analysis.frames[1].startMs = .infinity
        analysis.recorded.frameTimeMs.p99 = .infinity
        analysis.stages[0].selfMs = .nan
        analysis.decode?.peakGFLOPS = 0
        analysis.decode?.ops[0].flopsPerByte = .nan
        analysis.decode?.memory.deviceBudgetBytes = 0
        analysis.samples.folded = [FoldedStack()]
        analysis.invalidations[0].count = 0
        let html = HTMLReport.render(analysis, title: "degenerate")
        #expect(html.hasSuffix("</html>\n"))
        for bad in ["\"nan\"", "\"inf\"", "\"-inf\"", "NaN", "=\"∞\""] {
            #expect(!html.contains(bad), "found \(bad)")
        }
    }
}

@Suite struct FormatTests {
    @Test func numbersAreLocaleFree() {
        #expect(Format.fixed(3.14159, 2) == "3.14")
        #expect(Format.fixed(-0.004, 2) == "0.00")
        #expect(Format.fixed(2.5, 0) == "3")
        #expect(Format.number(8.3333, decimals: 2) == "8.33")
        #expect(Format.number(10.0, decimals: 2) == "10")
        #expect(Format.count(10_000) == "10,000")
        #expect(Format.count(-1234567) == "-1,234,567")
        #expect(Format.milliseconds(0.25) == "250 µs")
        #expect(Format.milliseconds(16.667) == "16.7 ms")
        #expect(Format.milliseconds(1500) == "1.50 s")
        #expect(Format.bytes(254e6) == "254 MB")
        #expect(Format.percent(0.557) == "56%")
        #expect(Format.rate(120) == "120 Hz")
        #expect(Format.fixed(.nan, 2) == "–")
    }

    @Test func sha256MatchesTheStandardVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA256.digest(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.digest([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }
}
