import CHistoryLibraries
import Foundation

// PostgreSQL through libpq, loaded on first use (HistoryLibraries), for a fleet of CI runners
// writing to one database. Parameters travel as text (libpq's simplest path); results come back as
// text and are converted by the reader.

final class PostgresConnection: SQLConnection {
    let dialect = SQLDialect.postgres
    private var handle: OpaquePointer?
    /// The URL with any password removed, for messages.
    private let location: String
    private let pq: hitch_libpq_functions

    init(url: String) throws(HistoryError) {
        location = Self.redacted(url)
        pq = try HistoryLibraries.libpq()
        var parseError: UnsafeMutablePointer<CChar>?
        guard let options = pq.conninfoParse(url, &parseError) else {
            let reason = parseError.map { String(cString: $0) } ?? "not a connection URL"
            pq.freemem(parseError)
            throw .badLocation(location, reason: reason)
        }
        pq.conninfoFree(options)
        guard let connection = pq.connectdb(url) else { throw .cannotOpen(location, reason: "out of memory") }
        guard pq.status(connection) == CONNECTION_OK else {
            let reason = HistoryLibraries.text(pq.errorMessage(connection))
            pq.finish(connection)
            throw .cannotOpen(location, reason: reason)
        }
        handle = connection
        // Notices ("relation already exists, skipping") are not the user's business.
        _ = pq.setNoticeProcessor(connection, { _, _ in }, nil)
    }

    deinit { close() }

    func close() {
        if let handle { pq.finish(handle) }
        handle = nil
    }

    /// `postgres://user:secret@host/db` -> `postgres://user:***@host/db`.
    static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let credentials = url[scheme.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// `?` placeholders become `$1`, `$2`, … (no statement of ours has a `?` inside a string literal).
    static func numbered(_ sql: String) -> String {
        var result = ""
        var number = 0
        for character in sql {
            if character == "?" { number += 1; result += "$\(number)" } else { result.append(character) }
        }
        return result
    }

    private func run(_ sql: String, _ parameters: [SQLValue]) throws(HistoryError) -> OpaquePointer {
        guard let handle else { throw .statement("running a statement", reason: "connection closed") }
        let texts: [String?] = parameters.map { value in
            switch value {
            case .null: nil
            case .integer(let number): String(number)
            case .real(let number): number.isFinite ? String(number) : (number.isNaN ? "NaN" : (number < 0 ? "-Infinity" : "Infinity"))
            case .text(let text): text
            }
        }
        let result: OpaquePointer? = if parameters.isEmpty {
            pq.exec(handle, sql)
        } else {
            withCStrings(texts) { pointers in
                pq.execParams(handle, Self.numbered(sql), Int32(pointers.count), nil, pointers, nil, nil, 0)
            }
        }
        guard let result else { throw .statement("running a statement", reason: HistoryLibraries.text(pq.errorMessage(handle))) }
        let status = pq.resultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let reason = HistoryLibraries.text(pq.resultErrorMessage(result))
            pq.clear(result)
            if pq.status(handle) != CONNECTION_OK { throw .cannotOpen(location, reason: reason) }
            throw .statement("running a statement", reason: reason)
        }
        return result
    }

    func execute(_ sql: String, _ parameters: [SQLValue]) throws(HistoryError) {
        pq.clear(try run(sql, parameters))
    }

    func query(_ sql: String, _ parameters: [SQLValue], row: ([SQLValue]) throws(HistoryError) -> Void) throws(HistoryError) {
        let result = try run(sql, parameters)
        defer { pq.clear(result) }
        let rows = pq.ntuples(result), columns = pq.nfields(result)
        var values = [SQLValue](repeating: .null, count: Int(columns))
        for r in 0..<rows {
            for c in 0..<columns {
                values[Int(c)] = pq.getisnull(result, r, c) != 0 ? .null : .text(HistoryLibraries.text(pq.getvalue(result, r, c)))
            }
            try row(values)
        }
    }

    func beginWriting() throws(HistoryError) { try execute("BEGIN") }
    func commit() throws(HistoryError) { try execute("COMMIT") }
    func rollback() { try? execute("ROLLBACK") }
}

/// Calls `body` with C strings for `strings` (nil stays a null pointer), valid for the call only.
private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0) } ?? nil }
    defer { for copy in copies { free(copy) } }
    return body(copies.map { $0.map { UnsafePointer($0) } })
}
