// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FrameApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Hitch by path: this example lives in Hitch's repository, so it builds from any clone.
        // Your app depends on Hitch by version instead, from your copy of the repository tagged
        // with a release (git tag 0.1.0 && git push origin 0.1.0):
        //     .package(url: "https://github.com/your-org/hitch.git", from: "0.1.0"),
        .package(name: "hitch", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "FrameApp", dependencies: [.product(name: "HitchTrace", package: "hitch")]),
    ],
    swiftLanguageModes: [.v6]
)
