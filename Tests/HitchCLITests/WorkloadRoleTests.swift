import Foundation
import Testing
import HitchReader

/// The bundled workloads say which thread is which with roles (`Trace.setThreadRole`), so the
/// analyzer never has to trust thread names.
@Suite struct WorkloadRoleTests {
    @Test func aRecordedFeedMarksItsMainAndRenderThreadsWithRoles() throws {
        let directory = try HitchCLI.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/feed.fxt"
        let run = try HitchCLI.run(["record", "feed", "--variant", "tuned", "--refresh", "60", "--seconds", "2", "--rows", "20",
                                    "--sample-rate", "0", "-o", path])
        #expect(run.status == 0, "\(run.stderr)")
        var reader = try TraceReader(path: path)
        var beginners = Set<ThreadID>(), presenters = Set<ThreadID>()
        while let event = try reader.next() {
            switch event.payload {
            case .frameBegan: beginners.insert(event.thread)
            case .framePresented: presenters.insert(event.thread)
            default: break
            }
        }
        #expect(beginners.count == 1 && presenters.count == 1)
        #expect(beginners.map { reader.threadRole($0) } == ["main"])
        #expect(presenters.map { reader.threadRole($0) } == ["render"])
    }
}
