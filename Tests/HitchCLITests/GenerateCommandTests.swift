import Foundation
import Testing

@Suite struct GenerateCommandTests {
    /// `bench decode --write-gguf` writes a small synthetic model; `generate` runs it from the file.
    @Test func aWrittenModelGeneratesItsTokensAsJSON() throws {
        let directory = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let model = directory + "/tiny.gguf"
        let shape = ["--dim", "64", "--layers", "1", "--heads", "4", "--kv-heads", "2", "--ffn", "128", "--vocab", "300", "--context", "64"]
        let write = try HitchCLI.run(["bench", "decode", "--write-gguf", model, "--weights", "q4_1"] + shape)
        #expect(write.status == 0, "\(write.stderr)")
        let run = try HitchCLI.run(["generate", "--model", model, "--prompt", "abc", "--tokens", "5", "--threads", "1", "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        struct Report: Decodable { var promptTokens: [Int]; var tokens: [Int]; var margins: [Float] }
        let report = try JSONDecoder().decode(Report.self, from: Data(run.stdout.utf8))
        // The byte-level vocabulary: "abc" is three byte tokens (the bytes' own ids).
        #expect(report.promptTokens == [97, 98, 99])
        #expect(report.tokens.count == 5 && report.tokens.allSatisfy { (0..<300).contains($0) })
        #expect(report.margins.count == 5 && report.margins.allSatisfy { $0 >= 0 })
        // Greedy is deterministic (the ids and gaps; the tokens/s is a measurement).
        let again = try HitchCLI.run(["generate", "--model", model, "--prompt", "abc", "--tokens", "5", "--threads", "2", "--format", "json"])
        let second = try JSONDecoder().decode(Report.self, from: Data(again.stdout.utf8))
        #expect(second.tokens == report.tokens && second.margins == report.margins)
    }

    @Test func badInputIsOneLineAndExitTwo() throws {
        let missing = try HitchCLI.run(["generate", "--prompt", "x"])
        #expect(missing.status == 2 && missing.stderr.contains("--model"))
        let notGGUF = try HitchCLI.run(["generate", "--model", HitchCLI.root + "/README.md", "--prompt", "x"])
        #expect(notGGUF.status == 2 && notGGUF.stderr.contains("not a GGUF file"))
        #expect(notGGUF.stderr.split(separator: "\n").count == 1)
        // q3_K is a ggml type the engine does not decode: refused, naming the flag.
        let type = try HitchCLI.run(["bench", "decode", "--write-gguf", "/tmp/x.gguf", "--weights", "q3_K"])
        #expect(type.status == 2 && type.stderr.contains("--weights"))
    }
}
