import Foundation
import Testing
import HitchReader
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
            // Named, with the role, and neither (the main thread is then the one that begins frames).
            for (name, role) in [("main", nil), ("hitch-record-pr", "main"), ("hitch-record-pr", nil)] as [(String, String?)] {
                let path = temporaryPath("role-\(order)-\(role ?? "none")")
                defer { unlink(path) }
                try Self.write(path: path, mainName: name, mainRole: role, order: order)
                #expect(try Self.figures(path) == expected, "main thread \(name), role \(role ?? "none"), order \(order)")
            }
        }
    }

    /// Without roles or names, the main thread is the thread that began the most frames (ties to
    /// the lowest thread id), from its first event, whichever thread's events come first.
    @Test func withoutRolesOrNamesTheThreadThatBeganTheMostFramesIsMainInAnyOrder() throws {
        let period: Int64 = 16_666_667
        var list = TraceEventList()
        let loader = list.thread("loader"), ui = list.thread("ui"), compositor = list.thread("compositor")
        let stack = StackID(rawValue: 1)
        list.append(0, ui, .stackDefinition(stack: stack, addresses: [0x1000]))
        // The loader begins one stray frame before the loop starts and is sampled too.
        list.append(1_000_000, loader, .frameBegan(FrameBegan(frameID: 999, vsyncNs: 1_000_000, targetNs: 1_000_000 + period, periodNs: period)))
        list.append(1_500_000, loader, .sample(stack: stack))
        var uiSamples = 0
        for frame in 0..<30 {
            let vsync = 20_000_000 + Int64(frame) * period
            let work: Int64 = frame == 10 ? 30_000_000 : 3_000_000
            list.append(vsync - 1_000_000, ui, .sample(stack: stack)); uiSamples += 1
            list.append(vsync, ui, .frameBegan(FrameBegan(frameID: UInt64(frame), vsyncNs: vsync, targetNs: vsync + period, periodNs: period)))
            list.append(vsync + work / 2, ui, .sample(stack: stack)); uiSamples += 1
            list.append(vsync + work, ui, .frameCommitted(frameID: UInt64(frame)))
            let renderStart = vsyncAtOrAfter(vsync + work, anchor: vsync, period: period)
            list.append(renderStart + 1_000_000, compositor, .frameRenderEnded(frameID: UInt64(frame)))
        }
        list.events.sort { $0.timestampNs < $1.timestampNs }
        let options = AnalyzerOptions(refreshRatesHz: [60])
        let expected = try Analyzer.analyze([list], options: options)
        #expect(expected.samples.mainThreadSamples == uiSamples)
        #expect(expected.samples.samplesInHitches > 0)
        let orders = [
            CrossThreadOrderTests.buffered(list, capacity: { _ in 4 }, finalOrder: [loader, ui, compositor]),
            CrossThreadOrderTests.buffered(list, capacity: { $0 == ui ? 1_000 : 2 }, finalOrder: [compositor, ui, loader]),
            CrossThreadOrderTests.buffered(list, capacity: { $0 == ui ? 7 : 1_000 }, finalOrder: [loader, compositor, ui]),
        ]
        for order in orders {
            let a = try Analyzer.analyze([order], options: options)
            #expect(a.samples == expected.samples)
            #expect(a.hitches == expected.hitches)
            #expect(a.offenders == expected.offenders)
            #expect(a.stages == expected.stages)
        }

        // Two threads that began as many frames: the lower thread id is main, in either order.
        var tie = TraceEventList()
        let first = tie.thread("a"), second = tie.thread("b")
        for (index, thread) in [second, first].enumerated() {
            for frame in 0..<3 {
                let vsync = Int64(index * 3 + frame) * period
                tie.append(vsync, thread, .frameBegan(FrameBegan(frameID: UInt64(index * 3 + frame), vsyncNs: vsync, targetNs: vsync + period, periodNs: period)))
                tie.append(vsync + 1_000, thread, .sample(stack: stack))
                if thread == first { tie.append(vsync + 2_000, thread, .sample(stack: stack)) }
            }
        }
        var reversed = tie
        reversed.events = tie.events.filter { $0.thread == first } + tie.events.filter { $0.thread == second }
        for candidate in [tie, reversed] {
            #expect(try Analyzer.analyze([candidate], options: options).samples.mainThreadSamples == 6)
        }
    }

    /// A thread with the `main` role is the main thread even when a thread named `main` (without a
    /// role) comes first in the file: the name is only the fallback.
    @Test func theMainRoleWinsOverTheNameWhateverComesFirst() throws {
        for roleFirst in [false, true] {
            let path = temporaryPath("role-over-name-\(roleFirst)")
            defer { unlink(path) }
            let writer = try TraceFileWriter(path: path)
            let named = writer.thread(name: "main", threadID: 2001)
            let withRole = writer.thread(name: "app-loop", threadID: 2002, role: "main")
            writer.write(TraceEvent(timestampNs: 0, thread: withRole, payload: .stackDefinition(stack: StackID(rawValue: 1), addresses: [0x1000])))
            let threads = roleFirst ? [withRole, named] : [named, withRole]
            for thread in threads {
                for k in 0..<(thread == withRole ? 5 : 3) {
                    writer.write(TraceEvent(timestampNs: Int64(1_000_000 + k), thread: thread, payload: .sample(stack: StackID(rawValue: 1))))
                }
            }
            try writer.close()
            let a = try Analyzer.analyze(paths: [path], options: AnalyzerOptions(refreshRatesHz: [60]))
            #expect(a.samples.mainThreadSamples == 5, "role first: \(roleFirst)")
        }
    }

    private func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "hitch-roles-\(name)-\(getpid()).fxt"
    }
}
