import HitchTrace
import Observation
import Testing
@testable import HeadlessUI

struct Item: Identifiable, Equatable {
    var id: Int
    var title: String
}

@MainActor
@Observable
final class ListModel: TracedObservable {
    var items: [Item] = []
    var a = 0
    var b = 0

    static func tracedName(of keyPath: AnyKeyPath) -> TraceName? {
        switch keyPath {
        case \ListModel.items: "ListModel.items"
        case \ListModel.a: "ListModel.a"
        case \ListModel.b: "ListModel.b"
        default: nil
        }
    }

    func withMutation<Member, Result>(keyPath: KeyPath<ListModel, Member>, _ mutation: () throws -> Result) rethrows -> Result {
        try ObservedWrite.writing(Self.tracedName(of: keyPath) ?? "ListModel") {
            try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
        }
    }

    func access<Member>(keyPath: KeyPath<ListModel, Member>) {
        ObservedWrite.accessed(Self.tracedName(of: keyPath))
        _$observationRegistrar.access(self, keyPath: keyPath)
    }
}

struct ItemRow: View, Equatable {
    var item: Item
    var body: some View { Text(item.title, fontSize: 10) }
}

struct ItemList: View {
    let model: ListModel
    var body: some View {
        VStack(spacing: 0) {
            ForEach(model.items) { ItemRow(item: $0) }
        }
    }
}

struct ReadsA: View { let model: ListModel; var body: some View { Text("a \(model.a)") } }
struct ReadsB: View { let model: ListModel; var body: some View { Text("b \(model.b)") } }
struct ReadsBoth: View { let model: ListModel; var body: some View { Text("\(model.a) \(model.b)") } }
struct Readers: View {
    let model: ListModel
    var body: some View {
        VStack {
            ReadsA(model: model)
            ReadsB(model: model)
            ReadsBoth(model: model)
        }
    }
}

@MainActor
@Suite struct IdentityAndDiffingTests {
    func makeHost(_ items: [Item]) -> (ViewHost, ListModel) {
        let model = ListModel()
        model.items = items
        let host = ViewHost(root: ItemList(model: model), configuration: HostConfiguration(viewport: Size(width: 200, height: 2000)))
        _ = host.update()
        host.resetStatistics()
        return (host, model)
    }

    let five = (0..<5).map { Item(id: $0, title: "row \($0)") }

    @Test func insertBuildsOnlyTheNewRow() {
        let (host, model) = makeHost(five)
        model.items.insert(Item(id: 99, title: "new"), at: 2)
        _ = host.update()
        #expect(host.statistics.bodyEvaluations["ItemRow"] == 1)
        #expect(host.statistics.nodesTornDown == 0)
        #expect(host.layoutFrames().filter { $0.type == "ItemRow" }.count == 6)
    }

    @Test func deleteTearsDownOnlyTheRemovedRow() {
        let (host, model) = makeHost(five)
        model.items.remove(at: 1)
        _ = host.update()
        #expect(host.statistics.bodyEvaluations["ItemRow"] == nil)
        #expect(host.statistics.nodesTornDown == 2)  // the row and its Text
        #expect(host.statistics.nodesBuilt == 0)
    }

    @Test func moveKeepsEveryRow() {
        let (host, model) = makeHost(five)
        model.items.reverse()
        _ = host.update()
        #expect(host.statistics.nodesBuilt == 0)
        #expect(host.statistics.nodesTornDown == 0)
        #expect(host.statistics.bodyEvaluations["ItemRow"] == nil)
        let titles = host.layoutFrames().filter { $0.type == "ItemRow" }.map(\.frame.origin.y)
        #expect(titles == titles.sorted())
    }

    @Test func changedRowUpdatesInPlace() {
        let (host, model) = makeHost(five)
        model.items[3].title = "changed"
        _ = host.update()
        #expect(host.statistics.bodyEvaluations["ItemRow"] == 1)
        #expect(host.statistics.nodesBuilt == 0)
    }

    @Test func unstableIDsReplaceEveryRow() {
        let (host, model) = makeHost(five)
        model.items = model.items.map { Item(id: $0.id + 1000, title: $0.title) }
        _ = host.update()
        #expect(host.statistics.bodyEvaluations["ItemRow"] == 5)
        #expect(host.statistics.nodesTornDown == 10)
        #expect(host.statistics.nodesBuilt == 10)
    }
}

@MainActor
@Suite struct ObservationTests {
    @Test func writeInvalidatesExactlyItsReaders() {
        let model = ListModel()
        let host = ViewHost(root: Readers(model: model))
        host.recordsInvalidations = true
        _ = host.update()
        host.resetStatistics()

        model.a = 1
        _ = host.update()
        #expect(Set(host.statistics.invalidations.map(\.targetType)) == ["ReadsA", "ReadsBoth"])
        #expect(host.statistics.invalidations.allSatisfy { $0.source == "ListModel.a" })
        #expect(host.statistics.bodyEvaluations == ["ReadsA": 1, "ReadsBoth": 1])

        host.resetStatistics()
        model.b = 1
        _ = host.update()
        #expect(Set(host.statistics.invalidations.map(\.targetType)) == ["ReadsB", "ReadsBoth"])
        #expect(host.statistics.invalidations.allSatisfy { $0.source == "ListModel.b" })

        host.resetStatistics()
        _ = host.update()
        #expect(host.statistics.bodyEvaluations.isEmpty)
    }

    /// A write to a model that does not name its writes is "unknown", never the traced property a
    /// body read last (the demo showed a transcript's writes blamed on an earlier feed model).
    @Test func unnamedWriterIsUnknownNotTheLastPropertyRead() {
        let named = ListModel()
        let unnamed = PlainCounter()
        let host = ViewHost(root: ReadsBothModels(named: named, unnamed: unnamed))
        host.recordsInvalidations = true
        _ = host.update()
        host.resetStatistics()
        unnamed.count += 1
        _ = host.update()
        #expect(host.statistics.invalidations.map(\.source) == ["unknown"])
        host.resetStatistics()
        named.a += 1   // in place: `_modify` -> access, then willSet
        _ = host.update()
        #expect(host.statistics.invalidations.map(\.source) == ["ListModel.a"])
    }
}

@MainActor @Observable final class PlainCounter { var count = 0 }
struct ReadsBothModels: View {
    let named: ListModel
    let unnamed: PlainCounter
    var body: some View { Text("\(named.a) \(unnamed.count)") }
}

struct NumberRow: View, Equatable {
    var number: Int
    var body: some View { Text("row \(number)", fontSize: 10).frame(height: 50) }
}

struct NumberList: View {
    let numbers: [Int]
    let position: ScrollPosition
    var body: some View {
        LazyList(position: position, overscan: 100, rows: ForEach(numbers, id: \.self) { NumberRow(number: $0) })
    }
}

@MainActor
@Suite struct LazyListTests {
    @Test func materializesOnlyRowsNearTheViewport() {
        let position = ScrollPosition()
        let host = ViewHost(root: NumberList(numbers: Array(0..<10_000), position: position),
                            configuration: HostConfiguration(viewport: Size(width: 300, height: 400)))
        _ = host.update()
        // 400 points of viewport + 100 of overscan below, 50-point rows: about 10.
        #expect(position.materializedRows.lowerBound == 0)
        #expect((8...12).contains(position.materializedRows.count))
        #expect(host.statistics.bodyEvaluations["NumberRow"] == position.materializedRows.count)
        #expect(position.contentHeight == 500_000)

        host.resetStatistics()
        position.offset = 250_000
        _ = host.update()
        #expect(position.materializedRows.contains(5_000))
        #expect((10...14).contains(position.materializedRows.count))
        #expect(host.nodeCount < 60)
        let rowFrames = host.layoutFrames().filter { $0.type == "NumberRow" }
        #expect(rowFrames.contains { $0.frame.origin.y == 0 })
        #expect(host.statistics.nodesTornDown > 0)
    }
}

@MainActor
@Suite struct LayoutTests {
    struct Nested: View {
        var body: some View {
            VStack(spacing: 4) {
                HStack(spacing: 10) {
                    ColorView(.black, size: Size(width: 40, height: 40))
                    Text("Hello", fontSize: 10)
                    Spacer()
                }
                Text("Second line", fontSize: 20)
            }
            .padding(5)
        }
    }

    @Test func nestedStacksNegotiateSizes() {
        let host = ViewHost(root: Nested(), configuration: HostConfiguration(viewport: Size(width: 200, height: 300)))
        _ = host.update()
        let frames = host.layoutFrames()
        let color = frames.first { $0.type == "ColorView" }!.frame
        let texts = frames.filter { $0.type == "Text" }.map(\.frame)
        let spacer = frames.first { $0.type == "Spacer" }!.frame
        #expect(color == Rect(x: 5, y: 5, width: 40, height: 40))
        // "Hello" at 10 pt: H .64 + e,l,l,o (.53 .28 .28 .53) em = 22.6 -> 23 wide, 12 high, centred on the row.
        #expect(texts[0] == Rect(x: 55, y: 19, width: 23, height: 12))
        // The spacer takes the rest of the 190-point row.
        #expect(spacer.minX == 88)
        #expect(spacer.size.width == 107)
        #expect(texts[1].origin == Point(x: 5, y: 49))
        #expect(texts[1].size.height == 24)
    }

    @Test func textWrapsToTheProposedWidth() {
        let lines = TextMetrics.lines("one two three four five six", fontSize: 10, width: 40, lineLimit: nil)
        #expect(lines.count > 2)
        #expect(lines.allSatisfy { $0.width <= 40 })
        let limited = TextMetrics.lines("one two three four five six", fontSize: 10, width: 40, lineLimit: 2)
        #expect(limited.count == 2)
        #expect(TextMetrics.lines("one two", fontSize: 10, width: nil, lineLimit: nil).count == 1)
    }
}

/// The render server's back-pressure: a rendered frame whose present vsync has come counts as on
/// screen even before the render thread wakes to present it, so the display link and the present
/// sharing a vsync cannot cost the app a frame.
@Suite struct RenderThreadTests {
    @Test func aFrameIsOnScreenFromItsPresentVsync() throws {
        let period: Int64 = 50_000_000   // 50 ms: wide, so a slow CI machine keeps the order
        let origin = MonotonicClock.nowNs()
        let renderer = RenderThread(viewport: Size(width: 10, height: 10), periodNs: period, gridOriginNs: origin, onPresent: nil)
        renderer.start()
        defer { _ = renderer.finish() }
        let committed = MonotonicClock.nowNs()
        renderer.submit(frameID: 1, list: DisplayList(viewport: Size(width: 10, height: 10)), committedNs: committed)
        #expect(renderer.framesInFlight(atNs: committed) == 1)
        // Rendering starts at the first vsync after the commit and presents at the one after that.
        let renderStart = origin + ((committed - origin) / period + 1) * period
        let present = renderStart + period
        // Until the render thread has rendered the frame, it is in flight whatever the time.
        // After rendering (well before `present`), the frame counts as on screen from `present` on.
        MonotonicClock.sleep(untilNs: renderStart + period / 2)
        #expect(renderer.framesInFlight(atNs: present - 1) == 1)
        #expect(renderer.framesInFlight(atNs: present) == 0)
        MonotonicClock.sleep(untilNs: present + period / 2)
        #expect(renderer.framesInFlight(atNs: MonotonicClock.nowNs()) == 0)
    }
}

struct HeightRow: View, Equatable {
    var number: Int
    var body: some View { Text("row \(number)", fontSize: 10).frame(height: number % 3 == 0 ? 80 : 50) }
}

struct HeightList: View {
    let model: ListModel
    let position: ScrollPosition
    var body: some View {
        LazyList(position: position, spacing: 2, overscan: 0, rows: ForEach(model.items) { HeightRow(number: $0.id) })
    }
}

/// New data and scrolling cost what changes on screen: rows are matched by id only among the
/// materialized ones, only rows that come into view are built and measured, and the content
/// height kept as rows are measured equals the full sum.
@MainActor
@Suite struct LazyListWorkTests {
    func makeHost(count: Int) -> (ViewHost, ListModel, ScrollPosition) {
        let model = ListModel()
        model.items = (0..<count).map { Item(id: $0, title: "") }
        let position = ScrollPosition()
        let host = ViewHost(root: HeightList(model: model, position: position),
                            configuration: HostConfiguration(viewport: Size(width: 300, height: 400)))
        // The first frame materializes rows at the default estimate; the second at measured heights.
        _ = host.update()
        _ = host.update()
        host.resetStatistics()
        return (host, model, position)
    }

    @Test func newDataKeepsVisibleRowsByIDAndBuildsOnlyNewOnes() {
        let (host, model, position) = makeHost(count: 10_000)
        let visible = position.materializedRows
        // A new snapshot: one row inserted at the top, everything else the same rows by id.
        model.items.insert(Item(id: 50_000, title: ""), at: 0)
        _ = host.update()
        #expect(host.statistics.bodyEvaluations["HeightRow"] == 1)
        #expect(host.statistics.nodesBuilt == 3)   // the new row, its frame and its Text
        // The row pushed out at the bottom (if any) is torn down with its two children.
        #expect(host.statistics.nodesTornDown % 3 == 0)
        #expect(position.materializedRows.lowerBound == 0)
        #expect(!visible.isEmpty)
    }

    @Test func newDataWithOtherIDsReplacesOnlyTheVisibleRows() {
        let (host, model, position) = makeHost(count: 10_000)
        model.items = (0..<10_000).map { Item(id: $0 + 100_000, title: "") }
        _ = host.update()
        let rows = position.materializedRows.count
        #expect(host.statistics.bodyEvaluations["HeightRow"] == rows)
        #expect(host.statistics.nodesBuilt == 3 * rows)
        #expect(host.nodeCount < 3 * rows + 10)
    }

    @Test func scrollingBuildsOnlyRowsThatComeIntoView() {
        let (host, _, position) = makeHost(count: 10_000)
        let before = position.materializedRows
        position.offset = 300   // a few rows
        _ = host.update()
        let after = position.materializedRows
        let entered = after.filter { !before.contains($0) }.count
        let left = before.filter { !after.contains($0) }.count
        #expect(entered > 0)
        #expect(host.statistics.bodyEvaluations["HeightRow"] == entered)
        #expect(host.statistics.nodesBuilt == 3 * entered)
        #expect(host.statistics.nodesTornDown == 3 * left)
        // Once the new rows' measured heights have settled the range, a frame with nothing new
        // does no diff and evaluates nothing.
        _ = host.update()
        host.resetStatistics()
        _ = host.update()
        #expect(host.statistics.bodyEvaluations.isEmpty)
        #expect(host.statistics.nodesBuilt == 0 && host.statistics.nodesTornDown == 0)
        #expect(host.lastFrameCost.diffNs == 0)
    }

    @Test func contentHeightFollowsMeasuredRowsAndRowsStayContiguous() {
        let (host, _, position) = makeHost(count: 300)
        // Scroll down in steps and back: every row gets measured once.
        var offset = 0.0
        while offset < 30_000 {
            offset += 350
            position.offset = offset
            _ = host.update()
            let frames = host.layoutFrames().filter { $0.type == "HeightRow" }.map(\.frame)
            for (upper, lower) in zip(frames, frames.dropFirst()) { #expect(abs(lower.minY - (upper.maxY + 2)) < 1e-6) }
        }
        let rowHeights: Double = (0..<300).reduce(0.0) { sum, row in sum + (row % 3 == 0 ? 80.0 : 50.0) }
        let exact: Double = rowHeights + 2.0 * 299
        #expect(position.contentHeight == exact)
        #expect(position.offset == exact - 400)
        position.offset = 1_000
        _ = host.update()
        let first = host.layoutFrames().first { $0.type == "HeightRow" }!.frame
        #expect(first.minY <= 0 && first.maxY >= 0)
    }
}
