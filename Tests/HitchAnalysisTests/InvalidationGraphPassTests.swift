import Foundation
import Testing
import HitchReader
import HitchTrace
@testable import HitchAnalysis

@Suite struct InvalidationGraphPassTests {
    @Test func invalidationGraphWithSourcesFromEventsAndBacktraces() throws {
        var b = TraceBuilder()
        let query = b.list.intern("FeedModel.query"), scroll = b.list.intern("FeedModel.scrollOffset")
        let row = b.list.intern("FeedRow"), header = b.list.intern("Header"), empty = b.list.intern("")
        for i in 0..<3 { b.list.append(Int64(i), b.main, .invalidation(Invalidation(source: query, target: row, targetIdentity: UInt64(i), stack: nil))) }
        b.list.append(10, b.main, .invalidation(Invalidation(source: query, target: header, targetIdentity: 9, stack: nil)))
        b.list.append(11, b.main, .invalidation(Invalidation(source: scroll, target: row, targetIdentity: 1, stack: nil)))
        // A source known only from the writer's stack: recorder frame, setter, caller.
        let recorderFn = b.list.intern("HitchTrace.Trace.invalidation"), setter = b.list.intern("FeedModel.query.setter")
        let caller = b.list.intern("SearchField.onKeystroke"), image = b.list.intern("hitch")
        b.list.append(0, b.main, .symbol(Symbol(address: 0x1000, size: 0x100, function: recorderFn, image: image, offset: 0)))
        b.list.append(0, b.main, .symbol(Symbol(address: 0x2000, size: 0x100, function: setter, image: image, offset: 0)))
        b.list.append(0, b.main, .symbol(Symbol(address: 0x3000, size: 0x100, function: caller, image: image, offset: 0)))
        b.list.append(0, b.main, .stackDefinition(stack: StackID(rawValue: 4), addresses: [0x1010, 0x2020, 0x3030]))
        b.list.append(12, b.main, .invalidation(Invalidation(source: empty, target: row, targetIdentity: 5, stack: StackID(rawValue: 4))))
        let a = try b.analyze()
        #expect(a.invalidations.first?.source == "FeedModel.query")
        #expect(a.invalidations.first?.target == "FeedRow")
        #expect(a.invalidations.first?.count == 3)
        let fromStack = try #require(a.invalidations.first { $0.writer != nil })
        #expect(fromStack.source == "FeedModel.query.setter")
        #expect(fromStack.writer == "FeedModel.query.setter")
        #expect(a.invalidationSources.first?.source == "FeedModel.query")
        #expect(a.invalidationSources.first?.invalidations == 4)
        #expect(a.invalidationSources.first?.targetTypes == 2)
    }
}
