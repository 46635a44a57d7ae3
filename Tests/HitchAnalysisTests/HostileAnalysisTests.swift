import Foundation
import HitchReader
import Testing
@testable import HitchAnalysis

/// Hostile input to the analyzer and to budgets. Inputs that once crashed run in a child
/// process (exit tests), so a regression fails its test instead of killing the whole suite.
@Suite struct HostileAnalysisTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let regressions = repository.appendingPathComponent("Tests/Fixtures/regressions")

    /// Fuzzer findings (scripts/fuzz.sh analyze): FXT files whose timestamps make the analyzer's
    /// duration arithmetic overflow (ticks near 2^63 or 2^64 read as huge or negative nanoseconds).
    static let analyzeRegressions = (try? FileManager.default.contentsOfDirectory(atPath: regressions.path))?
        .filter { $0.hasPrefix("analyze-") }.sorted() ?? []

    /// All findings in one child process; each name is printed first, so a trap names its input.
    @Test func fuzzerFindingsAnalyzeWithoutTrapping() async throws {
        try #require(!Self.analyzeRegressions.isEmpty)
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            for name in HostileAnalysisTests.analyzeRegressions {
                print("analyzing \(name)")
                fflush(nil)
                _ = try? HostileAnalysisTests.analyzeAndEncode(path: HostileAnalysisTests.regressions.appendingPathComponent(name).path)
            }
        }
        // On failure the child's output is not returned: `scripts/fuzz.sh repro analyze FILE` names the trap.
        if let result { #expect(String(decoding: result.standardOutputContent, as: UTF8.self).contains("analyzing")) }
    }

    /// Every kind of event with timestamps at the ends of Int64 (what any importer can produce from a
    /// hostile file): the analyzer gives an Analysis (or an error), never a trap, and it encodes as JSON.
    @Test func extremeTimestampsInEveryPassDoNotTrap() async {
        await #expect(processExitsWith: .success) {
            for (start, end) in HostileAnalysisTests.extremePairs {
                var list = TraceEventList()
                let main = list.thread("main"), render = list.thread("render")
                let stage = list.intern("stage"), work = list.intern("work"), view = list.intern("Row")
                list.append(start, main, .frameBegan(FrameBegan(frameID: 1, vsyncNs: start, targetNs: end, periodNs: end)))
                list.append(start, main, .interactionBegin(kind: list.intern("scroll")))
                list.append(start, main, .intervalBegin(category: stage, name: work))
                list.append(start, main, .intervalComplete(category: stage, name: work, endNs: end))
                list.append(start, main, .bodyEvaluation(BodyEvaluation(viewType: view, identity: 1, endNs: end)))
                list.append(start, main, .layoutPass(endNs: end, viewCount: .max))
                list.append(start, render, .inferenceOp(InferenceOp(name: work, computeUnit: view, layer: .max, tokenIndex: .min,
                                                                    bytesRead: .max, bytesWritten: .max, flops: .max, endNs: end)))
                list.append(start, render, .token(TokenEvent(stage: .produced, index: .min)))
                list.append(end, main, .token(TokenEvent(stage: .shown, index: .min)))
                list.append(end, main, .intervalEnd(category: stage, name: work))
                list.append(end, main, .frameCommitted(frameID: 1))
                list.append(end, render, .frameRenderEnded(frameID: 1))
                list.append(end, render, .framePresented(frameID: 1))
                list.append(end, main, .counter(name: list.intern("resident-bytes"), value: .infinity))
                list.append(end, main, .interactionEnd(kind: list.intern("scroll")))
                list.append(end, main, .droppedEvents(count: .max))
                list.append(end, main, .droppedEvents(count: .max))
                // Scheduler counters at both ends of their range (the fuzzer found a pressure
                // reading whose microseconds overflowed when scaled to nanoseconds).
                for (at, value) in [(start, Int64(0)), (end, Int64.max), (end, Int64.min), (start, Int64.max)] {
                    list.append(at, main, .threadState(ThreadStateReading(frameID: 1, phase: value == 0 ? .frameBegan : .committed, cpuNs: value,
                                                                          runnableWaitNs: value, voluntarySwitches: value, involuntarySwitches: value)))
                    list.append(at, render, .threadState(ThreadStateReading(frameID: 1, phase: value == 0 ? .renderBegan : .renderEnded, cpuNs: value,
                                                                            runnableWaitNs: value, voluntarySwitches: value, involuntarySwitches: value)))
                    list.append(at, main, .machineState(MachineStateReading(stealNs: value, cpuPressureSomeUs: value, cgroupThrottledUs: value,
                                                                            onlineCPUs: value == 0 ? 0 : (value > 0 ? .max : .min))))
                    list.append(at, main, .schedSwitch(SchedSwitch(direction: value > 0 ? .switchedOut : .switchedIn, preempted: value < 0)))
                }
                guard let analysis = try? Analyzer.analyze([list], options: AnalyzerOptions(refreshRatesHz: [60, 120, 1000])) else { continue }
                _ = try JSONEncoder().encode(analysis)
            }
        }
    }

    static let extremePairs: [(Int64, Int64)] = [
        (0, .max), (.min, .max), (.max, .min), (-1, .max), (.max - 1, .max), (.min, 0), (1 << 62, -(1 << 62)),
    ]

    static func analyzeAndEncode(path: String) throws -> Int {
        let analysis = try Analyzer.analyze(paths: [path], options: AnalyzerOptions(refreshRatesHz: [60, 120, 90]))
        return try JSONEncoder().encode(analysis).count
    }

    // MARK: Budgets

    /// Hostile budget files: each is refused with one line naming the file, or accepted; never a
    /// crash or hang (deep nesting, huge numbers, odd metric paths, wrong types, invalid UTF-8).
    static let hostileBudgets: [(String, Data)] = [
        ("empty", Data()),
        ("not JSON", Data("budgets: max 5".utf8)),
        ("invalid UTF-8", Data([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D])),
        ("deep nesting", Data(("{\"budgets\":" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}").utf8)),
        ("budgets not a list", Data(#"{"budgets": {"metric": "x"}}"#.utf8)),
        ("boolean limit", Data(#"{"budgets": [{"metric": "hitches.120.hitchCount", "max": true}]}"#.utf8)),
        ("string limit", Data(#"{"budgets": [{"metric": "hitches.120.hitchCount", "max": "5"}]}"#.utf8)),
        ("huge limit", Data(#"{"budgets": [{"metric": "hitches.120.hitchCount", "max": 1e999}]}"#.utf8)),
        ("unclosed selector", Data(#"{"budgets": [{"metric": "stages[filter.selfMs", "max": 1}]}"#.utf8)),
        ("empty selector", Data(#"{"budgets": [{"metric": "stages[].selfMs", "max": 1}]}"#.utf8)),
        ("unknown metric", Data(#"{"budgets": [{"metric": "../../etc/passwd", "max": 1}]}"#.utf8)),
        ("no limit", Data(#"{"budgets": [{"metric": "hitches.120.hitchCount"}]}"#.utf8)),
        ("unknown key", Data(#"{"budgets": [{"metric": "hitches.120.hitchCount", "max": 1, "exec": "rm"}]}"#.utf8)),
        ("control characters", Data("{\"budgets\": [{\"metric\": \"hitches.120.hitch\u{0}Count\", \"max\": 1}]}".utf8)),
    
    ]

    @Test func hostileBudgetFilesAreRefusedWithOneLine() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            for (name, data) in HostileAnalysisTests.hostileBudgets {
                print("budget case: \(name)")
                fflush(nil)
                do {
                    let budgets = try BudgetFile.parse(data, path: "hostile.json")
                    _ = try BudgetFile.evaluate(budgets, against: Analysis())
                } catch {
                    let line = "\(error)"
                    guard !line.contains("\n"), line.contains("hostile.json") else { print("bad error: \(line)"); exit(3) }
                }
            }
        }
        if let result { #expect(String(decoding: result.standardOutputContent, as: UTF8.self).contains("budget case: control characters")) }
    }

    /// Fuzzer findings (scripts/fuzz.sh budget): a metric name or key holding a newline was echoed
    /// as is, so the "one line" error spanned several lines. Every budget finding must give a
    /// one-line error naming the file.
    @Test func budgetFindingsGiveOneLineErrors() throws {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: Self.regressions.path)) ?? [])
            .filter { $0.hasPrefix("budget-") }.sorted()
        try #require(!names.isEmpty)
        for name in names {
            let data = try Data(contentsOf: Self.regressions.appendingPathComponent(name))
            do {
                let budgets = try BudgetFile.parse(data, path: "hostile.json")
                _ = try BudgetFile.evaluate(budgets, against: Analysis())
            } catch {
                #expect(!"\(error)".contains("\n") && !"\(error)".contains("\r"), "\(name): \(error)")
            }
        }
    }

    /// F10: each budget costs ~3 KB, so a budget file holds at most `BudgetFile.maxBudgets`; one
    /// more is a one-line error before any budget is built, and the limit itself still parses.
    @Test func budgetCountIsCapped() throws {
        func file(_ count: Int) -> Data {
            let one = "{\"metric\": \"hitches.120.hitchCount\", \"max\": 1}"
            return Data(("{\"budgets\": [" + Array(repeating: one, count: count).joined(separator: ",") + "]}").utf8)
        }
        #expect(try BudgetFile.parse(file(BudgetFile.maxBudgets), path: "many.json").count == BudgetFile.maxBudgets)
        #expect(file(BudgetFile.maxBudgets + 1).count < BudgetFile.maxFileBytes)
        do {
            _ = try BudgetFile.parse(file(BudgetFile.maxBudgets + 1), path: "many.json")
            Issue.record("\(BudgetFile.maxBudgets + 1) budgets were accepted")
        } catch {
            #expect("\(error)".contains("at most \(BudgetFile.maxBudgets)") && !"\(error)".contains("\n"), "\(error)")
        }
    }

    /// A budget on a figure that is not a number (a verdict string, a whole section) is a budget
    /// error with one line, not a pass or a crash.
    @Test func budgetOnANonNumericFigureIsAnError() throws {
        var list = TraceEventList()
        let main = list.thread("main")
        list.append(0, main, .frameBegan(FrameBegan(frameID: 1, vsyncNs: 0, targetNs: 8_333_333, periodNs: 8_333_333)))
        list.append(4_000_000, main, .frameCommitted(frameID: 1))
        let analysis = try Analyzer.analyze([list], options: AnalyzerOptions(refreshRatesHz: [120]))
        for metric in ["hitches.120.verdict", "hitches.120", "stages"] {
            #expect(throws: BudgetError.self, "\(metric)") {
                let budgets = try BudgetFile.parse(Data(#"{"budgets": [{"metric": "\#(metric)", "max": 1}]}"#.utf8), path: "b.json")
                _ = try BudgetFile.evaluate(budgets, against: analysis, path: "b.json")
            }
        }
    }
}
