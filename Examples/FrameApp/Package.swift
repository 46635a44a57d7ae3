// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FrameApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Your copy of Hitch's repository, by version (scripts/check-example-app.sh points this
        // at a tagged local clone).
        .package(url: "https://example.com/hitch.git", from: "0.1.0"),
    ],
    targets: [
        .executableTarget(name: "FrameApp", dependencies: [.product(name: "HitchTrace", package: "hitch")]),
    ],
    swiftLanguageModes: [.v6]
)
