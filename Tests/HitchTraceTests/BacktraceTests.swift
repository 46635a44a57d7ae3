import Foundation
import Testing
@testable import HitchTrace

/// A model whose setter captures the writer's stack, the way an invalidation source does.
final class BacktraceModel: @unchecked Sendable { // only touched by one test thread
    private var storage = ""
    var lastStack: [UInt64] = []
    var query: String {
        get { storage }
        @inline(never) set {
            storage = newValue
            lastStack = Backtrace.addresses()
        }
    }
}

@inline(never) func typeIntoBacktraceModel(_ model: BacktraceModel) { model.query = "swift" }

struct BacktraceTests {
    @Test func writersStackNamesTheSetterAndItsCaller() {
        let model = BacktraceModel()
        typeIntoBacktraceModel(model)
        let names = model.lastStack.map { Symbolicator.resolve($0)?.function ?? "?" }
        #expect(names.count >= 2)
        #expect(names.first?.contains("BacktraceModel.query.setter") == true, "\(names)")
        #expect(names.dropFirst().first?.contains("typeIntoBacktraceModel") == true, "\(names)")
    }
}

// Backtrace.isEnabled is process-wide: toggle it only inside the serialized SamplerTests suite.
extension SamplerTests {
    @Test func captureIsOffUnlessEnabled() {
        Backtrace.isEnabled = false
        #expect(Backtrace.capture() == nil)
    }
}
