import Foundation
import HitchAnalysis
import HitchReader
import HitchTrace

// `hitch bench traces`: a fleet of seeded synthetic traces (SyntheticTrace) with dimensions, the input
// of the fleet job's checks and throughput figures (scripts/check-fleet.sh, docs/FLEET.md) when no
// recorded fleet is at hand.
enum BenchTraces: Subcommand {
    static let name = "traces"
    static let summary = "Write a fleet of seeded synthetic traces with dimensions (for hitch merge and the fleet job)."
    static let help = """
    USAGE: hitch bench traces --count N -o DIR [--frames F] [--seed S]

    Writes N feed-like traces (120 Hz frames, nested stages, body evaluations, samples, thread states
    in every other trace) named DIR/trace-00001.fxt, ..., each from its own seed, so the same
    command always writes the same files. Each trace's metadata names its dimensions: appVersion
    (1.0, 1.1, 2.0), device (pixel-8, galaxy-s23, iphone-15) and os, round robin. Version 2.0 is a
    planted regression: its slow frames come twice as often (SyntheticTrace.slowFrameOneIn 48
    against 97), so 'hitch merge --by appVersion' must show it worse.

    OPTIONS:
      --count N       How many traces (1 to 100000).
      -o DIR          The directory to write them in (created).
      --frames F      Frames per trace (default 1200: 10 s at 120 Hz).
      --seed S        The first trace's seed (default 1); trace i uses S + i.
      -h, --help      Show this help.

    EXAMPLE:
      hitch bench traces --count 500 -o /tmp/fleet-traces
    """

    static let versions = ["1.0", "1.1", "2.0"]
    static let devices = [("pixel-8", "android-14"), ("galaxy-s23", "android-14"), ("iphone-15", "ios-17")]

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let count = try arguments.number("--count", in: 1...100_000, default: 0)
        guard count > 0 else { throw CLIError("'hitch bench traces' needs --count N (see --help)") }
        guard let directory = try arguments.output(), directory != "-" else { throw CLIError("'hitch bench traces' needs -o DIR") }
        let frames = try arguments.number("--frames", in: 1...10_000_000, default: 1200)
        let seed = try arguments.number("--seed", in: UInt64(0)...UInt64(1) << 62, default: 1)
        _ = try arguments.positionals("bench traces", count: 0...0, what: "no arguments")
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw CLIError("cannot create '\(directory)': \(error.localizedDescription)")
        }
        for i in 0..<count {
            let digits = String(i + 1)
            let path = directory + "/trace-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + ".fxt"
            let version = versions[i % versions.count], (device, os) = devices[(i / versions.count) % devices.count]
            do {
                let writer = try TraceFileWriter(path: path)
                writer.setMetadata(.workload, "synthetic-feed")
                writer.setMetadata(.appVersion, version)
                writer.setMetadata(.device, device)
                writer.setMetadata(.os, os)
                writer.setMetadata(.seed, String(seed + UInt64(i)))
                var generator = SyntheticTrace(seed: seed + UInt64(i))
                generator.slowFrameOneIn = version == "2.0" ? 48 : 97
                generator.threadStates = i % 2 == 0
                _ = generator.write(to: writer, targetBytes: .max, maxFrames: frames)
                _ = try writer.close()
            } catch {
                throw CLIError("cannot write '\(path)': \(error)")
            }
        }
        try writeStandardOutputLine("wrote \(count) traces of \(frames) frames to \(directory)")
        return .ok
    }
}
