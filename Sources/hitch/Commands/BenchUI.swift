import Foundation
import HitchAnalysis
import HeadlessUI
import HitchWorkloads
import Synchronization

// `hitch bench ui`: the headless runtime's per-frame cost for the feed's scripted session (typing
// a query, then flings) over 10,000 rows, stepped on a fixed frame clock instead of a display
// link, so every run does the same work: search results and thumbnails arrive at the start of the
// frame after they were asked for. Only `ViewHost.update()` is measured (update, diff, layout,
// display list); the input, the search pipeline and image decoding run between frames.
enum BenchUI: Subcommand {
    static let name = "ui"
    static let summary = "Headless UI runtime cost per frame (update, diff, layout, display list, allocations)."
    static let help = """
    USAGE: hitch bench ui [--variant tuned|naive] [--seconds S] [--refresh HZ] [--format text|json]

    Runs the feed's scripted session (the query typed one character at a time, then drags and
    flings) over 10,000 rows on a fixed frame clock of HZ frames per second of session time, and
    measures each frame's `ViewHost.update()`: nanoseconds in update (invalidations and bodies),
    diff (children matched by identity), layout and display list, as mean and P99 over the frames
    after the first (the first builds the screen and is reported alone), and the heap allocations
    per frame made by the Swift runtime (its calls of malloc and the other allocators, counted by
    hooking them in libswiftCore's offset table: every class instance, array, dictionary and
    string buffer, box and closure context; not allocations C libraries make for themselves).

    OPTIONS:
      --variant tuned|naive  The screen to drive (default tuned). naive's rows decode their
                             thumbnail in the body, so its update time is mostly that decoding.
      --seconds S            Session length on the frame clock, 2 to 120 (default 12).
      --refresh HZ           Frames per second of session time, 1 to 1000 (default 120).
      --format text|json     Output format (default: text).
      -h, --help             Show this help.

    EXAMPLE:
      hitch bench ui --format json
    """

    struct Distribution: Codable {
        var mean, p99, max: Double
    }

    struct Result: Codable {
        var variant: String
        var rows, refreshHz, frames, keystrokes, publishedSnapshots, rowsBuilt: Int
        var firstFrameNs: Int64
        var updateNs, diffNs, layoutNs, displayListNs, totalNs, allocationsPerFrame: Distribution
        var allocationCounter: String
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let variantName = try arguments.choice("--variant", ["tuned", "naive"], default: "tuned")
        let seconds = try arguments.number("--seconds", in: 2.0...120.0, default: 12.0)
        let refresh = try arguments.recordingRefreshRate()
        guard try arguments.positionals().isEmpty else { throw CLIError("'hitch bench ui' takes no arguments (see --help)") }
        let result = try MainActor.assumeIsolated {
            try measure(variant: FeedVariant(rawValue: variantName)!, seconds: seconds, refreshHz: refresh)
        }
        if format == "json" {
            try writeStandardOutput(JSONOutput.text(result))
        } else {
            func line(_ name: String, _ d: Distribution) -> String {
                name.padding(toLength: 14, withPad: " ", startingAt: 0)
                    + String(format: "mean %9.0f   p99 %9.0f   max %9.0f", d.mean, d.p99, d.max)
            }
            try writeStandardOutputLine("""
            session       \(result.variant), \(result.rows) rows, \(result.frames) frames at \(result.refreshHz) Hz, \
            \(result.keystrokes) keystrokes, \(result.publishedSnapshots) snapshots, \(result.rowsBuilt) rows built
            first frame   \(result.firstFrameNs) ns
            \(line("update ns", result.updateNs))
            \(line("diff ns", result.diffNs))
            \(line("layout ns", result.layoutNs))
            \(line("display ns", result.displayListNs))
            \(line("total ns", result.totalNs))
            \(line("allocations", result.allocationsPerFrame))
            """)
        }
        return .ok
    }

    @MainActor
    static func measure(variant: FeedVariant, seconds: Double, refreshHz: Double) throws -> Result {
        let workload = FeedWorkload(configuration: FeedConfiguration(variant: variant, refreshRateHz: refreshHz, seconds: seconds))
        // Rows share a pool of PNGs (one buffer each): decode each once up front, so a row's
        // thumbnail costs the bench a lookup, not a decode, inside the measured frame.
        var decoded: [UInt: ImagePixels?] = [:]
        for item in workload.items {
            let address = bufferAddress(item.thumbnailPNG)
            if decoded[address] == nil { decoded[address] = .some(ThumbnailDecoder.decodeForDisplay(item.thumbnailPNG)) }
        }
        let table = decoded
        let thumbnails = ThumbnailCache(deferredDecode: { png in table[bufferAddress(png)] ?? ThumbnailDecoder.decodeForDisplay(png) })
        let session = workload.makeSession(hostConfiguration: HostConfiguration(refreshRateHz: refreshHz),
                                           searchRunner: ImmediateSearchRunner(items: workload.items), thumbnails: thumbnails)
        let host = session.host
        guard AllocationCounter.install() else { throw CLIError("cannot hook libswiftCore's allocation calls to count them") }

        let frameCount = Int(seconds * refreshHz)
        var costs: [FrameCost] = []
        var allocations: [Double] = []
        costs.reserveCapacity(frameCount)
        allocations.reserveCapacity(frameCount)
        var firstFrameNs: Int64 = 0
        for frame in 0..<frameCount {
            // What arrived since the last frame: search results (main-actor tasks) and thumbnails.
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0))
            thumbnails.deliverPending()
            session.beginFrame(elapsedSeconds: Double(frame) / refreshHz)
            let before = AllocationCounter.count
            _ = host.update()
            let allocated = AllocationCounter.count - before
            if frame == 0 {
                firstFrameNs = host.lastFrameCost.totalNs
                host.resetStatistics()
                continue
            }
            costs.append(host.lastFrameCost)
            allocations.append(Double(allocated))
        }
        let summary = session.summary
        return Result(variant: variant.rawValue, rows: workload.items.count, refreshHz: Int(refreshHz), frames: costs.count,
                      keystrokes: session.keystrokes, publishedSnapshots: summary.published,
                      rowsBuilt: host.statistics.bodyEvaluations["FeedRow", default: 0], firstFrameNs: firstFrameNs,
                      updateNs: distribution(costs.map { Double($0.updateNs) }),
                      diffNs: distribution(costs.map { Double($0.diffNs) }),
                      layoutNs: distribution(costs.map { Double($0.layoutNs) }),
                      displayListNs: distribution(costs.map { Double($0.displayListNs) }),
                      totalNs: distribution(costs.map { Double($0.totalNs) }),
                      allocationsPerFrame: distribution(allocations),
                      allocationCounter: "malloc, calloc, realloc, posix_memalign and aligned_alloc calls made by libswiftCore (every Swift heap allocation) during update()")
    }

    /// Mean, P99 (nearest rank) and maximum.
    static func distribution(_ values: [Double]) -> Distribution {
        guard !values.isEmpty else { return Distribution(mean: 0, p99: 0, max: 0) }
        let sorted = values.sorted()
        let rank = Int((0.99 * Double(sorted.count)).rounded(.up)) - 1
        return Distribution(mean: sorted.reduce(0, +) / Double(sorted.count), p99: sorted[max(0, rank)], max: sorted.last!)
    }

    private static func bufferAddress(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}

/// Runs the search pipeline at once on the calling thread; the coordinator still publishes the
/// result through a main-actor task, which the bench runs before the next frame.
private struct ImmediateSearchRunner: SearchRunner {
    let items: [FeedItem]
    let index: SearchIndex
    init(items: [FeedItem]) {
        self.items = items
        index = SearchIndex(items: items)
    }
    func run(query: String, generation: UInt64, isStale: @escaping @Sendable () -> Bool,
             completion: @escaping @Sendable (FeedSnapshot?) -> Void) {
        completion(FeedPipeline.run(query: query, items: items, index: index, generation: generation, identity: .stable,
                                    isStale: isStale))
    }
}

/// Counts the Swift runtime's heap allocations: the calls libswiftCore makes to malloc, calloc,
/// realloc, posix_memalign and aligned_alloc, by pointing those entries of its global offset table
/// at counting wrappers (what a PLT hook does). Every Swift heap allocation goes through there
/// (`swift_slowAlloc`): class instances, array, string and dictionary buffers, boxes and closure
/// contexts. Allocations C libraries make for themselves are not counted. (The runtime's own
/// `_swift_allocObject` hook would be simpler, but the Swift 6.3 Linux runtime faults once it is
/// replaced: its retain adapter over-masks small-string payloads.)
enum AllocationCounter {
    private static let calls = Atomic<Int>(0)
    private static let installed = Atomic<Bool>(false)
    // Filled once by `install()` before any wrapper can run; read-only afterwards.
    private static let originalMalloc = Atomic<UInt>(0)
    private static let originalCalloc = Atomic<UInt>(0)
    private static let originalRealloc = Atomic<UInt>(0)
    private static let originalPosixMemalign = Atomic<UInt>(0)
    private static let originalAlignedAlloc = Atomic<UInt>(0)

    typealias Malloc = @convention(c) (Int) -> UnsafeMutableRawPointer?
    typealias Calloc = @convention(c) (Int, Int) -> UnsafeMutableRawPointer?
    typealias Realloc = @convention(c) (UnsafeMutableRawPointer?, Int) -> UnsafeMutableRawPointer?
    typealias PosixMemalign = @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int, Int) -> Int32
    typealias AlignedAlloc = @convention(c) (Int, Int) -> UnsafeMutableRawPointer?

    static var count: Int { calls.load(ordering: .relaxed) }

    /// Hooks libswiftCore's allocation entries once; false if its GOT could not be found or patched.
    static func install() -> Bool {
        if installed.load(ordering: .acquiring) { return true }
        let countingMalloc: Malloc = { size in
            AllocationCounter.calls.add(1, ordering: .relaxed)
            return unsafeBitCast(AllocationCounter.originalMalloc.load(ordering: .relaxed), to: Malloc.self)(size)
        }
        let countingCalloc: Calloc = { count, size in
            AllocationCounter.calls.add(1, ordering: .relaxed)
            return unsafeBitCast(AllocationCounter.originalCalloc.load(ordering: .relaxed), to: Calloc.self)(count, size)
        }
        let countingRealloc: Realloc = { pointer, size in
            AllocationCounter.calls.add(1, ordering: .relaxed)
            return unsafeBitCast(AllocationCounter.originalRealloc.load(ordering: .relaxed), to: Realloc.self)(pointer, size)
        }
        let countingPosixMemalign: PosixMemalign = { result, alignment, size in
            AllocationCounter.calls.add(1, ordering: .relaxed)
            return unsafeBitCast(AllocationCounter.originalPosixMemalign.load(ordering: .relaxed), to: PosixMemalign.self)(result, alignment, size)
        }
        let countingAlignedAlloc: AlignedAlloc = { alignment, size in
            AllocationCounter.calls.add(1, ordering: .relaxed)
            return unsafeBitCast(AllocationCounter.originalAlignedAlloc.load(ordering: .relaxed), to: AlignedAlloc.self)(alignment, size)
        }
        // The originals are libc's own, looked up by name, so the wrappers work whichever slot
        // (lazy PLT or GOT) the runtime's calls use.
        let entries: [(name: String, wrapper: UInt)] = [
            ("malloc", unsafeBitCast(countingMalloc, to: UInt.self)),
            ("calloc", unsafeBitCast(countingCalloc, to: UInt.self)),
            ("realloc", unsafeBitCast(countingRealloc, to: UInt.self)),
            ("posix_memalign", unsafeBitCast(countingPosixMemalign, to: UInt.self)),
            ("aligned_alloc", unsafeBitCast(countingAlignedAlloc, to: UInt.self)),
        ]
        for (name, _) in entries {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return false }
            let address = UInt(bitPattern: symbol)
            switch name {
            case "malloc": originalMalloc.store(address, ordering: .relaxed)
            case "calloc": originalCalloc.store(address, ordering: .relaxed)
            case "realloc": originalRealloc.store(address, ordering: .relaxed)
            case "posix_memalign": originalPosixMemalign.store(address, ordering: .relaxed)
            default: originalAlignedAlloc.store(address, ordering: .relaxed)
            }
        }
        let wrappers = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0.wrapper) })
        guard let patched = GOTPatcher.patch(library: "libswiftCore.so", symbols: wrappers), patched > 0 else { return false }
        installed.store(true, ordering: .releasing)
        return true
    }
}

/// Rewrites entries of one loaded library's global offset table: the JUMP_SLOT and GLOB_DAT
/// relocations (x86-64 ELF) that name the given symbols. The library's tables are read from its
/// loaded ELF header (found in /proc/self/maps) and dynamic section.
private enum GOTPatcher {
    // ELF64 constants and field offsets (elf.h), spelled here because Glibc's module has no elf.h.
    static let programHeaderDynamic: UInt32 = 2                  // PT_DYNAMIC
    static let tagNull: Int64 = 0, tagPLTRelocationSize: Int64 = 2, tagStringTable: Int64 = 5
    static let tagSymbolTable: Int64 = 6, tagRelocations: Int64 = 7, tagRelocationSize: Int64 = 8
    static let tagJumpRelocations: Int64 = 23
    static let relocationJumpSlot: UInt64 = 7, relocationGlobalData: UInt64 = 6
    static let relocationSize = 24, symbolSize = 24, dynamicSize = 16

    /// Points every GOT slot of `library` for a symbol in `symbols` at its new address; returns the
    /// number of slots written, or nil if the library is not mapped or cannot be read.
    static func patch(library: String, symbols: [String: UInt]) -> Int? {
        // The library's first mapping (file offset 0) starts at its ELF header.
        guard let maps = readProcFile("/proc/self/maps"),
              let line = maps.split(separator: "\n").first(where: { $0.hasSuffix("/" + library) && $0.split(separator: " ")[2] == "00000000" }),
              let start = line.split(separator: "-").first, let headerAddress = UInt(start, radix: 16),
              let header = UnsafeRawPointer(bitPattern: headerAddress) else { return nil }
        let base = UInt(bitPattern: header)
        guard header.load(as: UInt32.self) == 0x464C_457F else { return nil }   // "\u{7F}ELF"
        let programHeaders = header + Int(header.load(fromByteOffset: 32, as: UInt64.self))
        let headerSize = Int(header.load(fromByteOffset: 54, as: UInt16.self))
        let headerCount = Int(header.load(fromByteOffset: 56, as: UInt16.self))
        var dynamic: UnsafeRawPointer?
        for index in 0..<headerCount {
            let programHeader = programHeaders + index * headerSize
            if programHeader.load(as: UInt32.self) == programHeaderDynamic {
                dynamic = UnsafeRawPointer(bitPattern: base + UInt(programHeader.load(fromByteOffset: 16, as: UInt64.self)))
            }
        }
        guard var entry = dynamic else { return nil }
        // The loader has relocated these pointers on x86-64 glibc; a value below the base is not.
        func absolute(_ value: UInt64) -> UInt { UInt(value) < base ? base + UInt(value) : UInt(value) }
        var symbolTable: UInt = 0, stringTable: UInt = 0
        var jumpRelocations: UInt = 0, jumpSize = 0, relocations: UInt = 0, relocationBytes = 0
        while true {
            let tag = entry.load(as: Int64.self), value = entry.load(fromByteOffset: 8, as: UInt64.self)
            if tag == tagNull { break }
            switch tag {
            case tagSymbolTable: symbolTable = absolute(value)
            case tagStringTable: stringTable = absolute(value)
            case tagJumpRelocations: jumpRelocations = absolute(value)
            case tagPLTRelocationSize: jumpSize = Int(value)
            case tagRelocations: relocations = absolute(value)
            case tagRelocationSize: relocationBytes = Int(value)
            default: break
            }
            entry += dynamicSize
        }
        guard symbolTable != 0, stringTable != 0 else { return nil }
        let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var written = 0
        for (table, bytes) in [(jumpRelocations, jumpSize), (relocations, relocationBytes)] where table != 0 {
            for index in 0..<(bytes / relocationSize) {
                let relocation = UnsafeRawPointer(bitPattern: table + UInt(index * relocationSize))!
                let offset = relocation.load(as: UInt64.self), info = relocation.load(fromByteOffset: 8, as: UInt64.self)
                guard info & 0xffff_ffff == relocationJumpSlot || info & 0xffff_ffff == relocationGlobalData else { continue }
                let symbol = UnsafeRawPointer(bitPattern: symbolTable + UInt(Int(info >> 32) * symbolSize))!
                let nameOffset = UInt(symbol.load(as: UInt32.self))
                let name = String(cString: UnsafePointer<CChar>(bitPattern: stringTable + nameOffset)!)
                guard let replacement = symbols[name] else { continue }
                let slot = base + UInt(offset)
                // Full RELRO leaves the GOT read-only after loading.
                let page = slot & ~(pageSize - 1)
                guard mprotect(UnsafeMutableRawPointer(bitPattern: page), Int(pageSize), PROT_READ | PROT_WRITE) == 0 else { continue }
                UnsafeMutablePointer<UInt>(bitPattern: slot)!.pointee = replacement
                written += 1
            }
        }
        return written
    }

    /// A /proc file read to its end (its size reads as 0, so size-based readers get nothing).
    private static func readProcFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
