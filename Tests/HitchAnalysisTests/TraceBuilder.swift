import HitchReader
@testable import HitchAnalysis

/// Hand-built traces with known answers.
struct TraceBuilder {
    var list = TraceEventList()
    lazy var main: ThreadID = list.thread("main")
    lazy var render: ThreadID = list.thread("render")

    static let ms: Int64 = 1_000_000

    /// A frame that began at its vsync, committed `workNs` later, rendered for `renderNs`
    /// (from the vsync after commit), with an optional recorded present.
    mutating func frame(_ id: UInt64, vsyncNs: Int64, periodNs: Int64, workNs: Int64, renderNs: Int64 = 1_000_000,
                        presentNs: Int64? = nil) {
        let main = self.main, render = self.render
        list.append(vsyncNs, main, .frameBegan(FrameBegan(frameID: id, vsyncNs: vsyncNs, targetNs: vsyncNs + periodNs, periodNs: periodNs)))
        let commit = vsyncNs + workNs
        list.append(commit, main, .frameCommitted(frameID: id))
        let renderStart = vsyncAtOrAfter(commit, anchor: vsyncNs, period: periodNs)
        list.append(renderStart + renderNs, render, .frameRenderEnded(frameID: id))
        if let presentNs { list.append(presentNs, render, .framePresented(frameID: id)) }
    }

    mutating func stage(_ name: String, on thread: ThreadID, from start: Int64, to end: Int64) {
        let category = list.intern("stage"), n = list.intern(name)
        list.append(start, thread, .intervalComplete(category: category, name: n, endNs: end))
    }

    mutating func begin(_ name: String, on thread: ThreadID, at t: Int64) {
        let category = list.intern("stage"), n = list.intern(name)
        list.append(t, thread, .intervalBegin(category: category, name: n))
    }

    mutating func end(_ name: String, on thread: ThreadID, at t: Int64) {
        let category = list.intern("stage"), n = list.intern(name)
        list.append(t, thread, .intervalEnd(category: category, name: n))
    }

    mutating func metadata(_ key: String, _ value: String) {
        let k = list.intern(key), v = list.intern(value)
        list.append(0, main, .metadata(key: k, value: v))
    }

    func analyze(rates: [Double] = [60, 120]) throws -> Analysis {
        try Analyzer.analyze([list], options: AnalyzerOptions(refreshRatesHz: rates))
    }
}
