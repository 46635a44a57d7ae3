import CHistoryLibraries
import Foundation

// SQLite through the system library, loaded on first use (HistoryLibraries). Prepared statements
// are cached by their text (the store runs the same few thousands of times when it writes a run's
// metrics).

final class SQLiteConnection: SQLConnection {
    let dialect = SQLDialect.sqlite
    private var handle: OpaquePointer?
    private let location: String
    private var statements: [String: OpaquePointer] = [:]
    private let sqlite: hitch_sqlite_functions

    /// Opens the database file at `path`: with `.create`, creating it (and its folder) when
    /// missing; otherwise a missing file is an error; `.readOnly` never writes to the file.
    init(path: String, access: HistoryStore.Access = .create) throws(HistoryError) {
        // Before anything is created: without the library, nothing is written.
        sqlite = try HistoryLibraries.sqlite()
        location = path
        if access != .create && !FileManager.default.fileExists(atPath: path) {
            throw .missing(path)
        }
        let folder = (path as NSString).deletingLastPathComponent
        if access == .create && !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw .cannotOpen(path, reason: "cannot create folder '\(folder)'")
            }
        }
        var db: OpaquePointer?
        let mode: Int32 = switch access {
        case .create: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readWrite: SQLITE_OPEN_READWRITE
        case .readOnly: SQLITE_OPEN_READONLY
        }
        let status = sqlite.open_v2(path, &db, mode | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let db else {
            let reason = db.map { HistoryLibraries.text(sqlite.errmsg($0)) } ?? HistoryLibraries.text(sqlite.errstr(status))
            _ = sqlite.close(db)
            throw .cannotOpen(path, reason: reason)
        }
        handle = db
        // Concurrent writers (several `hitch history add` at once) wait for the lock instead of failing.
        _ = sqlite.busy_timeout(db, 60_000)
        _ = sqlite.extended_result_codes(db, 1)
        // The first statement reads the file's header: a file that is not a database fails here.
        try execute("PRAGMA foreign_keys = ON")
        // Setting the journal mode writes the file's header: a reader leaves it as the writers set it.
        if access != .readOnly { try query("PRAGMA journal_mode = WAL", []) { _ in } }
    }

    deinit { close() }

    func close() {
        for statement in statements.values { _ = sqlite.finalize(statement) }
        statements = [:]
        if let handle { _ = sqlite.close_v2(handle) }
        handle = nil
    }

    private func failure(_ what: String, _ status: Int32) -> HistoryError {
        let reason = handle.map { HistoryLibraries.text(sqlite.errmsg($0)) } ?? HistoryLibraries.text(sqlite.errstr(status))
        switch status & 0xFF {
        case SQLITE_NOTADB, SQLITE_CORRUPT: return .corrupted(location, reason: reason)
        case SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM: return .cannotOpen(location, reason: reason)
        default: return .statement(what, reason: reason)
        }
    }

    private func prepared(_ sql: String) throws(HistoryError) -> OpaquePointer {
        if let statement = statements[sql] {
            _ = sqlite.reset(statement)
            _ = sqlite.clear_bindings(statement)
            return statement
        }
        var statement: OpaquePointer?
        let status = sqlite.prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure("preparing a statement", status) }
        statements[sql] = statement
        return statement
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ statement: OpaquePointer, _ parameters: [SQLValue]) {
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: _ = sqlite.bind_null(statement, index)
            case .integer(let number): _ = sqlite.bind_int64(statement, index, number)
            case .real(let number): _ = sqlite.bind_double(statement, index, number)
            case .text(let text): _ = sqlite.bind_text(statement, index, text, -1, Self.transient)
            }
        }
    }

    func execute(_ sql: String, _ parameters: [SQLValue]) throws(HistoryError) {
        if parameters.isEmpty && sql.contains(";") {
            var message: UnsafeMutablePointer<CChar>?
            let status = sqlite.exec(handle, sql, nil, nil, &message)
            sqlite.free(message)
            guard status == SQLITE_OK else { throw failure("running a statement", status) }
            return
        }
        try query(sql, parameters) { _ in }
    }

    func query(_ sql: String, _ parameters: [SQLValue], row: ([SQLValue]) throws(HistoryError) -> Void) throws(HistoryError) {
        let statement = try prepared(sql)
        defer { _ = sqlite.reset(statement) }
        bind(statement, parameters)
        let columns = sqlite.column_count(statement)
        var values = [SQLValue](repeating: .null, count: Int(columns))
        while true {
            let status = sqlite.step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw failure("running a statement", status) }
            for column in 0..<columns {
                switch sqlite.column_type(statement, column) {
                case SQLITE_INTEGER: values[Int(column)] = .integer(sqlite.column_int64(statement, column))
                case SQLITE_FLOAT: values[Int(column)] = .real(sqlite.column_double(statement, column))
                case SQLITE_NULL: values[Int(column)] = .null
                default: values[Int(column)] = .text(sqlite.column_text(statement, column).map { String(cString: $0) } ?? "")
                }
            }
            try row(values)
        }
    }

    func beginWriting() throws(HistoryError) { try execute("BEGIN IMMEDIATE") }
    func commit() throws(HistoryError) { try execute("COMMIT") }
    func rollback() { try? execute("ROLLBACK") }
}
