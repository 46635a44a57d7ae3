// The system SQLite and PostgreSQL client libraries of `hitch history`, loaded with dlopen on first
// use by a store, so that every other command runs without mapping them (libpq alone pulls in 20
// more libraries: OpenSSL, GnuTLS, Kerberos, LDAP, SASL). The real headers (Debian libsqlite3-dev,
// libpq-dev) give the types, constants and prototypes; each table field is declared with the type of
// the function it holds, so the compiler checks every call against the library's own prototype.
#ifndef HITCH_HISTORY_LIBRARIES_H
#define HITCH_HISTORY_LIBRARIES_H

#include <stddef.h>
#include <sqlite3.h>
#include <postgresql/libpq-fe.h>

// The functions each store calls, once: F(prefix, name) is the C function prefix##name, held in the
// table's field `name`. The loader resolves exactly this list.
#define HITCH_SQLITE_FUNCTIONS(F) \
    F(sqlite3_, open_v2) F(sqlite3_, close) F(sqlite3_, close_v2) F(sqlite3_, errmsg) F(sqlite3_, errstr) \
    F(sqlite3_, busy_timeout) F(sqlite3_, extended_result_codes) F(sqlite3_, prepare_v2) \
    F(sqlite3_, reset) F(sqlite3_, clear_bindings) F(sqlite3_, finalize) F(sqlite3_, exec) F(sqlite3_, free) \
    F(sqlite3_, bind_null) F(sqlite3_, bind_int64) F(sqlite3_, bind_double) F(sqlite3_, bind_text) \
    F(sqlite3_, step) F(sqlite3_, column_count) F(sqlite3_, column_type) F(sqlite3_, column_int64) \
    F(sqlite3_, column_double) F(sqlite3_, column_text)

#define HITCH_LIBPQ_FUNCTIONS(F) \
    F(PQ, conninfoParse) F(PQ, conninfoFree) F(PQ, freemem) F(PQ, connectdb) F(PQ, status) \
    F(PQ, errorMessage) F(PQ, finish) F(PQ, setNoticeProcessor) F(PQ, exec) F(PQ, execParams) \
    F(PQ, resultStatus) F(PQ, resultErrorMessage) F(PQ, clear) F(PQ, ntuples) F(PQ, nfields) \
    F(PQ, getisnull) F(PQ, getvalue)

#define HITCH_LIBRARY_FIELD(prefix, name) __typeof__(prefix##name) *_Nonnull name;

/// libsqlite3's functions: `functions->step(statement)` calls sqlite3_step.
typedef struct hitch_sqlite_functions { HITCH_SQLITE_FUNCTIONS(HITCH_LIBRARY_FIELD) } hitch_sqlite_functions;
/// libpq's functions: `functions->exec(connection, sql)` calls PQexec.
typedef struct hitch_libpq_functions { HITCH_LIBPQ_FUNCTIONS(HITCH_LIBRARY_FIELD) } hitch_libpq_functions;

/// Loads libsqlite3.so.0 (else libsqlite3.so) the first time any thread asks, and resolves the
/// table. Returns it (the same one on every call), or NULL with one line in `error` naming the
/// library and dlerror(); a failure is remembered too, so every call answers the same.
const hitch_sqlite_functions *_Nullable hitch_sqlite_load(char *_Nonnull error, size_t capacity);
/// The same for libpq.so.5 (else libpq.so).
const hitch_libpq_functions *_Nullable hitch_libpq_load(char *_Nonnull error, size_t capacity);

#endif
