import Synchronization

/// Writes each distinct function's symbol record into a recording once, the first time one of
/// its addresses appears in a stack (from the sampler's drain thread or a captured backtrace).
enum SymbolDefinitions {
    private struct State {
        weak var recorder: TraceRecorder?
        /// Addresses already resolved for this recording (symbolication runs once per address).
        var seenAddresses: Set<UInt64> = []
        /// Function start addresses already written.
        var definedFunctions: Set<UInt64> = []
    }

    private static let state = Locked(State())

    static func define(_ addresses: some Sequence<UInt64>, in recorder: TraceRecorder) {
        state.withLock { state in
            if state.recorder !== recorder {
                state = State()
                state.recorder = recorder
            }
            for address in addresses where state.seenAddresses.insert(address).inserted {
                guard let symbol = Symbolicator.resolve(address) else { continue }
                guard state.definedFunctions.insert(symbol.address).inserted else { continue }
                recorder.defineSymbol(address: symbol.address, size: symbol.size, function: symbol.function,
                                      image: symbol.image, offset: symbol.offset)
            }
        }
    }
}
