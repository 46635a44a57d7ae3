import HitchAnalysis
import HitchTestSupport

// A hand-built Analysis with every section populated, from a seeded generator: the renderer's tests
// use it so they exercise every chart without depending on a recorded trace. `names` lets a test swap
// every string for a hostile one.

enum SampleAnalysis {
    static func make(seed: UInt64 = 1, names: (String) -> String = { $0 }, frameCount: Int = 1200, hitchEvery: Int = 37) -> Analysis {
        var random = SampleRandom(state: seed)
        var analysis = Analysis()
        analysis.refreshRatesHz = [60, 120]
        analysis.metadata = ["workload": names("feed"), "variant": names("naive"), "host": names("ci-runner"), "peakBandwidthGBps": "18.5"]
        analysis.eventCount = 123_456
        analysis.droppedEvents = 3
        var run = RunSummary()
        run.path = names("Traces/feed-naive-120hz.fxt")
        run.eventCount = 123_456
        run.droppedEvents = 3
        run.durationMs = Double(frameCount) * 8.333
        run.frameCount = frameCount
        analysis.runs = [run]

        for index in 0..<frameCount {
            var frame = FrameSample()
            frame.frameID = UInt64(index + 1)
            frame.startMs = Double(index) * 8.333
            frame.periodMs = 8.333
            frame.mainThreadMs = 2 + random.next() * 3
            frame.renderMs = 1 + random.next() * 2
            if index % hitchEvery == 5 {
                frame.mainThreadMs = 20 + random.next() * 60
                frame.hitchMs = frame.mainThreadMs - 6
                frame.kind = .commit
            }
            frame.frameTimeMs = frame.mainThreadMs + frame.renderMs
            analysis.frames.append(frame)
        }
        for (rate, ratio) in [(60.0, 7.5), (120.0, 18.2)] {
            var figures = HitchFigures()
            figures.source = rate == 120 ? .recorded : .replay
            figures.rateHz = rate
            figures.periodMs = 1000 / rate
            figures.frameCount = rate == 120 ? frameCount : frameCount / 2
            figures.hitchCount = frameCount / hitchEvery
            figures.totalHitchMs = ratio * Double(frameCount) * 8.333 / 1000
            figures.longestHitchMs = 74.2
            figures.hitchTimeRatioMsPerS = ratio
            figures.animatingSeconds = Double(frameCount) * 8.333 / 1000
            figures.animatingTimeSource = .interactions
            figures.verdict = ratio >= 10 ? .critical : .warning
            figures.appleTestScale.grade = figures.verdict
            figures.appleTestScale.scale = "Apple test scale"
            figures.organizerScale.grade = ratio > 10 ? .fair : .good
            figures.organizerScale.scale = "Xcode Organizer scale"
            figures.commitHitchCount = figures.hitchCount - 2
            figures.renderHitchCount = 2
            figures.frameTimeMs = Percentiles()
            figures.frameTimeMs.p50 = 5.1; figures.frameTimeMs.p90 = 7.4; figures.frameTimeMs.p95 = 21.3; figures.frameTimeMs.p99 = 66.0; figures.frameTimeMs.max = 81
            figures.overrunMs.p95 = 12; figures.overrunMs.p99 = 58
            figures.slowFrames = figures.hitchCount
            if rate == 120 {
                for frame in analysis.frames { figures.frameTimeHistogram.add(frameTimeNs: Int64(frame.frameTimeMs * 1e6)) }
            }
            figures.worstWindow.startMs = 2400
            figures.worstWindow.hitchMs = 140
            figures.worstWindow.hitchCount = 4
            analysis.hitches[Format_rateKey(rate)] = figures
            if rate == 120 { analysis.recorded = figures }
        }
        var recordedRate = RecordedRate()
        recordedRate.rateHz = 120
        recordedRate.frameCount = frameCount
        analysis.recordedRates = [recordedRate]

        let stageNames = ["filter", "sort", "group", "normalize", "snapshot", "diff", "row body", "image decode", "image resize", "layout", "commit"]
        for (index, name) in stageNames.enumerated() {
            var stage = StageFigures()
            stage.name = names(name)
            stage.count = 40 + index * 13
            stage.totalMs = 900 / Double(index + 1)
            stage.selfMs = stage.totalMs * 0.9
            stage.meanMs = stage.totalMs / Double(stage.count)
            stage.p50Ms = stage.meanMs * 0.8; stage.p95Ms = stage.meanMs * 2.2; stage.p99Ms = stage.meanMs * 3; stage.maxMs = stage.meanMs * 4
            stage.threads = [names("main")] + (index % 3 == 0 ? [names("worker")] : [])
            stage.mainThreadShare = 0.3 / Double(index + 1)
            stage.onMainThreadFraction = index % 3 == 0 ? 0.6 : 1
            stage.inHitchingFramesMs = index < 4 ? stage.selfMs * 0.7 : 0
            analysis.stages.append(stage)
        }
        for (index, name) in ["FeedRow", "FeedList", "SearchField", "Thumbnail", "TagChip", "AuthorLine"].enumerated() {
            var view = ViewFigures()
            view.type = names(name)
            view.bodyEvaluations = 12_000 / (index + 1)
            view.totalMs = 600 / Double(index + 1)
            view.maxMs = 2.4 / Double(index + 1)
            view.longUpdates = index < 3 ? 40 / (index + 1) : 0
            view.longUpdatesOver1ms = index < 2 ? 9 / (index + 1) : 0
            view.evaluationsPerFrame = Double(view.bodyEvaluations) / Double(frameCount)
            analysis.views.append(view)
        }
        analysis.layout.passes = 600; analysis.layout.totalMs = 140; analysis.layout.maxMs = 3.1; analysis.layout.viewsLaidOut = 50_000
        for (source, target, count) in [("FeedModel.query", "FeedRow", 9000), ("FeedModel.query", "FeedList", 40), ("FeedModel.results", "FeedRow", 3000),
                                        ("ScrollState.offset", "FeedList", 300), ("FeedModel.query", "SearchField", 40), ("ImageCache.entries", "Thumbnail", 800)] {
            var edge = InvalidationEdge()
            edge.source = names(source); edge.target = names(target); edge.count = count
            analysis.invalidations.append(edge)
        }
        for (source, count, types) in [("FeedModel.query", 9080, 3), ("FeedModel.results", 3000, 1), ("ImageCache.entries", 800, 1)] {
            var item = InvalidationSource()
            item.source = names(source); item.invalidations = count; item.targetTypes = types
            analysis.invalidationSources.append(item)
        }
        for frame in analysis.frames where frame.hitchMs > 0 {
            var attribution = HitchAttribution()
            attribution.frameID = frame.frameID
            attribution.startMs = frame.startMs
            attribution.hitchMs = frame.hitchMs
            attribution.mainThreadMs = frame.mainThreadMs
            attribution.renderMs = frame.renderMs
            for (index, name) in ["filter", "sort", "group", "row body"].enumerated() {
                var stage = NamedDuration()
                stage.name = names(name); stage.count = 1 + index; stage.ms = frame.mainThreadMs * [0.4, 0.25, 0.15, 0.1][index]
                attribution.stages.append(stage)
            }
            var body = NamedDuration()
            body.name = names("FeedRow"); body.count = 120; body.ms = frame.mainThreadMs * 0.1
            attribution.bodies = [body]
            var stack = SampledStack()
            stack.frames = [names("FeedModel.filter(_:)"), names("closure #1 in FeedModel.apply"), names("main")]
            stack.samples = 12
            attribution.stacks = [stack]
            analysis.hitchAttributions.append(attribution)
        }
        analysis.hitchAttributions.sort { $0.hitchMs > $1.hitchMs }
        for (kind, name, weight) in [(OffenderKind.stage, "filter", 220.0), (.stage, "sort", 140.0), (.view, "FeedRow", 60.0), (.function, "FeedModel.filter(_:)", 180.0)] {
            var offender = Offender()
            offender.kind = kind; offender.name = names(name); offender.weightedHitchMs = weight; offender.hitchingFrames = 30
            analysis.offenders.append(offender)
        }
        analysis.samples.mainThreadSamples = 4000
        analysis.samples.samplesInHitches = 1500
        for (stack, count) in [("main;RunLoop.run;FrameLoop.tick;FeedModel.apply;FeedModel.filter(_:);String.contains", 700),
                               ("main;RunLoop.run;FrameLoop.tick;FeedModel.apply;FeedModel.sort", 400),
                               ("main;RunLoop.run;FrameLoop.tick;Layout.measure;Text.measure", 250),
                               ("main;RunLoop.run;FrameLoop.tick;Body.evaluate;FeedRow.body", 150)] {
            var folded = FoldedStack()
            folded.stack = stack.split(separator: ";").map { names(String($0)) }.joined(separator: ";")
            folded.count = count
            analysis.samples.foldedInHitches.append(folded)
            folded.count = count * 2
            analysis.samples.folded.append(folded)
        }
        var decode = DecodeFigures()
        decode.tokens = 64; decode.promptTokens = 16; decode.timeToFirstTokenMs = 420; decode.prefillTokensPerSecond = 95
        decode.tokensPerSecond = 21.5; decode.bestTokensPerSecond = 23.9; decode.msPerToken = 46.5
        decode.bytesPerToken = 254e6; decode.weightBytesPerToken = 250e6; decode.kvCacheBytesPerToken = 3.5e6; decode.otherBytesPerToken = 0.5e6
        decode.flopsPerToken = 0.9e9; decode.bandwidthGBps = 5.46; decode.peakBandwidthGBps = 9.8; decode.peakGFLOPS = 120
        decode.utilization = 0.557; decode.ridgeFlopsPerByte = 12.2
        for (index, name) in ["qkv", "attn-out", "gate/up", "down", "output head", "attention", "rmsnorm", "rope", "sample"].enumerated() {
            var op = OpFigures()
            op.name = names(name); op.computeUnit = names("cpu"); op.count = 64 * 12
            op.totalMs = 1200 / Double(index + 1); op.timeShare = 0.35 / Double(index + 1)
            op.bytes = UInt64(9e8 / Double(index + 1)); op.flops = UInt64(2e9 / Double(index + 1))
            op.bandwidthGBps = 6 - Double(index) * 0.5; op.gflops = index == 5 ? 30 : 4 + Double(index)
            op.flopsPerByte = index == 5 ? 24 : 0.5 + Double(index) * 0.2
            op.bound = index == 5 ? .compute : .bandwidth
            op.rooflineEfficiency = 0.6
            decode.ops.append(op)
        }
        decode.memory.weightsBytes = 250_000_000; decode.memory.kvCacheBytes = 50_000_000; decode.memory.peakResidentBytes = 420_000_000
        decode.memory.totalBytes = 720_000_000; decode.memory.deviceBudgetBytes = 1_200_000_000
        analysis.decode = decode
        var tokens = TokenFigures()
        tokens.produced = 64; tokens.delivered = 64; tokens.shown = 60; tokens.dropped = 4
        tokens.tokenToScreenMs.p50 = 6; tokens.tokenToScreenMs.p95 = 12.5; tokens.tokenToScreenMs.p99 = 15; tokens.tokenToScreenP95Frames = 1.5
        analysis.tokens = tokens
        analysis.warnings = [names("3 interval ends without a begin")]
        return analysis
    }

    private static func Format_rateKey(_ rate: Double) -> String { String(Int(rate)) }

    /// Names that try every way out of the text they are put in.
    static let hostileNames: [String] = [
        "<script>document.title='pwned'</script>",
        "\"><img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">",
        "</style><script>document.title='pwned2'</script>",
        "javascript:alert(1)",
        "\u{202E}gnp.exe\u{202C} rtl override",
        "</svg><svg onload=document.title='pwned3'>",
        "' onmouseover='document.title=\"pwned4\"",
        "<iframe src=\"https://example.com/\"></iframe>",
        "&lt;already&gt; &amp; escaped",
        String(repeating: "VeryLongViewNameWithoutBreaks", count: 20),
        "</title><script>fetch('https://example.com/leak')</script>",
        "<!-- comment -->]]>",
        "\u{0}nul\u{1}ctl\u{7F}del",
    ]

    static func hostile(_ name: String) -> String {
        var hash: UInt64 = 1469598103934665603
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 1099511628211 }
        return hostileNames[Int(hash % UInt64(hostileNames.count))] + " " + name
    }
}
