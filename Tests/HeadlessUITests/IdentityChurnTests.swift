import Foundation
import HitchAnalysis
import HitchReader
import HitchTrace
import Testing
@testable import HeadlessUI

/// View lifetimes recorded by the runtime, read back by the identity-churn pass.
@MainActor
@Suite(.serialized) struct IdentityChurnRecordingTests {
    @Test func aRowWhoseIDFlipsEveryUpdateIsFlaggedByTypeAndPosition() async {
        await #expect(processExitsWith: .success) { try await Self.aRowWhoseIDFlipsEveryUpdateIsFlaggedByTypeAndPositionRecorded() }
    }

    static func aRowWhoseIDFlipsEveryUpdateIsFlaggedByTypeAndPositionRecorded() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("churn-\(UUID().uuidString).fxt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Suites run in parallel in one process and a recording is process-wide: wait for another's.
        let recorder = try TraceRecorder.start(path: path, configuration: .init(waitForOtherRecordingSeconds: 300))
        let model = ListModel()
        model.items = (0..<5).map { Item(id: $0, title: "row \($0)") }
        let host = ViewHost(root: ItemList(model: model), configuration: HostConfiguration(viewport: Size(width: 200, height: 2000)))
        _ = host.update()   // the mount: every view built with its parent, no replacement
        for update in 1...5 {
            model.items[2].id = 1000 + update                    // flips every update
            if update == 3 { model.items[4].id = 500 }          // replaced once: a real change, not flagged
            model.items[0].title = "row 0, update \(update)"    // updated in place: no build at all
            _ = host.update()
        }
        _ = try recorder.stop()

        // The events themselves: builds and teardowns with their reasons, read back from the file.
        var reader = try TraceReader(path: path)
        var reasons: [String: Int] = [:]
        while let event = try reader.next() {
            if case .viewLifetime(let v) = event.payload, reader.string(v.viewType) == "ItemRow" {
                reasons[v.change.name + "/" + v.reason.name, default: 0] += 1
            }
        }
        #expect(reasons == ["built/parentBuilt": 5, "built/newIdentity": 6, "tornDown/identityRemoved": 6])

        let churn = try #require(try Analyzer.analyze(paths: [path]).identityChurn)
        #expect(churn.replacements == 6)
        #expect(churn.rebuiltViews == 12)          // each replaced row and its Text
        #expect(churn.updatesWithReplacements == 5)
        #expect(churn.unstableIdentity.count == 1)
        let flagged = try #require(churn.unstableIdentity.first)
        #expect(flagged.type == "ItemRow")
        #expect(flagged.position == 2)
        #expect(flagged.parentType == "VStack")
        #expect(flagged.replacements == 5)
        #expect(churn.types.first { $0.type == "ItemRow" }?.replacements == 6)
    }
}
