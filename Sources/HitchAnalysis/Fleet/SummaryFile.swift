import Foundation

/// A summary file as read back: a trace's (`hitch summarize`) or a fleet's (`hitch merge --format
/// state`), told apart by its `format`, checked against the versions this hitch reads.
public enum SummaryFile: Sendable {
    case trace(TraceSummary)
    case fleet(FleetSummary)

    /// Reads `data` (the file `name`), refusing with one line what is not a summary this hitch reads.
    public static func decode(_ data: Data, name: String) throws(SummaryError) -> SummaryFile {
        struct Header: Decodable { var format: String?; var version: Int? }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let header: Header
        do { header = try decoder.decode(Header.self, from: data) } catch {
            throw SummaryError("'\(name)' is not a summary (not a JSON object: \(Self.reason(error))); summaries come from 'hitch summarize' and 'hitch merge --format state'")
        }
        let (expected, current): (String, Int)
        switch header.format {
        case TraceSummary.formatName: (expected, current) = (TraceSummary.formatName, TraceSummary.currentVersion)
        case FleetSummary.formatName: (expected, current) = (FleetSummary.formatName, FleetSummary.currentVersion)
        default:
            throw SummaryError("'\(name)' is not a summary (its \"format\" is \(header.format.map { "'\($0)'" } ?? "missing"), not \(TraceSummary.formatName) or \(FleetSummary.formatName)); summaries come from 'hitch summarize' and 'hitch merge --format state'")
        }
        guard let version = header.version, version >= 1 else { throw SummaryError("'\(name)': a \(expected) without a version (1 to \(current))") }
        guard version <= current else {
            throw SummaryError("'\(name)' is a \(expected) of version \(version), newer than this hitch reads (up to \(current)): upgrade hitch")
        }
        let file: SummaryFile
        do {
            file = expected == TraceSummary.formatName ? .trace(try decoder.decode(TraceSummary.self, from: data))
                                                       : .fleet(try decoder.decode(FleetSummary.self, from: data))
        } catch {
            throw SummaryError("'\(name)' is a damaged \(expected): \(Self.reason(error))")
        }
        if let problem = file.problem { throw SummaryError("'\(name)' is a damaged \(expected): \(problem)") }
        return file
    }

    /// What decoding cannot see: a frame-time histogram of another shape, or counts no trace has.
    private var problem: String? {
        switch self {
        case .trace(let trace): trace.totals.hitches.problem
        case .fleet(let fleet): ([fleet.totals.hitches] + fleet.groups.map(\.hitches)).lazy.compactMap(\.problem).first
        }
    }

    /// What a decoding error says, with the key path it stopped at.
    private static func reason(_ error: Error) -> String {
        func path(_ keys: [CodingKey]) -> String {
            keys.isEmpty ? "" : " at " + keys.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
        }
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context): return "no \"\(key.stringValue)\"\(path(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.debugDescription.trimmingCharacters(in: CharacterSet(charactersIn: ".")) + path(context.codingPath)
        @unknown default: return "\(error)"
        }
    }

    /// As a fleet: a trace summary becomes a fleet of one, grouped by `groupings`.
    public func fleet(groupings: [[String]]) -> FleetSummary {
        switch self {
        case .trace(let trace): FleetSummary(trace, groupings: groupings)
        case .fleet(let fleet): fleet
        }
    }
}
