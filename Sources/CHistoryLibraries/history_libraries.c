// See hitch_history_libraries.h. Each library is opened once per process (pthread_once); after
// that its table, or its error, never changes, so readers on any thread need no lock.
#include "hitch_history_libraries.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// One library's names, and the error loading it came to.
struct history_library {
    /// Tests name a library file here (an absent one, one without the functions) to exercise the
    /// failure path for real; internal, not a user setting.
    const char *test_path_variable;
    /// The runtime package's name (libsqlite3-0, libpq5), then the -dev package's link.
    const char *versioned, *unversioned;
    char error[512];
};

/// "cannot load NAME: REASON", without dlerror()'s own "NAME: " in front of its reason.
static void write_error(struct history_library *library, const char *name, const char *reason) {
    if (!reason) reason = "unknown error";
    size_t length = strlen(name);
    if (strncmp(reason, name, length) == 0 && strncmp(reason + length, ": ", 2) == 0) reason += length + 2;
    snprintf(library->error, sizeof library->error, "cannot load %s: %s", name, reason);
}

/// Opens the library (RTLD_NOW: a missing dependency fails here, not at a later call) and names the
/// file it opened in `*opened`; NULL when no name opens, with the first name's dlerror() written
/// (the versioned name's reason is the one worth reading).
static void *open_library(struct history_library *library, const char **opened) {
    const char *forced = getenv(library->test_path_variable);
    const char *names[2] = {library->versioned, library->unversioned};
    if (forced && *forced) { names[0] = forced; names[1] = NULL; }
    for (int i = 0; i < 2 && names[i]; i++) {
        void *handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle) { *opened = names[i]; return handle; }
        const char *reason = dlerror();
        if (i == 0) write_error(library, names[0], reason);
    }
    return NULL;
}

/// dlsym's answer for one function; the first missing one writes the error and the rest are skipped.
static void *resolve(void *handle, struct history_library *library, const char *opened, const char *symbol, int *failed) {
    if (*failed) return NULL;
    dlerror();
    void *address = dlsym(handle, symbol);
    if (address) return address;
    write_error(library, opened, dlerror());
    *failed = 1;
    return NULL;
}

static void copy_error(char *error, size_t capacity, const struct history_library *library) {
    if (capacity > 0) snprintf(error, capacity, "%s", library->error);
}

// One library's table, loaded once: `hitch_NAME_load`, its state, and `load_NAME`, which fills the
// table from FUNCTIONS (the header's X-macro of the functions it calls). A library without our
// functions stays open when the table fails: dlclose would gain nothing.
#define HISTORY_LIBRARY(NAME, TABLE, FUNCTIONS, TEST_PATH_VARIABLE, VERSIONED, UNVERSIONED)                 \
    static pthread_once_t NAME##_once = PTHREAD_ONCE_INIT;                                                  \
    static struct history_library NAME##_library = {TEST_PATH_VARIABLE, VERSIONED, UNVERSIONED, ""};        \
    static TABLE NAME##_functions;                                                                          \
    static const TABLE *NAME##_loaded;                                                                      \
                                                                                                            \
    static void load_##NAME(void) {                                                                         \
        struct history_library *library = &NAME##_library;                                                  \
        TABLE *table = &NAME##_functions;                                                                   \
        const char *opened = NULL;                                                                          \
        void *handle = open_library(library, &opened);                                                      \
        if (!handle) return;                                                                                \
        int failed = 0;                                                                                     \
        FUNCTIONS(RESOLVE)                                                                                  \
        if (!failed) NAME##_loaded = table;                                                                 \
    }                                                                                                       \
                                                                                                            \
    const TABLE *hitch_##NAME##_load(char *error, size_t capacity) {                                        \
        pthread_once(&NAME##_once, load_##NAME);                                                            \
        if (!NAME##_loaded) copy_error(error, capacity, &NAME##_library);                                   \
        return NAME##_loaded;                                                                               \
    }

/// One function of the table, in `load_NAME`.
#define RESOLVE(prefix, name) table->name = (__typeof__(table->name))resolve(handle, library, opened, #prefix #name, &failed);

HISTORY_LIBRARY(sqlite, hitch_sqlite_functions, HITCH_SQLITE_FUNCTIONS, "HITCH_TEST_SQLITE_LIBRARY", "libsqlite3.so.0", "libsqlite3.so")
HISTORY_LIBRARY(libpq, hitch_libpq_functions, HITCH_LIBPQ_FUNCTIONS, "HITCH_TEST_LIBPQ_LIBRARY", "libpq.so.5", "libpq.so")
