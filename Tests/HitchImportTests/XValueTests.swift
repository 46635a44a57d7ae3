import Testing
@testable import HitchImport

/// The text helpers every xctrace value goes through: they step over bytes for speed, and must give
/// what the character-by-character versions give.
@Suite struct XValueTests {
    @Test func trimmingSpacesDropsOnlyOuterSpacesTabsAndLineEnds() {
        #expect(" \t\r\n é ü\r\n".trimmingSpaces == "é ü")
        #expect("\u{65}\u{301} ".trimmingSpaces == "\u{65}\u{301}")
        #expect("   ".trimmingSpaces == "")
        #expect("".trimmingSpaces == "")
        #expect("日本 語".trimmingSpaces == "日本 語")
        #expect("\u{a0}x\u{a0}".trimmingSpaces == "\u{a0}x\u{a0}")   // a no-break space is not trimmed
    }

    @Test func clippedIsThePrefixOfThatManyCharacters() {
        let texts = ["", "short", String(repeating: "a", count: 250), String(repeating: "é", count: 150),
                     String(repeating: "e\u{301}", count: 150), String(repeating: "🇫🇷", count: 120)]
        for text in texts {
            #expect(text.clipped(to: 200) == String(text.prefix(200)), "\(text.count) characters")
            #expect(text[...].clipped(to: 100) == String(text.prefix(100)))
        }
    }
}
