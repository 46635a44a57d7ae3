import Foundation

/// A JSON fixture of Tests/Fixtures/llm, decoded.
func llmFixture<Fixture: Decodable>(_ name: String) throws -> Fixture {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/llm/" + name)
    return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
}
