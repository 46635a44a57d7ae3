import Foundation
import Testing

/// `Arguments`: no input silently ignored or replaced; an extra argument or a parameter out of its
/// range is an error naming it.
@Suite struct ArgumentsTests {
    @Test func extraArgumentsAndOutOfRangeParametersAreErrors() throws {
        let budget = try HitchCLI.run(["budget", "1B"])
        #expect(budget.status == 2)
        #expect(budget.stderr.contains("'1B'"))
        let params = try HitchCLI.run(["budget", "--params", "70B"])
        #expect(params.status == 2)
        #expect(params.stderr.contains("20B"))
        #expect(try HitchCLI.run(["bench", "analyze", "extra"]).status == 2)
        #expect(try HitchCLI.run(["record", "llm", "-o", "/dev/null", "stray"]).status == 2)
        let from = try HitchCLI.run(["export", tuned, "--format", "chrome", "--from", "1", "-o", "/dev/null"])
        #expect(from.status == 2)
        #expect(from.stderr.contains("--from"))
        let flag = try HitchCLI.run(["analyze", tuned, "--merge=yes"])
        #expect(flag.status == 2)
    }
}
