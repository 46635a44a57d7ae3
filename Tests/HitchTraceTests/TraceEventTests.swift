import Testing
@testable import HitchTrace

@Test func stringIDsOrderByRawValue() {
    #expect(StringID(rawValue: 1) < StringID(rawValue: 2))
}
