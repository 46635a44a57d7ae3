import Foundation

// Every way the history store can fail, each with the context the one-line message needs.

public enum HistoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `--db` is neither a file path nor a postgres:// URL libpq accepts.
    case badLocation(String, reason: String)
    /// No database at this path, for a command that only reads it (only `history add` creates one).
    case missing(String)
    /// The database could not be opened or refused the connection (server down, bad password).
    case cannotOpen(String, reason: String)
    /// The file is not an SQLite database, or is damaged.
    case corrupted(String, reason: String)
    /// The schema was written by a newer hitch; this one will not touch it.
    case newerSchema(found: Int, supported: Int)
    /// A statement failed (constraint, disk full, lost connection).
    case statement(String, reason: String)
    /// A command's input was wrong (an unknown metric, a bad tag).
    case invalid(String)
    /// The store's C library (libsqlite3, libpq) could not be loaded; `reason` names it and gives dlerror().
    case libraryUnavailable(store: String, reason: String)

    public var description: String {
        let text = switch self {
        case let .badLocation(location, reason): "bad history database '\(location)': \(reason)"
        case let .missing(location):
            "no history database at '\(location)' (check --db or $HITCH_DB): 'hitch history add TRACE --commit SHA' creates one"
        case let .cannotOpen(location, reason): "cannot open history database '\(location)': \(reason)"
        case let .corrupted(location, reason): "history database '\(location)' is damaged or not a database: \(reason)"
        case let .newerSchema(found, supported):
            "history database has schema version \(found), newer than this hitch supports (\(supported)); upgrade hitch"
        case let .statement(what, reason): "history database error while \(what): \(reason)"
        case let .invalid(reason): reason
        case let .libraryUnavailable(store, reason): "the \(store) history store is unavailable: \(reason)"
        }
        // One line, whatever a server or a file put in its message.
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
