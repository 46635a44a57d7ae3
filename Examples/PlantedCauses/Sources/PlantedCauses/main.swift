// PlantedCauses: an app that plants known causes of late frames and records them with HitchTrace.
//
//   PlantedCauses record --shape swap-chain-of-one|swap-chain-of-two|shared-cpu --out DIR
//       [--spacing FRAMES] [--refresh HZ]
//
// writes DIR/trace.fxt (the recording) and DIR/manifest.json (what was planted in which frame, and
// what the app measured while planting it). Frames 0 to SPACING-1 are quiet; then each cause of
// PlantKind is planted in one frame, SPACING frames apart, in the order listed there; SPACING quiet
// frames end the run. Pinning needs two CPUs; the higher priorities need root (or CAP_SYS_NICE).
import Foundation

struct Options {
    var shape: Shape = .swapChainOfOne
    var outDirectory = "."
    var spacing: UInt64 = 30
    var refreshRateHz = 60.0
    var cpu: Int32 = 0
    /// The hogs' nice value. At -10 the scheduler still gave the waiting main thread about a seventh of
    /// its CPU (2 ms of work done in 13 ms): the planted frame was often on time by the app's own
    /// presents, nothing planted at all. At -15 (weight 29,154 against 1,024) the wait is the hog's spin.
    var nice: Int32 = -15
    var spinMs = 60.0
}

func parse(_ arguments: ArraySlice<String>) throws -> Options {
    var options = Options()
    var rest = arguments
    while let flag = rest.popFirst() {
        guard let value = rest.popFirst() else { throw PlantError("\(flag) needs a value") }
        switch flag {
        case "--shape":
            guard let shape = Shape(rawValue: value) else {
                throw PlantError("--shape must be one of \(Shape.allCases.map(\.rawValue).joined(separator: ", ")), not \(value)")
            }
            options.shape = shape
        case "--out": options.outDirectory = value
        case "--spacing":
            guard let spacing = UInt64(value), spacing >= 8 else { throw PlantError("--spacing must be a whole number of frames, at least 8") }
            options.spacing = spacing
        case "--refresh":
            guard let hz = Double(value), hz >= 10, hz <= 240 else { throw PlantError("--refresh must be between 10 and 240 Hz") }
            options.refreshRateHz = hz
        case "--cpu": options.cpu = Int32(value) ?? 0
        case "--nice": options.nice = Int32(value) ?? -15
        case "--spin-ms": options.spinMs = Double(value) ?? 60
        default: throw PlantError("unknown option \(flag)")
        }
    }
    return options
}

let arguments = CommandLine.arguments.dropFirst()
do {
    switch arguments.first {
    case "record":
        try record(try parse(arguments.dropFirst()))
    case "hog-process":
        let options = try parse(arguments.dropFirst())
        exit(runHogProcess(cpu: options.cpu, nice: options.nice, spinMs: options.spinMs))
    default:
        FileHandle.standardError.write(Data("usage: PlantedCauses record --shape \(Shape.allCases.map(\.rawValue).joined(separator: "|")) --out DIR [--spacing FRAMES] [--refresh HZ]\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("PlantedCauses: \(error)\n".utf8))
    exit(2)
}
