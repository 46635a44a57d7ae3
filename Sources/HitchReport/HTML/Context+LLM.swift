import HitchAnalysis
import HitchReader
import HitchTrace

// The report's decode section: tokens per second, bandwidth against the measured peak, ops, tokens on screen.

extension Context {
    func llm(_ w: inout HTMLWriter) {
        if let decode = analysis.decode {
            Blocks.stats(&w, [
                ("decode tokens/s (median)", Format.significant(decode.tokensPerSecond)),
                ("best tokens/s", Format.significant(decode.bestTokensPerSecond)),
                ("time to first token", Format.milliseconds(decode.timeToFirstTokenMs)),
                ("prefill tokens/s", Format.significant(decode.prefillTokensPerSecond)),
                ("per token", Format.milliseconds(decode.msPerToken)),
                ("bytes per token", Format.bytes(decode.bytesPerToken)),
                ("achieved bandwidth", Format.significant(decode.bandwidthGBps) + " GB/s"),
            ] + (decode.peakBandwidthGBps > 0 ? [("of measured peak " + Format.significant(decode.peakBandwidthGBps) + " GB/s", Format.percent(decode.utilization))] : []))
            if decode.peakBandwidthMayBeCacheBound {
                Blocks.note(&w, "The bandwidth probe's arrays were below 4x the last-level cache (memory did not allow more): the measured peak may be a cache figure, and utilization is judged against it.")
            }
            if decode.notBandwidthBound {
                w.element("p") { w in
                    w.element("span", [Attribute("class", "badge critical")], text: "not bandwidth-bound")
                    w.text("Decode uses under " + Format.percent(AnalysisThresholds.notBandwidthBoundUtilization)
                           + " of the measured peak bandwidth: time goes elsewhere than reading weights.")
                }
            }
            if let low = decode.peakTooLowSentence { Blocks.note(&w, low.prefix(1).uppercased() + low.dropFirst() + ".") }
            if let bound = decode.threads.sentence { w.element("p", text: "Decode is " + bound + ".") }
            if let priority = decode.threads.priorityChange { Blocks.note(&w, "Decode priority: " + priority + ".") }
            w.element("h3", text: "Bytes per token")
            Blocks.meter(&w, parts: [("weights", decode.weightBytesPerToken), ("KV cache", decode.kvCacheBytesPerToken), ("other", decode.otherBytesPerToken)],
                         limit: decode.bytesPerToken, unitText: Format.bytes, isBudget: false)
            if !decode.ops.isEmpty {
                w.element("div", [Attribute("class", "grid2")]) { w in
                    w.element("div") { w in
                        w.element("h3", text: "Time per op")
                        Charts.horizontalBars(&w, rows: decode.ops.map {
                            Charts.BarRow(label: $0.name, value: $0.timeShare, valueText: Format.percent($0.timeShare) + " · " + Format.milliseconds($0.totalMs))
                        }, title: "Share of op time")
                    }
                    w.element("div") { w in
                        w.element("h3", text: "Bandwidth per op")
                        Charts.horizontalBars(&w, rows: decode.ops.map {
                            Charts.BarRow(label: $0.name, value: $0.bandwidthGBps, valueText: Format.significant($0.bandwidthGBps) + " GB/s",
                                          highlight: $0.bound == .compute, series: 2)
                        }, title: "Achieved GB/s per op", maximum: decode.peakBandwidthGBps)
                    }
                }
                if decode.peakBandwidthGBps > 0 && decode.peakGFLOPS > 0 {
                    w.element("h3", text: "Roofline")
                    Charts.roofline(&w, peakBandwidthGBps: decode.peakBandwidthGBps, peakGflops: decode.peakGFLOPS,
                                    points: decode.ops.map { Charts.RooflinePoint(label: $0.name, flopsPerByte: $0.flopsPerByte, achievedGflops: $0.gflops, boundBy: $0.bound.rawValue + "-bound") },
                                    title: "Roofline of decode ops")
                    Blocks.note(&w, "Ridge point at \(Format.significant(decode.ridgeFlopsPerByte)) FLOP/byte: ops left of it are bandwidth-bound, right of it compute-bound.")
                }
                var table = TableBuilder([("Op", false), ("Unit", false), ("Count", true), ("Total", true), ("Time share", true), ("GB/s", true),
                                          ("GFLOP/s", true), ("FLOP/byte", true), ("Bound", false), ("Of roofline", true)])
                for op in decode.ops {
                    table.add([.name(op.name), .name(op.computeUnit), .number(Double(op.count), Format.count(op.count)), ms(op.totalMs),
                               .number(op.timeShare, Format.percent(op.timeShare)), .number(op.bandwidthGBps, Format.significant(op.bandwidthGBps)),
                               .number(op.gflops, Format.significant(op.gflops)), .number(op.flopsPerByte, Format.significant(op.flopsPerByte)),
                               .badge(op.bound == .compute ? "warning" : "neutral", op.bound.rawValue),
                               .number(op.rooflineEfficiency, Format.percent(op.rooflineEfficiency))])
                }
                table.write(&w, fragment: fragment("t-", "ops"))
            }
            let memory = decode.memory
            if memory.totalBytes > 0 {
                w.element("h3", text: "Memory budget")
                Blocks.meter(&w, parts: [(memory.weightsBytesEstimated ? "weights (estimated)" : "weights", Double(memory.weightsBytes)),
                                         (memory.kvCacheBytesEstimated ? "KV cache (estimated)" : "KV cache", Double(memory.kvCacheBytes)),
                                         ("peak resident", Double(memory.peakResidentBytes))],
                             limit: Double(memory.deviceBudgetBytes), unitText: Format.bytes)
            }
        }
        if let tokens = analysis.tokens {
            w.element("h3", text: "Tokens produced vs shown")
            Charts.horizontalBars(&w, rows: [
                Charts.BarRow(label: "produced", value: Double(tokens.produced), valueText: Format.count(tokens.produced)),
                Charts.BarRow(label: "delivered", value: Double(tokens.delivered), valueText: Format.count(tokens.delivered), series: 4),
                Charts.BarRow(label: "shown", value: Double(tokens.shown), valueText: Format.count(tokens.shown), series: 2),
                Charts.BarRow(label: "dropped", value: Double(tokens.dropped), valueText: Format.count(tokens.dropped), highlight: tokens.dropped > 0),
                Charts.BarRow(label: "lost", value: Double(tokens.lost), valueText: Format.count(tokens.lost), highlight: tokens.lost > 0),
            ], title: "Token counts")
            let latency = tokens.tokenToScreenMs
            Blocks.facts(&w, [("Token to screen P50 / P95 / P99", "\(Format.milliseconds(latency.p50)) / \(Format.milliseconds(latency.p95)) / \(Format.milliseconds(latency.p99))"),
                              ("P95 in frames", Format.significant(tokens.tokenToScreenP95Frames))])
        }
    }
}
