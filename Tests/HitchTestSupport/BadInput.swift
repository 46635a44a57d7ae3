import Testing

/// Checks the rule for bad input (a clear one-line error, never a crash or silent acceptance):
/// `attempt` must throw an `E` whose message holds `fragment` on one line. Records an issue when
/// it accepts `input` or throws something else. Returns the error, for checks of its own.
@discardableResult
public func expectOneLineError<E: Error & CustomStringConvertible>(
    _ type: E.Type, for input: String, contains fragment: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ attempt: () throws -> Void
) -> E? {
    do {
        try attempt()
        Issue.record("accepted: \(input)", sourceLocation: sourceLocation)
    } catch let error as E {
        #expect(error.description.contains(fragment), "\(error.description)", sourceLocation: sourceLocation)
        #expect(!error.description.contains("\n"), "\(error.description)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("not a \(E.self): \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
