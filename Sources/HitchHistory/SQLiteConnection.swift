import CSQLite
import Foundation

// SQLite through the system library. Prepared statements are cached by their text (the store runs
// the same few thousands of times when it writes a run's metrics).

final class SQLiteConnection: SQLConnection {
    let dialect = SQLDialect.sqlite
    private var handle: OpaquePointer?
    private let location: String
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating when missing) the database file at `path`; its folder is created too.
    init(path: String) throws(HistoryError) {
        location = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw .cannotOpen(path, reason: "cannot create folder '\(folder)'")
            }
        }
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let db else {
            let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close(db)
            throw .cannotOpen(path, reason: reason)
        }
        handle = db
        // Concurrent writers (several `hitch history add` at once) wait for the lock instead of failing.
        sqlite3_busy_timeout(db, 60_000)
        sqlite3_extended_result_codes(db, 1)
        // The first statement reads the file's header: a file that is not a database fails here.
        try execute("PRAGMA foreign_keys = ON")
        try query("PRAGMA journal_mode = WAL", []) { _ in }
    }

    deinit { close() }

    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private func failure(_ what: String, _ status: Int32) -> HistoryError {
        let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
        switch status & 0xFF {
        case SQLITE_NOTADB, SQLITE_CORRUPT: return .corrupted(location, reason: reason)
        case SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM: return .cannotOpen(location, reason: reason)
        default: return .statement(what, reason: reason)
        }
    }

    private func prepared(_ sql: String) throws(HistoryError) -> OpaquePointer {
        if let statement = statements[sql] {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            return statement
        }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure("preparing a statement", status) }
        statements[sql] = statement
        return statement
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ statement: OpaquePointer, _ parameters: [SQLValue]) {
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: sqlite3_bind_null(statement, index)
            case .integer(let number): sqlite3_bind_int64(statement, index, number)
            case .real(let number): sqlite3_bind_double(statement, index, number)
            case .text(let text): sqlite3_bind_text(statement, index, text, -1, Self.transient)
            }
        }
    }

    func execute(_ sql: String, _ parameters: [SQLValue]) throws(HistoryError) {
        if parameters.isEmpty && sql.contains(";") {
            var message: UnsafeMutablePointer<CChar>?
            let status = sqlite3_exec(handle, sql, nil, nil, &message)
            sqlite3_free(message)
            guard status == SQLITE_OK else { throw failure("running a statement", status) }
            return
        }
        try query(sql, parameters) { _ in }
    }

    func query(_ sql: String, _ parameters: [SQLValue], row: ([SQLValue]) throws(HistoryError) -> Void) throws(HistoryError) {
        let statement = try prepared(sql)
        defer { sqlite3_reset(statement) }
        bind(statement, parameters)
        let columns = sqlite3_column_count(statement)
        var values = [SQLValue](repeating: .null, count: Int(columns))
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw failure("running a statement", status) }
            for column in 0..<columns {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: values[Int(column)] = .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: values[Int(column)] = .real(sqlite3_column_double(statement, column))
                case SQLITE_NULL: values[Int(column)] = .null
                default: values[Int(column)] = .text(sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "")
                }
            }
            try row(values)
        }
    }

    func beginWriting() throws(HistoryError) { try execute("BEGIN IMMEDIATE") }
    func commit() throws(HistoryError) { try execute("COMMIT") }
    func rollback() { try? execute("ROLLBACK") }
}
