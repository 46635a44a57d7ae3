#ifndef HITCH_SYMBOLS_H
#define HITCH_SYMBOLS_H
// Address -> function lookup over the process's loaded ELF images (symbols.c). Reads each image's
// .symtab and .dynsym once (the file is mapped read-only and kept), so internal functions that
// dladdr cannot see (Swift's non-exported symbols) still get names. Off the hot path: thread-safe
// behind a mutex; never call it from a signal handler.
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t start;          ///< runtime address of the function's first byte (0 when unnamed)
    uint64_t size;           ///< bytes (0 when unnamed)
    const char *name;        ///< raw (possibly mangled) symbol name, or NULL; lives as long as the process
    const char *image_path;  ///< path of the image holding the address; lives as long as the process
    uint64_t image_base;     ///< load bias of that image (runtime address = file address + image_base)
} hitch_symbol;

/// Returns 1 when a function symbol covers `address` (all fields set), 0 when only its image is
/// known (name NULL, start/size 0), -1 when no loaded image contains it.
int hitch_symbol_lookup(uint64_t address, hitch_symbol *out);

/// The C++ runtime's demangling of an Itanium-mangled name (`_ZN5swift13equalContexts…`), as a
/// malloc'd string the caller frees, or NULL when `mangled` is not a valid C++ name.
char *hitch_cxx_demangle(const char *mangled);

/// Forgets the image list so the next lookup re-reads it (images loaded or unloaded since).
/// Symbol tables already read stay cached.
void hitch_symbols_refresh_images(void);

#ifdef __cplusplus
}
#endif
#endif
