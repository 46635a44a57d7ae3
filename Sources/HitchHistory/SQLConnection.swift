// The little SQL the history store needs, behind one protocol so one store serves both back ends:
// SQLite (embedded, the default) and PostgreSQL (a fleet's shared database). Statements are written
// once with `?` placeholders; a connection rewrites them for its dialect (PostgreSQL's `$1`).

/// A value bound to a placeholder or read from a column.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value)
        case .text(let text): Int64(text)
        case .null: nil
        }
    }

    var real: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        case .text(let text): Double(text)
        case .null: nil
        }
    }

    var text: String? {
        switch self {
        case .text(let text): text
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .null: nil
        }
    }
}

enum SQLDialect: Sendable {
    case sqlite
    case postgres
}

/// One open database connection. Not shared between threads: each process (or test) opens its own.
protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    /// Runs statements that return no rows (several, separated by `;`, when `parameters` is empty).
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(HistoryError)
    /// Runs a query and hands each row to `row`, in order.
    func query(_ sql: String, _ parameters: [SQLValue], row: ([SQLValue]) throws(HistoryError) -> Void) throws(HistoryError)
    /// Starts a transaction that takes the write lock at once (SQLite's BEGIN IMMEDIATE), so two
    /// writers queue instead of failing half-way.
    func beginWriting() throws(HistoryError)
    func commit() throws(HistoryError)
    func rollback()
    func close()
}

extension SQLConnection {
    func execute(_ sql: String) throws(HistoryError) { try execute(sql, []) }

    func rows(_ sql: String, _ parameters: [SQLValue] = []) throws(HistoryError) -> [[SQLValue]] {
        var result: [[SQLValue]] = []
        try query(sql, parameters) { result.append($0) }
        return result
    }

    /// Runs `body` in one transaction: all of it is written, or (on any error) none of it.
    func transaction<T>(_ body: () throws(HistoryError) -> T) throws(HistoryError) -> T {
        try beginWriting()
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollback()
            throw error
        }
    }
}
