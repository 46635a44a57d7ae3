import Foundation
import Testing

/// `Quantities`, the one parser of sizes: one spelling in every command.
@Suite struct QuantitiesTests {
    @Test func sizesParseOneWayEverywhere() throws {
        let bare = try HitchCLI.run(["analyze", llm, "--device-budget", "1.2"])
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("1.2GB"))
        for size in ["1.2GB", "1.2G", "1200M", "1200MB", "1144MiB"] {
            #expect(try HitchCLI.run(["analyze", llm, "--device-budget", size, "-o", "/dev/null"]).status == 0, "\(size)")
            #expect(try HitchCLI.run(["budget", "--device-budget", size]).status == 0, "\(size)")
        }
        let old = try HitchCLI.run(["report", llm, "--device-budget-mb", "1200", "-o", "/dev/null"])
        #expect(old.status == 2)
        #expect(old.stderr.contains("--device-budget 1200MB"))
    }
}
