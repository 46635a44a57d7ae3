import Foundation

/// The one JSON encoder setup every JSON output uses: sorted keys, two-space indentation, no
/// escaped slashes, and non-finite numbers as strings (a JSON number cannot be infinite).
public enum JSONOutput {
    public static func encoder(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    /// `value` as JSON text with a final newline.
    public static func text(_ value: some Encodable) throws -> String {
        String(decoding: try encoder().encode(value), as: UTF8.self) + "\n"
    }
}
