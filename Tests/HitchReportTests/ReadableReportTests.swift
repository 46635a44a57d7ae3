import Foundation
import Testing
@testable import HitchReport
import HitchAnalysis

/// Reports a newcomer can read: names shortened from the left and never cut inside a word, the
/// flame graph starting where the samples branch, capped lists that say so, labels in words.
@Suite struct ReadableReportTests {
    @Test func symbolsLoseTheirModuleAndKeepTheFunction() {
        #expect(ShortName.symbol("HitchWorkloads.FeedPipeline.normalize(_:)") == "FeedPipeline.normalize(_:)")
        #expect(ShortName.symbol("closure #1 in HitchWorkloads.RGBAImage.resized(width:height:)") == "closure #1 in RGBAImage.resized(width:height:)")
        #expect(ShortName.symbol("Swift.MainActor.assumeIsolated<A>(_:file:line:)") == "MainActor.assumeIsolated<A>(_:file:line:)")
        // Two parts stay whole; C names and addresses are untouched.
        #expect(ShortName.symbol("Swift.print(_:)") == "Swift.print(_:)")
        #expect(ShortName.symbol("libswiftCore.so+0x2a3d69") == "libswiftCore.so+0x2a3d69")
        #expect(ShortName.symbol("__libc_start_main") == "__libc_start_main")
    }

    /// Whatever the room, a fitted label is the whole name, or "…" and a tail that starts right
    /// after a cut point (a '.', a space or a '/' outside brackets), or nothing.
    @Test func labelsLoseWholePartsFromTheLeft() {
        let names = ["closure #1 in HitchWorkloads.RGBAImage.resized(width:height:)", "HitchWorkloads.Inflater.codes(literal:distance:)",
                     "FeedModel.query (searchBar)", "f(_: Swift.Int)", "NaiveSearchBar"]
        for name in names {
            for room in 0...(name.count + 2) {
                guard let label = ShortName.fitFromLeft(name, characters: room) else { continue }
                #expect(label.count <= max(room, 0) || label == name, "\(label) in \(room)")
                if label == name { continue }
                #expect(label.hasPrefix("…"))
                let tail = String(label.dropFirst())
                #expect(name.hasSuffix(tail))
                let before = name[name.index(name.endIndex, offsetBy: -tail.count - 1)]
                #expect(ShortName.isCutPoint(before), "\(name) cut inside a word: \(label)")
            }
        }
        #expect(ShortName.fitFromLeft("HitchWorkloads.Inflater.bits(_:)", characters: 20) == "…Inflater.bits(_:)")
        #expect(ShortName.fitFromLeft("f(_: Swift.Int)", characters: 8) == nil)
        #expect(ShortName.fitFromLeft("NaiveSearchBar", characters: 10) == nil)
    }

    /// A dotted name may wrap after its parts only: `<wbr>` after '.', '(' and ','.
    @Test func dottedNamesWrapBetweenParts() {
        var w = HTMLWriter()
        w.dottedName("FeedPipeline.normalize(_:)")
        #expect(w.output == "<bdi>FeedPipeline.<wbr>normalize(<wbr>_:)</bdi>")
    }

    /// The entry frames every sample shares fold into one labelled row; the graph starts at the last
    /// of them, where the samples branch.
    @Test func flameGraphFoldsTheEntryFrames() {
        let entry = ["_start", "__libc_start_main", "main", "Foundation.RunLoop.run(mode:before:)", "HeadlessUI.ViewHost.runFrame(_:renderer:)"]
        let stacks = [Charts.FoldedStack(frames: entry + ["HeadlessUI.ViewHost.update()", "HitchWorkloads.FeedPipeline.normalize(_:)"], count: 60),
                      Charts.FoldedStack(frames: entry + ["HeadlessUI.ViewHost.render()"], count: 39),
                      Charts.FoldedStack(frames: ["swift_retain"], count: 1)]
        var w = HTMLWriter()
        Charts.flameGraph(&w, stacks: stacks, title: "t")
        #expect(w.output.contains(">4 entry frames (_start … RunLoop.run(mode:before:))</text>"), "\(w.output)")
        #expect(w.output.contains("<title>entry frames: _start → __libc_start_main → main → Foundation.RunLoop.run(mode:before:): 99 samples"))
        #expect(!w.output.contains(">_start</text>") && !w.output.contains(">main</text>"))
        #expect(w.output.contains(">ViewHost.runFrame(_:renderer:)</text>"), "the last entry frame stays drawn")
        #expect(w.output.contains(">FeedPipeline.normalize(_:)</text>") || w.output.contains("<title>HitchWorkloads.FeedPipeline.normalize(_:): 60 samples"))
        // Without a shared trunk nothing folds.
        var plain = HTMLWriter()
        Charts.flameGraph(&plain, stacks: [Charts.FoldedStack(frames: ["a", "b"], count: 50), Charts.FoldedStack(frames: ["c", "d"], count: 50)], title: "t")
        #expect(!plain.output.contains("entry frames"))
    }

    @Test func cappedListsSaySo() {
        var analysis = SampleAnalysis.make()
        analysis.recorded.hitchCount = 308
        let html = HTMLReport.render(analysis, title: "t")
        #expect(html.contains("Showing \(analysis.hitchAttributions.count) of 308 hitching frames."), "hitching frames")
        #expect(html.contains("more of the \(analysis.hitchAttributions.count) listed (of 308 hitching frames)"))
    }

    /// Every compared figure is labelled in words from the one table: no metric path, camel-cased
    /// key or enum case as a label.
    @Test func labelsComeFromTheTableOfDisplayNames() {
        var analysis = SampleAnalysis.make()
        for key in analysis.hitches.keys { analysis.hitches[key]?.appHitchTimeRatioMsPerS = 1 }
        let figures = analysis.comparedFigures()
        #expect(!figures.isEmpty)
        let leaks = ["MsPerS", "Ms", "appWork", "waitingForCPU", "waitingForAppThreads", "machineStall", "hitchCount", "mainThread", "byCause"]
        for figure in figures {
            #expect(figure.label != figure.metric)
            #expect(!leaks.contains { figure.label.contains($0) }, "\(figure.metric) → \(figure.label)")
        }
        #expect(DisplayNames.metric("hitches.120.byCause.waitingForCPU.hitchTimeRatioMsPerS") == "hitch time ratio at 120 Hz, waiting for a CPU (other processes)")
        #expect(DisplayNames.metric("hitches.59.94.hitchCount") == "hitches at 59.94 Hz")
        #expect(DisplayNames.metric("stages[a.b].mainThreadMs") == "stage 'a.b' on the main thread")
        #expect(DisplayNames.metric("no.such.metric") == "no.such.metric")
    }

    /// The trend page leads with a hitch time ratio, folds series that never moved, and names its
    /// change points on the charts.
    @Test func trendPageLeadsWithHitchFiguresAndFoldsFlatSeries() {
        let runs = (0..<8).map { TrendReportInput.Run(id: "r\($0)", commit: "c\($0)", branch: "main", time: "t", machine: "m", tags: [], traces: []) }
        let step = (0..<8).map { Double($0 < 4 ? 6 : 340) }
        let metrics = [
            TrendReportInput.Metric(name: "droppedEvents", values: Array(repeating: 0, count: 8), changes: []),
            TrendReportInput.Metric(name: "decode.tokensPerSecond", values: (0..<8).map { 60 + Double($0 % 3) }, changes: []),
            TrendReportInput.Metric(name: "stages[filter].mainThreadMs", values: (0..<8).map { Double($0) }, changes: []),
            TrendReportInput.Metric(name: "hitches.120.hitchTimeRatioMsPerS", values: step,
                                    changes: [TrendReportInput.Change(runIndex: 4, verdict: "regression", summary: "6 -> 340")]),
            TrendReportInput.Metric(name: "hitches.60.appHitchTimeRatioMsPerS", values: Array(repeating: 0, count: 8), changes: []),
        ]
        let page = TrendReport.render(TrendReportInput(title: "t", subtitle: [], runs: runs, metrics: metrics))
        let charts = page.components(separatedBy: "data-metric=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(charts == ["hitches.120.hitchTimeRatioMsPerS", "hitches.60.appHitchTimeRatioMsPerS", "decode.tokensPerSecond", "stages[filter].mainThreadMs"])
        #expect(page.contains("1 flat series (the same value in every run)"))
        #expect(page.contains(">regression at run 5</text>"))
        #expect(page.contains(">hitch time ratio at 120 Hz</h2>"))
    }
}
