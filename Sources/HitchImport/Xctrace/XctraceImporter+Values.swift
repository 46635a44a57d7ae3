// How an `xctrace export` writes a value (XctraceImporter): a word, a number, a backtrace frame, a
// cause graph node's label, and a view's identity from its id.

extension XctraceImporter {
    /// A value's word as Instruments shows it (its `fmt`, else its text), nil when empty or absent.
    static func word(_ value: XValue?) -> String? {
        guard let value else { return nil }
        let text = (value.fmt ?? value.text).trimmingSpaces
        return text.isEmpty ? nil : String(text)
    }

    /// An id or count: the element's text (`4685385`), else its `fmt` in decimal or hex (`0x477e49`).
    static func number(_ value: XValue) -> Int64? {
        if let number = Int64(value.text.trimmingSpaces) { return number }
        let fmt = value.fmt?.trimmingSpaces ?? ""
        return fmt.hasPrefix("0x") ? Int64(fmt.dropFirst(2), radix: 16) : Int64(fmt)
    }

    /// A backtrace frame's address and what to call it, in every form exports write (Xcode 12.5 to
    /// 26): `<frame name="f" addr="0x…">` with its `<binary name load-addr>` (or a ref to one), a
    /// frame Instruments could not symbolicate (`name` is its address: named `binary+0xoffset`), a
    /// frame without an address (named, given an address of its own from its name's hash, above
    /// 2^63 where no code is).
    static func frameSymbol(_ frame: XValue) -> (UInt64, (function: String, image: String, offset: UInt64))? {
        func hex(_ text: String?) -> UInt64? {
            guard let text = text?.trimmingSpaces, !text.isEmpty else { return nil }
            return text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
        }
        let binary = frame.child("binary")
        let image = binary?.attribute("name") ?? ""
        let name = (frame.attribute("name") ?? frame.fmt ?? "").trimmingSpaces
        guard let address = hex(frame.attribute("addr")) ?? (name.isEmpty ? nil : identity(String(name)) | 1 << 63) else { return nil }
        let offset = hex(binary?.attribute("load-addr")).map { address &- $0 } ?? 0
        var function = name.clipped(to: 1000)
        if function.isEmpty || hex(function) == address {
            function = image.isEmpty ? "0x" + String(address, radix: 16) : image + "+0x" + String(offset, radix: 16)
        }
        return (address, (function, image.clipped(to: 200), offset))
    }

    /// A cause graph node's label: a `typed-array`'s first value (label, color, symbol, ... follow;
    /// its `fmt` joins them all), else the element's `fmt` or text. At most 200 characters.
    static func nodeLabel(_ value: XValue?) -> String? {
        guard let value else { return nil }
        let node = value.name == "typed-array" ? value.children.first { $0.name != "sentinel" } : value
        guard let node else { return nil }
        let text = (node.fmt ?? node.text).trimmingSpaces
        return text.isEmpty ? nil : text.clipped(to: 200)
    }

    /// A view's identity from its `id` text: FNV-1a, so one id is one identity across rows.
    static func identity(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
