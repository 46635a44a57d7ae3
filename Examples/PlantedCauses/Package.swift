// swift-tools-version:6.0
import PackageDescription

// An app written apart from Hitch's analyzer that plants known causes of late frames in three
// pipeline shapes and records them with HitchTrace, linked as a user's app links it (a path
// dependency on this repository). scripts/check-planted-causes.sh builds it, records each shape,
// and compares what it planted (manifest.json) with `hitch analyze --format json`.
let package = Package(
    name: "PlantedCauses",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "hitch", path: "../.."),
    ],
    targets: [
        // The few Linux calls Swift does not import as functions: pinning a thread to a CPU
        // (CPU_SET), a thread's nice value, O_DIRECT.
        .target(name: "CPlanted"),
        .executableTarget(name: "PlantedCauses", dependencies: [
            "CPlanted", .product(name: "HitchTrace", package: "hitch"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
