// The system SQLite (Debian libsqlite3-dev): the history store's embedded default.
#include <sqlite3.h>
