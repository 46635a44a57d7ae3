// A small ELF symbol reader over dl_iterate_phdr: which image holds an address, and which function
// symbol of that image's .symtab/.dynsym covers it. Each image file is mapped read-only once and
// kept (names point into it), and its function symbols are sorted once, so a lookup is a binary
// search. Every read of the mapped file is bounds-checked: a truncated or hostile file yields no
// symbols, never a fault.
#define _GNU_SOURCE
#include "hitch_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    uint64_t value;      // file address (st_value)
    uint64_t size;
    const char *name;
} function_symbol;

typedef struct {
    char *path;
    uint64_t base;
    uint64_t low, high;  // runtime range covered by its PT_LOAD segments
    int symbols_loaded;
    function_symbol *symbols;
    size_t symbol_count;
} loaded_image;

static pthread_mutex_t symbols_lock = PTHREAD_MUTEX_INITIALIZER;
static loaded_image *images;
static size_t image_count, image_capacity;
static int images_current;

static int in_bounds(uint64_t offset, uint64_t length, uint64_t total) {
    return offset <= total && length <= total - offset;
}

static int compare_symbols(const void *a, const void *b) {
    const function_symbol *x = a, *y = b;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    // Prefer the sized entry (and, between equals, keep order stable by name pointer).
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return 0;
}

/// Appends the function symbols of one symbol table section (SHT_SYMTAB or SHT_DYNSYM).
static void collect_symbols(const unsigned char *file, uint64_t file_size, const Elf64_Shdr *sections,
                            uint16_t section_count, const Elf64_Shdr *table,
                            function_symbol **out, size_t *count, size_t *capacity) {
    if (table->sh_entsize != sizeof(Elf64_Sym) || table->sh_link >= section_count) return;
    const Elf64_Shdr *strings = &sections[table->sh_link];
    if (!in_bounds(table->sh_offset, table->sh_size, file_size) ||
        !in_bounds(strings->sh_offset, strings->sh_size, file_size) || strings->sh_size == 0) return;
    const char *string_table = (const char *)file + strings->sh_offset;
    uint64_t symbol_total = table->sh_size / sizeof(Elf64_Sym);
    const Elf64_Sym *symbols = (const Elf64_Sym *)(file + table->sh_offset);
    for (uint64_t i = 0; i < symbol_total; i++) {
        const Elf64_Sym *symbol = &symbols[i];
        int type = ELF64_ST_TYPE(symbol->st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol->st_shndx == SHN_UNDEF || symbol->st_value == 0) continue;
        if (symbol->st_name >= strings->sh_size) continue;
        const char *name = string_table + symbol->st_name;
        if (memchr(name, 0, strings->sh_size - symbol->st_name) == NULL || name[0] == 0) continue;
        if (*count == *capacity) {
            size_t grown = *capacity ? *capacity * 2 : 1024;
            function_symbol *bigger = realloc(*out, grown * sizeof **out);
            if (bigger == NULL) return;
            *out = bigger;
            *capacity = grown;
        }
        (*out)[(*count)++] = (function_symbol){symbol->st_value, symbol->st_size, name};
    }
}

static void load_symbols(loaded_image *image) {
    image->symbols_loaded = 1;
    int fd = open(image->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat status;
    if (fstat(fd, &status) != 0 || status.st_size < (off_t)sizeof(Elf64_Ehdr)) { close(fd); return; }
    uint64_t file_size = (uint64_t)status.st_size;
    void *mapping = mmap(NULL, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (mapping == MAP_FAILED) return;
    const unsigned char *file = mapping;
    const Elf64_Ehdr *header = mapping;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64 ||
        header->e_shentsize != sizeof(Elf64_Shdr) || header->e_shnum == 0 ||
        !in_bounds(header->e_shoff, (uint64_t)header->e_shnum * sizeof(Elf64_Shdr), file_size)) {
        munmap(mapping, file_size);
        return;
    }
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(file + header->e_shoff);
    function_symbol *symbols = NULL;
    size_t count = 0, capacity = 0;
    for (uint16_t i = 0; i < header->e_shnum; i++) {
        if (sections[i].sh_type == SHT_SYMTAB || sections[i].sh_type == SHT_DYNSYM)
            collect_symbols(file, file_size, sections, header->e_shnum, &sections[i], &symbols, &count, &capacity);
    }
    if (count == 0) { free(symbols); munmap(mapping, file_size); return; }
    qsort(symbols, count, sizeof *symbols, compare_symbols);
    // .symtab and .dynsym repeat exported functions: keep one entry per address. Unsized entries
    // (hand-written assembly) extend to the next symbol.
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        if (kept > 0 && symbols[kept - 1].value == symbols[i].value) continue;
        symbols[kept++] = symbols[i];
    }
    for (size_t i = 0; i < kept; i++) {
        if (symbols[i].size == 0 && i + 1 < kept) symbols[i].size = symbols[i + 1].value - symbols[i].value;
    }
    image->symbols = symbols;
    image->symbol_count = kept;
    // The mapping stays: symbol names point into it for the life of the process.
}

static int add_image(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size; (void)context;
    uint64_t low = UINT64_MAX, high = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD) continue;
        uint64_t start = info->dlpi_addr + segment->p_vaddr;
        if (start < low) low = start;
        if (start + segment->p_memsz > high) high = start + segment->p_memsz;
    }
    if (high <= low) return 0;
    const char *name = info->dlpi_name;
    char executable[4096];
    if (name == NULL || name[0] == 0) {
        ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
        if (length <= 0) return 0;
        executable[length] = 0;
        name = executable;
    }
    for (size_t i = 0; i < image_count; i++) {
        if (images[i].base == info->dlpi_addr && images[i].low == low && strcmp(images[i].path, name) == 0) return 0;
    }
    if (image_count == image_capacity) {
        size_t grown = image_capacity ? image_capacity * 2 : 64;
        loaded_image *bigger = realloc(images, grown * sizeof *images);
        if (bigger == NULL) return 1;
        images = bigger;
        image_capacity = grown;
    }
    char *path = strdup(name);
    if (path == NULL) return 1;
    images[image_count++] = (loaded_image){.path = path, .base = info->dlpi_addr, .low = low, .high = high};
    return 0;
}

static loaded_image *image_containing(uint64_t address) {
    // Newest first: an address range reused after dlclose belongs to the image loaded last.
    for (size_t i = image_count; i > 0; i--) {
        if (address >= images[i - 1].low && address < images[i - 1].high) return &images[i - 1];
    }
    return NULL;
}

int hitch_symbol_lookup(uint64_t address, hitch_symbol *out) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&symbols_lock);
    if (!images_current) { dl_iterate_phdr(add_image, NULL); images_current = 1; }
    loaded_image *image = image_containing(address);
    if (image == NULL) {
        dl_iterate_phdr(add_image, NULL); // perhaps loaded since the last look
        image = image_containing(address);
    }
    if (image == NULL) { pthread_mutex_unlock(&symbols_lock); return -1; }
    if (!image->symbols_loaded) load_symbols(image);
    out->image_path = image->path;
    out->image_base = image->base;
    int found = 0;
    uint64_t file_address = address - image->base;
    size_t low = 0, high = image->symbol_count;
    while (low < high) { // first symbol with value > file_address
        size_t middle = low + (high - low) / 2;
        if (image->symbols[middle].value <= file_address) low = middle + 1; else high = middle;
    }
    if (low > 0) {
        const function_symbol *symbol = &image->symbols[low - 1];
        if (file_address < symbol->value + symbol->size) {
            out->start = symbol->value + image->base;
            out->size = symbol->size;
            out->name = symbol->name;
            found = 1;
        }
    }
    pthread_mutex_unlock(&symbols_lock);
    return found;
}

void hitch_symbols_refresh_images(void) {
    pthread_mutex_lock(&symbols_lock);
    images_current = 0;
    pthread_mutex_unlock(&symbols_lock);
}

// The C++ runtime's demangler (libstdc++'s ABI entry point, linked in Package.swift).
extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

char *hitch_cxx_demangle(const char *mangled) {
    if (!mangled || mangled[0] != '_' || mangled[1] != 'Z') return NULL;
    int status = 0;
    char *demangled = __cxa_demangle(mangled, NULL, NULL, &status);
    if (status != 0) { free(demangled); return NULL; }
    return demangled;
}
