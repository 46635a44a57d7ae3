import Foundation
import Testing
import HitchTrace
@testable import HitchAnalysis

/// The main thread is known by its role (`Trace.setThreadRole(.main)`), else by its name; either
/// way before its first event, so the figures do not depend on which thread's events come first.
struct ThreadRoleTests {
    private enum Lane { case main, render }
    private struct Planned { var lane: Lane; var event: TraceEvent }

    /// 60 frames at 60 Hz; frames 20 and 40 stall 30 ms; main-thread samples every 2 ms from
    /// before the first frame to the end; one stage per frame.
    private static func plannedEvents(stage: StringID) -> [Planned] {
        let period: Int64 = 16_666_667
        var events: [Planned] = []
        let unused = ThreadID(rawValue: 0)
        func add(_ lane: Lane, _ t: Int64, _ payload: TraceEvent.Payload) {
            events.append(Planned(lane: lane, event: TraceEvent(timestampNs: t, thread: unused, payload: payload)))
        }
        add(.main, 0, .stackDefinition(stack: StackID(rawValue: 1), addresses: [0x1000, 0x2000]))
        var t: Int64 = 0
        while t < 61 * period { add(.main, 5_000_000 + t, .sample(stack: StackID(rawValue: 1))); t += 2_000_000 }
        for frame in 0..<60 {
            let vsync = 20_000_000 + Int64(frame) * period
            let work: Int64 = frame == 20 || frame == 40 ? 30_000_000 : 3_000_000
            add(.main, vsync, .frameBegan(FrameBegan(frameID: UInt64(frame), vsyncNs: vsync, targetNs: vsync + period, periodNs: period)))
            add(.main, vsync + 100_000, .intervalComplete(category: stage, name: stage, endNs: vsync + 100_000 + work))
            let commit = vsync + 200_000 + work
            add(.main, commit, .frameCommitted(frameID: UInt64(frame)))
            let renderStart = vsyncAtOrAfter(commit, anchor: vsync, period: period)
            add(.render, renderStart + 2_000_000, .frameRenderEnded(frameID: UInt64(frame)))
            add(.render, renderStart + period + 150_000, .framePresented(frameID: UInt64(frame)))
        }
        return events
    }

    private enum Order: CaseIterable { case time, renderFirst, samplesFirst }

    private static func write(path: String, mainName: String, mainRole: String?, order: Order) throws {
        let writer = try TraceFileWriter(path: path)
        let stage = writer.string("update")
        let main = writer.thread(name: mainName, threadID: 1001, role: mainRole)
        let render = writer.thread(name: "render", threadID: 1002)
        var events = plannedEvents(stage: stage)
        switch order {
        case .time: events.sort { $0.event.timestampNs < $1.event.timestampNs }
        case .renderFirst: events = events.filter { $0.lane == .render } + events.filter { $0.lane == .main }
        case .samplesFirst:
            let isSample: (Planned) -> Bool = { if case .sample = $0.event.payload { true } else { false } }
            events = events.filter { $0.lane == .render && !isSample($0) } + events.filter(isSample) + events.filter { $0.lane == .main && !isSample($0) }
        }
        for var planned in events {
            planned.event.thread = planned.lane == .main ? main : render
            writer.write(planned.event)
        }
        try writer.close()
    }

    /// The figures that depend on knowing the main thread, as JSON (thread names left out).
    private static func figures(_ path: String) throws -> String {
        let analysis = try Analyzer.analyze(paths: [path], options: AnalyzerOptions(refreshRatesHz: [60]))
        var stages = analysis.stages
        for index in stages.indices { stages[index].threads = [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let parts = [try encoder.encode(analysis.hitches), try encoder.encode(analysis.samples), try encoder.encode(stages),
                     try encoder.encode(analysis.hitchAttributions.count)]
        return parts.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
    }

    @Test func anUnnamedMainThreadWithTheMainRoleGivesTheFiguresOfOneNamedMainInAnyFileOrder() throws {
        let reference = temporaryPath("named-main-time")
        defer { unlink(reference) }
        try Self.write(path: reference, mainName: "main", mainRole: nil, order: .time)
        let expected = try Self.figures(reference)
        #expect(expected.contains("\"mainThreadSamples\":"))
        #expect(!expected.contains("\"mainThreadSamples\":0"))
        for order in Order.allCases {
            for (name, role) in [("main", nil), ("hitch-record-pr", "main")] as [(String, String?)] {
                let path = temporaryPath("role-\(order)-\(role ?? "none")")
                defer { unlink(path) }
                try Self.write(path: path, mainName: name, mainRole: role, order: order)
                #expect(try Self.figures(path) == expected, "main thread \(name), role \(role ?? "none"), order \(order)")
            }
        }
    }

    private func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "hitch-roles-\(name)-\(getpid()).fxt"
    }
}
