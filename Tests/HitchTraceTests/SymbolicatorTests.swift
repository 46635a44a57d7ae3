import Foundation
import Testing
@testable import HitchTrace

@inline(never) func symbolicatorProbe() -> [UInt64] { Backtrace.addresses() }

struct SymbolicatorTests {
    @Test func internalSwiftFunctionIsNamedWithImageAndOffset() throws {
        let address = try #require(symbolicatorProbe().first)
        let symbol = try #require(Symbolicator.resolve(address))
        #expect(symbol.function.contains("symbolicatorProbe()"), "\(symbol)")
        #expect(symbol.address <= address && address < symbol.address + symbol.size)
        #expect(!symbol.image.isEmpty)
        #expect(symbol.offset <= symbol.address)
    }

    @Test func libcFunctionIsNamedFromDynsym() throws {
        // RTLD_DEFAULT is NULL on glibc.
        let address = UInt64(UInt(bitPattern: dlsym(nil, "getpid")))
        let symbol = try #require(Symbolicator.resolve(address))
        #expect(symbol.function.contains("getpid"), "\(symbol)")
        #expect(symbol.image.contains("libc"))
    }

    @Test func unmappedAddressHasNoSymbol() {
        #expect(Symbolicator.resolve(8) == nil)
    }

    @Test func swiftNamesAreDemangled() {
        #expect(Symbolicator.demangle("$sSi1poiyS2i_SitFZ") == "static Swift.Int.+ infix(Swift.Int, Swift.Int) -> Swift.Int")
        #expect(Symbolicator.demangle("memcpy") == "memcpy")
    }
}
