import HitchAnalysis
import HitchReader
import HitchTrace

// The report's work sections: what ran in the hitches, the stages, the flame graphs of the samples and the
// trace's own facts.

extension Context {
    // MARK: Offenders

    func offenders(_ w: inout HTMLWriter) {
        if !analysis.offenders.isEmpty {
            Blocks.note(&w, "What ran on a CPU for the frame in the hitches the app caused (its own work, or its threads "
                        + "taking the frame's CPU), weighted by hitch time. Hitches caused by other processes or the machine "
                        + "show their cause below instead.")
            let kinds = OffenderKind.allCases
            let shown = 15
            Charts.horizontalBars(&w, rows: analysis.offenders.prefix(shown).map {
                let name = $0.kind == .function ? ShortName.symbol($0.name) : $0.name
                return Charts.BarRow(label: $0.kind.rawValue + ": " + name, value: $0.weightedHitchMs,
                                     valueText: Format.milliseconds($0.weightedHitchMs) + " in " + Format.count($0.hitchingFrames) + " frames",
                                     series: kinds.firstIndex(of: $0.kind) ?? 3, fullName: name == $0.name ? nil : $0.name)
            }, title: "Top offenders")
            Blocks.showing(&w, shown: min(shown, analysis.offenders.count), of: analysis.offenders.count, what: "offenders")
        }
        if analysis.samples.samplesAsleepInHitches > 0 {
            Blocks.note(&w, Format.count(analysis.samples.samplesAsleepInHitches) + " samples caught the main thread asleep in hitching frames: "
                        + "blocked time, not offenders. Where it waited: "
                        + analysis.samples.waitingInHitches.prefix(5).map { $0.name + " (" + Format.milliseconds($0.weightedHitchMs) + ")" }.joined(separator: ", "))
        }
        let attributions = analysis.hitchAttributions.sorted { ($0.run, $0.startMs, $0.frameID) < ($1.run, $1.startMs, $1.frameID) }
        let withStages = attributions.filter { !$0.stages.isEmpty }
        if !withStages.isEmpty {
            // Series: stages in order of first appearance across the worst frames (top 9), the rest as "other".
            var seriesOrder: [String] = []
            for attribution in analysis.hitchAttributions { for stage in attribution.stages where !seriesOrder.contains(stage.name) { seriesOrder.append(stage.name) } }
            let shown = Array(seriesOrder.prefix(9))
            let series = shown + (seriesOrder.count > shown.count ? ["other"] : [])
            let columns = withStages.map { attribution -> Charts.StackedColumn in
                var values = [Double](repeating: 0, count: series.count)
                for stage in attribution.stages {
                    if let index = shown.firstIndex(of: stage.name) { values[index] += stage.ms } else { values[series.count - 1] += stage.ms }
                }
                return Charts.StackedColumn(label: "frame \(attribution.frameID)", values: values, detail: fragment("f-", "\(attribution.run)-\(attribution.frameID)"))
            }
            w.element("h3", text: "Stages per hitching frame (in time order)")
            Charts.stackedBars(&w, columns: columns, series: series, unit: "ms", title: "Stage time in each hitching frame",
                               referenceLines: analysis.frameDeadlinesMs)
        }
    }

    // MARK: Stages

    func stages(_ w: inout HTMLWriter) {
        let hottest = Set(analysis.stages.filter { $0.inHitchingFramesMs > 0 }.sorted { $0.inHitchingFramesMs > $1.inHitchingFramesMs }.prefix(3).map(\.name))
        let bySelfTime = analysis.stages.sorted { ($0.selfMs, $1.name) > ($1.selfMs, $0.name) }
        Charts.horizontalBars(&w, rows: bySelfTime.prefix(12).map {
            Charts.BarRow(label: $0.name, value: $0.selfMs, valueText: Format.milliseconds($0.selfMs) + " self", highlight: hottest.contains($0.name))
        }, title: "Stage self time")
        Blocks.showing(&w, shown: min(12, bySelfTime.count), of: bySelfTime.count, what: "stages (the most self time)")
        Blocks.note(&w, "Self time excludes nested stages. Highlighted: the stages with the most time inside hitching frames.")
        var table = TableBuilder([("Stage", false), ("Count", true), ("Total", true), ("Self", true), ("Mean", true), ("P95", true), ("Max", true),
                                  ("Main-thread share", true), ("On main", true), ("In hitches", true), ("Threads", false)])
        for stage in analysis.stages {
            table.add([.name(stage.name), .number(Double(stage.count), Format.count(stage.count)), ms(stage.totalMs), ms(stage.selfMs),
                       ms(stage.meanMs), ms(stage.p95Ms), ms(stage.maxMs),
                       .number(stage.mainThreadShare, Format.percent(stage.mainThreadShare)),
                       .number(stage.onMainThreadFraction, Format.percent(stage.onMainThreadFraction)),
                       ms(stage.inHitchingFramesMs), .name(stage.threads.joined(separator: ", "))],
                      highlight: hottest.contains(stage.name))
        }
        table.write(&w, fragment: fragment("t-", "stages"), filterable: true)
        if analysis.layout.passes > 0 {
            Blocks.facts(&w, [("Layout passes", Format.count(analysis.layout.passes)), ("Layout time", Format.milliseconds(analysis.layout.totalMs)),
                              ("Longest pass", Format.milliseconds(analysis.layout.maxMs)), ("Views laid out", Format.count(analysis.layout.viewsLaidOut))])
        }
    }

    // MARK: Samples

    func flameGraphs(_ w: inout HTMLWriter) {
        let samples = analysis.samples
        Blocks.stats(&w, [("main-thread samples", Format.count(samples.mainThreadSamples)), ("in hitching frames", Format.count(samples.samplesInHitches))])
        if !samples.foldedInHitches.isEmpty {
            w.element("h3", text: "During hitching frames")
            Charts.flameGraph(&w, stacks: samples.foldedInHitches.map(folded), title: "Flame graph of main-thread samples in hitching frames")
        }
        if !samples.folded.isEmpty {
            w.element("h3", text: "All main-thread samples")
            Charts.flameGraph(&w, stacks: samples.folded.map(folded), title: "Flame graph of all main-thread samples")
        }
        Blocks.note(&w, "Icicle layout: callers above callees; width is the share of samples. Hover a frame for its count.")
    }

    private func folded(_ stack: FoldedStack) -> Charts.FoldedStack {
        Charts.FoldedStack(frames: stack.stack.split(separator: ";", omittingEmptySubsequences: false).map(String.init), count: stack.count)
    }

    // MARK: Trace info

    func traceInfo(_ w: inout HTMLWriter) {
        var runs = TableBuilder([("Trace", false), ("Events", true), ("Dropped", true), ("Duration", true), ("Frames", true)])
        for run in analysis.runs {
            runs.add([.name(run.path), .number(Double(run.eventCount), Format.count(run.eventCount)),
                      .number(Double(run.droppedEvents), Format.count(run.droppedEvents)), ms(run.durationMs),
                      .number(Double(run.frameCount), Format.count(run.frameCount))], highlight: run.droppedEvents > 0)
        }
        runs.write(&w, fragment: fragment("t-", "runs"))
        if !analysis.metadata.isEmpty {
            w.element("h3", text: "Metadata")
            Blocks.facts(&w, analysis.metadata.keys.sorted().prefix(60).map { ($0, analysis.metadata[$0] ?? "") })
            Blocks.showing(&w, shown: min(60, analysis.metadata.count), of: analysis.metadata.count, what: "metadata keys")
        }
        if !analysis.warnings.isEmpty {
            w.element("h3", text: "Warnings")
            w.element("ul") { w in
                for warning in analysis.warnings.prefix(50) { w.element("li") { $0.name(warning) } }
            }
            Blocks.showing(&w, shown: min(50, analysis.warnings.count), of: analysis.warnings.count, what: "warnings")
        }
    }
}
