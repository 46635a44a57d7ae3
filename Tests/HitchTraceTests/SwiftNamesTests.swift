import Testing
import HitchReader
@testable import HitchTrace

/// Names as the runtime's demangler wrote them into Traces/*.fxt, and what Instruments (and
/// `swift demangle --simplified`, keeping the module) shows for them.
@Suite struct SwiftNamesTests {
    @Test(arguments: [
        ("function signature specialization <Arg[1] = Dead> of static HitchWorkloads.FeedPipeline.normalize(Swift.String) -> Swift.Array<Swift.UInt8>",
         "HitchWorkloads.FeedPipeline.normalize(_:)"),
        ("HeadlessUI.ViewGraph.place(_: HeadlessUI.ViewNode, in: HeadlessUI.Rect) -> ()", "HeadlessUI.ViewGraph.place(_:in:)"),
        ("HeadlessUI.ViewGraph.update(HeadlessUI.ViewNode) -> ()", "HeadlessUI.ViewGraph.update(_:)"),
        ("partial apply forwarder for closure #1 @Swift.MainActor () -> () in closure #1 () -> () in HeadlessUI.ViewHost.run(maxSeconds: Swift.Double, until: @Swift.MainActor @Sendable () -> Swift.Bool) -> HeadlessUI.FrameLoopSummary",
         "closure #1 in closure #1 in HeadlessUI.ViewHost.run(maxSeconds:until:)"),
        ("merged generic specialization <hitch.BenchCommand> of closure #1 @Sendable (inout hitch.Arguments) throws -> hitch.ExitCode in static (extension in hitch):hitch.Subcommand.entry.getter : hitch.SubcommandEntry",
         "closure #1 in hitch.Subcommand.entry.getter"),
        ("generic specialization <hitch.ExitCode> of static Swift.MainActor.assumeIsolated<A where A: Swift.Sendable>(_: @Swift.MainActor () throws -> A, file: Swift.StaticString, line: Swift.UInt) throws -> A",
         "Swift.MainActor.assumeIsolated<A>(_:file:line:)"),
        ("HeadlessUI.ViewHost.(runFrame in _6FEE125EA23F7A30B4C4C15F3B86D7EE)(_: HeadlessUI.FrameTiming, renderer: HeadlessUI.RenderThread) -> ()",
         "HeadlessUI.ViewHost.runFrame(_:renderer:)"),
        ("function signature specialization <Arg[0] = Existential To Protocol Constrained Generic> of function signature specialization <Arg[3] = Stack Promoted from Box, Arg[4] = Stack Promoted from Box> of visit #1 (_: HeadlessUI.View, key: HeadlessUI.ChildKey, path: Swift.Array<Swift.Int>) -> () in HeadlessUI.flattenChildren(HeadlessUI.View) -> HeadlessUI.ChildList",
         "visit #1 (_:key:path:) in HeadlessUI.flattenChildren(_:)"),
        ("reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_unowned @convention(block) () -> ()", "thunk"),
        ("merged HeadlessUI.VStack.primitive.getter : HeadlessUI.Primitive", "HeadlessUI.VStack.primitive.getter"),
        ("partial apply forwarder for closure #1 (Swift.UnsafeRawBufferPointer) -> () in HitchTrace.ReaderCore.(in _5BA92F3D207C138B0B6DC6405CCABCFD).init(fd: Swift.Int32, capacity: Swift.Int) -> HitchTrace.ReaderCore",
         "closure #1 in HitchTrace.ReaderCore.init(fd:capacity:)"),
        ("(1) await resume partial function for HitchWorkloads.DecodeSession.step(token: Swift.Int) async throws -> ()", "HitchWorkloads.DecodeSession.step(token:)"),
        ("HitchWorkloads.Inflater.(decode in _1A2B3C4D5E6F708192A3B4C5D6E7F809)(HitchWorkloads.(Huffman in _1A2B3C4D5E6F708192A3B4C5D6E7F809)) throws -> Swift.Int",
         "HitchWorkloads.Inflater.decode(_:)"),
        ("Foundation.RunLoop.run(mode: Foundation.RunLoop.Mode, before: FoundationEssentials.Date) -> Swift.Bool", "Foundation.RunLoop.run(mode:before:)"),
        // Demangled C++ names (the Swift runtime's): the qualified name, without parameters,
        // template arguments, return type or qualifiers.
        ("swift::equalContexts(swift::TargetContextDescriptor<swift::InProcess> const*, swift::TargetContextDescriptor<swift::InProcess> const*)",
         "swift::equalContexts"),
        ("void swift::Lazy<swift::ConcurrentReadableHashMap<int, swift::LazyMutex>>::getValue()::{lambda(void*)#1}::operator()(void*) const",
         "swift::Lazy::getValue::{lambda#1}::operator()"),
        ("(anonymous namespace)::TypeCache::lookup(char const*) [clone .cold]", "(anonymous)::TypeCache::lookup"),
        ("std::ostream::operator<<(int)", "std::ostream::operator<<"),
        // Mangled C++ names and plain symbols are left alone (`Symbol.displayName` demangles first).
        ("__libc_start_main", "__libc_start_main"),
        ("_ZL7tryCastPN5swift11OpaqueValueEPKNS_14TargetMetadataINS_9InProcessEEES1_S6_RS6_S7_bbb", "_ZL7tryCastPN5swift11OpaqueValueEPKNS_14TargetMetadataINS_9InProcessEEES1_S6_RS6_S7_bbb"),
    ])
    func simplifiesAsInstrumentsShows(full: String, simplified: String) {
        #expect(SwiftNames.simplified(full) == simplified)
    }

    @Test func displayNameDemanglesCxxNames() {
        // The C++ runtime's __cxa_demangle, then the simplification above.
        let mangled = "_ZN5swift13equalContextsEPKNS_23TargetContextDescriptorINS_9InProcessEEES4_"
        #expect(Symbolicator.demangle(mangled) == "swift::equalContexts(swift::TargetContextDescriptor<swift::InProcess> const*, swift::TargetContextDescriptor<swift::InProcess> const*)")
        #expect(Symbol.displayName(function: mangled, image: "/lib/libswiftCore.so", offset: 0) == "swift::equalContexts")
        #expect(Symbolicator.demangle("_Znot a name") == "_Znot a name")
    }

    @Test func displayNameKeepsTheFullNameWhenAsked() {
        let full = "HeadlessUI.ViewGraph.place(_: HeadlessUI.ViewNode, in: HeadlessUI.Rect) -> ()"
        #expect(Symbol.displayName(function: full, image: "/bin/hitch", offset: 0) == "HeadlessUI.ViewGraph.place(_:in:)")
        #expect(Symbol.displayName(function: full, image: "/bin/hitch", offset: 0, fullNames: true) == full)
        #expect(Symbol.displayName(function: "", image: "/usr/lib/libc.so.6", offset: 0x27249) == "libc.so.6+0x27249")
    }
}
