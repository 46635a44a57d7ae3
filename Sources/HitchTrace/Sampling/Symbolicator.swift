import CHitchSupport
#if canImport(Glibc)
import Glibc
#endif

/// One function (or, when the image has no symbol for it, one bare address) of a loaded image.
public struct ResolvedSymbol: Sendable, Equatable {
    /// Runtime address of the function's first byte (the bare address when unnamed).
    public var address: UInt64
    /// Bytes the function spans (1 when unnamed).
    public var size: UInt64
    /// Demangled function name; empty when the image has no symbol covering the address.
    public var function: String
    /// Path of the image (executable or shared object) holding the address.
    public var image: String
    /// `address` minus the image's load bias: the file address tools like addr2line take.
    public var offset: UInt64

    public init(address: UInt64, size: UInt64, function: String, image: String, offset: UInt64) {
        self.address = address; self.size = size; self.function = function; self.image = image; self.offset = offset
    }
}

/// Names the process's code addresses: the function (from each image's .symtab/.dynsym, read by
/// CHitchSupport's ELF reader, so internal Swift functions that dladdr cannot see get names), the
/// image and the offset. Swift names are demangled. Each distinct address is resolved once.
public enum Symbolicator {
    /// The symbol covering `address`, or nil when no loaded image contains it.
    public static func resolve(_ address: UInt64) -> ResolvedSymbol? {
        var symbol = hitch_symbol()
        let found = hitch_symbol_lookup(address, &symbol)
        guard found >= 0, let imagePath = symbol.image_path else { return nil }
        let image = String(cString: imagePath)
        if found == 1, let name = symbol.name {
            return ResolvedSymbol(address: symbol.start, size: max(symbol.size, 1),
                                  function: demangle(String(cString: name)), image: image,
                                  offset: symbol.start &- symbol.image_base)
        }
        return ResolvedSymbol(address: address, size: 1, function: "", image: image,
                              offset: address &- symbol.image_base)
    }

    /// Forgets the list of loaded images (call after dlopen/dlclose; lookups also refresh on a miss).
    public static func refreshImages() { hitch_symbols_refresh_images() }

    /// The readable form of a Swift or C++ (Itanium, `_Z…`) mangled name; other names come back unchanged.
    public static func demangle(_ name: String) -> String {
        if name.hasPrefix("_Z") {
            guard let demangled = hitch_cxx_demangle(name) else { return name }
            defer { free(demangled) }
            return String(cString: demangled)
        }
        guard name.hasPrefix("$s") || name.hasPrefix("_$s") || name.hasPrefix("$S") || name.hasPrefix("_T0") else {
            return name
        }
        var name = name
        return name.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                guard let demangled = swiftDemangle(chars.baseAddress, chars.count, nil, nil, 0) else {
                    return String(decoding: bytes, as: UTF8.self)
                }
                defer { free(demangled) }
                return String(cString: demangled)
            }
        }
    }
}

/// The Swift runtime's demangler (exported C entry point; returns a malloc'd string or NULL).
@_silgen_name("swift_demangle")
private func swiftDemangle(_ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int,
                           _ outputBuffer: UnsafeMutablePointer<CChar>?,
                           _ outputBufferSize: UnsafeMutablePointer<Int>?,
                           _ flags: UInt32) -> UnsafeMutablePointer<CChar>?
