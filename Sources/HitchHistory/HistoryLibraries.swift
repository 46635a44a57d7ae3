import CHistoryLibraries

// The stores' C libraries, loaded with dlopen by the first store that needs one (once per process,
// in C: hitch_history_libraries.h), so commands other than `hitch history` never map them.

enum HistoryLibraries {
    /// libsqlite3's functions, or `.libraryUnavailable` naming the library and dlerror().
    static func sqlite() throws(HistoryError) -> hitch_sqlite_functions {
        try load(store: "SQLite", package: "libsqlite3-0", hitch_sqlite_load)
    }

    /// libpq's functions, or `.libraryUnavailable` naming the library and dlerror().
    static func libpq() throws(HistoryError) -> hitch_libpq_functions {
        try load(store: "PostgreSQL", package: "libpq5", hitch_libpq_load)
    }

    /// A C string a library returned (none is NULL where the stores read one; "" if it ever were).
    /// Calls through the tables see C's `char *` as an optional, not as the `!` of a direct call.
    static func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
    static func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String { text(UnsafePointer(pointer)) }

    private static func load<Functions>(store: String, package: String,
                                        _ loader: (UnsafeMutablePointer<CChar>, Int) -> UnsafePointer<Functions>?) throws(HistoryError) -> Functions {
        var message = [CChar](repeating: 0, count: 512)
        let functions = message.withUnsafeMutableBufferPointer { loader($0.baseAddress!, $0.count) }
        guard let functions else {
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw .libraryUnavailable(store: store, reason: "\(reason) (Debian package \(package))")
        }
        return functions.pointee
    }
}
