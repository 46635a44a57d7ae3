import Foundation
import HitchAnalysis
import HitchReader

// libFuzzer target: the budget-file parser (`hitch check --budget FILE`) over arbitrary bytes, and
// every budget it accepts evaluated against a real analysis (metric paths resolved in its JSON).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBudget(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let budgets: [Budget]
    do {
        budgets = try BudgetFile.parse(bytes, path: "fuzz.json")
    } catch {
        if error.description.contains("\n") { fatalError("budget error is not one line: \(error.description)") }
        return 0
    }
    do {
        let outcomes = try BudgetFile.evaluate(budgets, against: BudgetFuzzAnalysis.shared)
        _ = try BudgetOutcome.jsonData(outcomes)
    } catch {
        _ = "\(error)"
    }
    return 0
}

/// One analysis with frames, stages, views and hitches, built once per process.
enum BudgetFuzzAnalysis {
    static let shared: Analysis = {
        var list = TraceEventList()
        let main = list.thread("main")
        let period: Int64 = 8_333_333
        for f in 0..<40 {
            let t = Int64(f) * period
            list.append(t, main, .frameBegan(FrameBegan(frameID: UInt64(f + 1), vsyncNs: t, targetNs: t + period, periodNs: period)))
            let work: Int64 = f % 7 == 0 ? 14_000_000 : 3_000_000
            list.append(t + 10_000, main, .intervalComplete(category: list.intern("stage"), name: list.intern("filter"), endNs: t + work))
            list.append(t + 20_000, main, .bodyEvaluation(BodyEvaluation(viewType: list.intern("Row"), identity: 1, endNs: t + 900_000)))
            list.append(t + work, main, .frameCommitted(frameID: UInt64(f + 1)))
        }
        return (try? Analyzer.analyze([list])) ?? Analysis()
    }()
}
