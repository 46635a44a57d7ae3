// swift-tools-version:6.0
import PackageDescription
import Foundation

// The decode kernels are built for the machine they run on when it has AVX2, FMA and F16C (Haswell
// and later, every current x86-64 server), as llama.cpp's native builds are; the portable x86-64
// baseline (SSE2) otherwise. Only the workloads get this: the recorder and analyzer stay portable.
let cpuFlags = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
    .split(separator: "\n").first(where: { $0.hasPrefix("flags") })?.split(separator: " ").map(String.init) ?? []
let hasHaswellLevel = ["avx2", "fma", "f16c", "bmi2"].allSatisfy(cpuFlags.contains)
let nativeKernelSettings: [SwiftSetting] = hasHaswellLevel ? [.unsafeFlags(["-target-cpu", "haswell"])] : []

// Swift 6 language mode everywhere; the system libraries are libunwind (Debian libunwind-dev), zlib
// (zlib1g-dev, for importing Perfetto traces: HitchImport only) and, for
// `hitch history`, SQLite (libsqlite3-dev) and PostgreSQL's libpq (libpq-dev). The history libraries
// are not linked: CHistoryLibraries compiles against their headers and dlopens them on first use by
// a store, so the other commands do not load libpq's 20-odd dependencies (TLS, Kerberos, LDAP).
// The library products carry no unsafe flags, so another package can depend on Hitch with
// `.package(url: ..., from: "x.y.z")`; only HitchWorkloads, which nothing but the `hitch` executable
// uses, is built with machine-specific flags.
//
// The libraries, by what a user links:
// - HitchTrace: what an app links to record (the recorder, the vocabulary, sampling, the FXT writer).
//   It needs libunwind and nothing else: no reader, no importers, no zlib.
// - HitchReader: reading traces (the FXT reader, the decoded event model, TraceFileWriter for
//   events with explicit times), for a tool of one's own over recorded traces.
// - HitchImport: other tools' traces (Chrome JSON, Perfetto, xctrace, framestats) into FXT, and FXT
//   out to Chrome JSON; it links zlib.
// - HitchAnalysis: the figures (`Analyzer`, `Analysis`).
//
// Platforms: Linux (x86-64) is where this is built and tested. The Apple minimum below is what the
// sources need (Synchronization's Atomic), not a tested platform; README "Platforms" says which
// parts exist where.

let package = Package(
    name: "hitch",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "HitchTrace", targets: ["HitchTrace"]),
        .library(name: "HitchReader", targets: ["HitchReader"]),
        .library(name: "HitchImport", targets: ["HitchImport"]),
        .library(name: "HitchAnalysis", targets: ["HitchAnalysis"]),
        .executable(name: "hitch", targets: ["hitch"]),
    ],
    targets: [
        .systemLibrary(name: "CLibunwind", path: "Sources/CLibunwind",
                       providers: [.apt(["libunwind-dev"])]),
        .target(name: "CHitchSupport", dependencies: ["CLibunwind"], path: "Sources/CHitchSupport",
                linkerSettings: [.linkedLibrary("unwind", .when(platforms: [.linux])),
                                 .linkedLibrary("unwind-x86_64", .when(platforms: [.linux])),
                                 .linkedLibrary("dl", .when(platforms: [.linux])),
                                 // __cxa_demangle for the C++ frames of sampled stacks (the Swift runtime's).
                                 .linkedLibrary("stdc++", .when(platforms: [.linux]))]),
        // zlib (Debian zlib1g-dev) inflates the compressed packets of Perfetto traces on import.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "HitchTrace", dependencies: ["CHitchSupport"]),
        // Small algorithms several modules share (the binary heap, the seeded generator); not a product.
        .target(name: "HitchAlgorithms"),
        .target(name: "HitchReader", dependencies: ["HitchTrace"]),
        // Release builds drop the run-time exclusivity checks here: the importers' state classes
        // touch their dictionaries once per packet or row, and the checks cost them about a tenth
        // of an import. Debug builds (the tests) and the fuzz builds keep them.
        .target(name: "HitchImport", dependencies: ["HitchReader", "HitchTrace", "HitchAlgorithms", "CZlib"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(name: "HitchAnalysis", dependencies: ["HitchReader", "HitchTrace"]),
        .target(name: "HitchReport", dependencies: ["HitchAnalysis", "HitchReader", "HitchTrace"]),
        .target(name: "CHistoryLibraries", path: "Sources/CHistoryLibraries"),
        .target(name: "HitchHistory", dependencies: ["HitchAnalysis", "HitchReport", "CHistoryLibraries"]),
        .target(name: "HeadlessUI", dependencies: ["HitchTrace"]),
        // The int8 dot-product kernels of GGUF models (q4_0, q4_1, q8_0): C with intrinsics, each compiled
        // for AVX512-VNNI, AVX-VNNI and AVX2 by function attributes and chosen at load time by what the
        // CPU reports, so the binary runs anywhere and uses vpdpbusd where it exists. -O2 even in debug
        // builds, where the real-model tests run.
        .target(name: "CHitchKernels", path: "Sources/CHitchKernels",
                cSettings: [.unsafeFlags(["-O2"])]),
        .target(name: "HitchWorkloads", dependencies: ["HeadlessUI", "HitchTrace", "HitchAlgorithms", "CHitchSupport", "CHitchKernels"], swiftSettings: nativeKernelSettings),
        .executableTarget(name: "hitch", dependencies: ["CHitchSupport", "HitchTrace", "HitchAlgorithms", "HitchReader", "HitchImport", "HitchAnalysis", "HitchReport", "HeadlessUI", "HitchWorkloads", "HitchHistory"]),
        // The child process of the recorder's exit, crash and fault tests (TraceExitTests, FaultTests).
        .executableTarget(name: "hitch-record-probe", dependencies: ["HitchTrace"], path: "Tests/RecordProbe"),
        // C++ exceptions thrown and caught under sampling (the sampler storm test); tests only.
        .target(name: "CxxExceptionSupport", path: "Tests/CxxExceptionSupport"),
        // What several test targets share: locating and running the built executables (`hitch`, the
        // probe), a seeded trace with every kind of event, and the file orders the ordering contract
        // speaks of; tests only.
        .target(name: "HitchTestSupport", dependencies: ["HitchAnalysis", "HitchReader", "HitchImport", "HitchTrace", "HitchAlgorithms"], path: "Tests/HitchTestSupport"),
        // The history tests' runs and traces (the store's tests and the CLI's); tests only.
        .target(name: "HitchHistoryTestSupport", dependencies: ["HitchHistory", "HitchAnalysis", "HitchReader"],
                path: "Tests/HitchHistoryTestSupport"),
        // Tests mirror the modules: Tests/<Module>Tests/<Type>Tests.swift.
        .testTarget(name: "HitchTraceTests", dependencies: ["HitchTrace", "HitchReader", "HitchImport", "CHitchSupport", "CxxExceptionSupport", "HitchTestSupport"]),
        .testTarget(name: "HitchReaderTests", dependencies: ["HitchReader", "HitchTrace", "HitchAlgorithms"]),
        .testTarget(name: "HitchImportTests", dependencies: ["HitchImport", "HitchReader", "HitchTrace", "HitchAnalysis", "HitchTestSupport"]),
        .testTarget(name: "HitchAnalysisTests", dependencies: ["HitchAnalysis", "HitchReader", "HitchImport", "HitchTrace", "HitchAlgorithms", "HitchTestSupport"]),
        .testTarget(name: "HitchReportTests", dependencies: ["HitchReport", "HitchAnalysis", "HitchReader", "HitchTrace", "HitchTestSupport"]),
        .testTarget(name: "HitchHistoryTests", dependencies: ["HitchHistory", "HitchAnalysis", "HitchReader", "HitchAlgorithms", "HitchTestSupport",
                                                             "HitchHistoryTestSupport"]),
        .testTarget(name: "HeadlessUITests", dependencies: ["HeadlessUI", "HitchTrace", "HitchReader", "HitchAnalysis"]),
        .testTarget(name: "HitchWorkloadsTests", dependencies: ["HitchWorkloads", "HeadlessUI", "HitchTrace", "HitchReader", "HitchAlgorithms"]),
        // Runs the built `hitch` binary (swift build --build-tests builds it) as a user would: every test
        // that runs the binary lives here.
        .testTarget(name: "HitchCLITests", dependencies: ["HitchAnalysis", "HitchReader", "HitchTrace", "HitchHistory", "HitchTestSupport",
                                                         "HitchHistoryTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
