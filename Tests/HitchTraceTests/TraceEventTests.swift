import Testing
import HitchReader

@Test func stringIDsOrderByRawValue() {
    #expect(StringID(rawValue: 1) < StringID(rawValue: 2))
}
