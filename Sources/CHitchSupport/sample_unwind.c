// The sampler's unwinder, run on the drain thread (an ordinary thread), never in a signal handler.
//
// A sample is a snapshot: the interrupted thread's registers and a bounded copy of its stack from
// SP up (sampler.c's handler takes it). This file unwinds a snapshot with libunwind's *remote* API,
// as perf does for PERF_SAMPLE_STACK_USER (tools/perf/util/unwind-libunwind-local.c has the shape):
// our accessors serve registers from the copy, stack memory from the copied bytes, and everything
// else only from the loaded modules' PT_LOAD segments; find_proc_info looks the IP up in our own
// table of modules and hands that module's .eh_frame_hdr search table to libunwind's
// dwarf_search_unwind_table.
//
// Why reading module memory here is safe: every unwind runs inside a dl_iterate_phdr callback
// (sampler.c's batch), so the drain thread holds glibc's dl_load_write_lock for the whole batch.
// dlclose unmaps an object (DL_UNMAP in _dl_close_worker) and unlinks it while holding that same
// lock, and dlopen links a new object into the list under it, so while the callback runs the
// list is frozen and every object in it is mapped. The table is checked against the live list at
// the start of each batch (a nested dl_iterate_phdr: the lock is recursive), so the unwinder
// never reads an address outside a module that is in the list right now. This keeps the cost of a
// read at a memcpy instead of a fault-safe syscall per word. The price is that a batch holds off
// other threads' dlopen/dlclose for its duration (batches are bounded, see sampler.c).
//
// The lock must never be waited on from inside a batch for anything else: nothing here calls
// dlopen, dlsym, dladdr or the symbolicator (dladdr takes dl_load_lock, which a thread in dlopen
// holds while it waits for the write lock we hold).
#define _GNU_SOURCE
#if defined(__linux__) // dl_iterate_phdr's lock semantics and libunwind-x86_64: the sampler is Linux-only
// The remote (generic) API: unw_* map to _Ux86_64_*, in libunwind-x86_64.
#include <libunwind.h>

#include "hitch_clock.h"
#include "sample_snapshot.h"

#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                               unw_proc_info_t *pi, int need_unwind_info, void *arg);

typedef struct {
    uint64_t start, end; // [start, end)
} address_range;

typedef struct {
    uint64_t code_start, code_end;   // the span of the executable PT_LOAD segments
    uint64_t load_bias;
    uint64_t phdr;                   // with load_bias and name: the object's identity
    uint64_t eh_frame_hdr;           // 0: no usable .eh_frame_hdr (libunwind falls back to RBP)
    uint64_t search_table;
    uint64_t fde_count;
    uint32_t first_generation;       // the table generation in which this object first appeared
    char *name;
} loaded_module;

/// One object as the loader lists it right now (collected by the nested dl_iterate_phdr).
typedef struct {
    uint64_t load_bias;
    const ElfW(Phdr) *phdr;
    uint16_t phnum;
    const char *name;
} listed_object;

// Drain-thread state (the batch runs under sampler.c's pop_lock and inside the loader's lock).
static loaded_module *modules;       // sorted by code_start
static size_t module_count;
static address_range *readable;      // every PT_LOAD segment of every module, sorted
static size_t readable_count;
static listed_object *listed;
static size_t listed_count, listed_capacity;
static unsigned long long table_adds = ~0ull, table_subs = ~0ull; // the loader's counters the table was built at
static unsigned long long listed_adds, listed_subs;
static _Atomic uint32_t module_generation;
static unw_addr_space_t address_space;
// When each recent generation's table was built (CLOCK_MONOTONIC ns), newest at history_next - 1:
// samples the kernel took carry a time, and this gives the generation current at that time.
#define GENERATION_HISTORY 64
typedef struct { uint32_t generation; uint64_t built_ns; } generation_start;
static generation_start generation_history[GENERATION_HISTORY];
static uint32_t history_count, history_next;
static uint64_t refresh_started_ns;
static uint32_t table_epoch = 1;     // bumped by every table rebuild: older memo entries never match

uint32_t hitch_unwind_module_generation(void) {
    return atomic_load_explicit(&module_generation, memory_order_acquire);
}

uint32_t hitch_unwind_module_generation_at(uint64_t monotonic_ns) {
    if (history_count == 0) return hitch_unwind_module_generation();
    for (uint32_t back = 1; back <= history_count; back++) {
        uint32_t index = (history_next + GENERATION_HISTORY - back) % GENERATION_HISTORY;
        if (generation_history[index].built_ns <= monotonic_ns) return generation_history[index].generation;
    }
    uint32_t oldest = (history_next + GENERATION_HISTORY - history_count) % GENERATION_HISTORY;
    return generation_history[oldest].generation - 1;
}

// MARK: - Module table

static const loaded_module *module_containing(uint64_t address) {
    size_t low = 0, high = module_count;
    while (low < high) {
        size_t mid = (low + high) / 2;
        if (modules[mid].code_start <= address) low = mid + 1; else high = mid;
    }
    if (low == 0) return NULL;
    const loaded_module *module = &modules[low - 1];
    return address < module->code_end ? module : NULL;
}

static int is_readable(uint64_t address, uint64_t size) {
    size_t low = 0, high = readable_count;
    while (low < high) {
        size_t mid = (low + high) / 2;
        if (readable[mid].start <= address) low = mid + 1; else high = mid;
    }
    if (low == 0) return 0;
    const address_range *range = &readable[low - 1];
    return address + size >= address && address + size <= range->end;
}

/// Reads one pointer-encoded value of .eh_frame_hdr (the encodings linkers emit there).
static int read_encoded(const uint8_t **cursor, uint8_t encoding, uint64_t *value) {
    const uint8_t *p = *cursor;
    uint64_t base = 0;
    switch (encoding & 0x70) {
    case 0x00: break;                                 // DW_EH_PE_absptr
    case 0x10: base = (uint64_t)(uintptr_t)p; break;  // DW_EH_PE_pcrel
    default: return 0;
    }
    switch (encoding & 0x0f) {
    case 0x00: { uint64_t v; memcpy(&v, p, 8); *value = base + v; *cursor = p + 8; return 1; }  // absptr
    case 0x03: { uint32_t v; memcpy(&v, p, 4); *value = base + v; *cursor = p + 4; return 1; }  // udata4
    case 0x0b: { int32_t v; memcpy(&v, p, 4); *value = base + (uint64_t)(int64_t)v; *cursor = p + 4; return 1; } // sdata4
    default: return 0;
    }
}

static void describe_module(const listed_object *object, loaded_module *module) {
    memset(module, 0, sizeof *module);
    module->load_bias = object->load_bias;
    module->phdr = (uint64_t)(uintptr_t)object->phdr;
    module->code_start = UINT64_MAX;
    uint64_t hdr = 0;
    for (uint16_t i = 0; i < object->phnum; i++) {
        const ElfW(Phdr) *ph = &object->phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uint64_t start = object->load_bias + ph->p_vaddr;
            if (start < module->code_start) module->code_start = start;
            if (start + ph->p_memsz > module->code_end) module->code_end = start + ph->p_memsz;
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            hdr = object->load_bias + ph->p_vaddr;
        }
    }
    if (module->code_start == UINT64_MAX) module->code_start = module->code_end = 0;
    if (hdr != 0 && is_readable(hdr, 12)) {
        // version 1, eh_frame_ptr encoding, fde_count encoding, table encoding, then the values.
        const uint8_t *bytes = (const uint8_t *)(uintptr_t)hdr;
        const uint8_t *cursor = bytes + 4;
        uint64_t eh_frame = 0, count = 0;
        // The table must be datarel|sdata4 (0x3b): libunwind's remote-table search assumes it.
        if (bytes[0] == 1 && bytes[3] == 0x3b && read_encoded(&cursor, bytes[1], &eh_frame) &&
            read_encoded(&cursor, bytes[2], &count) && count > 0 &&
            is_readable((uint64_t)(uintptr_t)cursor, count * 8)) {
            module->eh_frame_hdr = hdr;
            module->search_table = (uint64_t)(uintptr_t)cursor;
            module->fde_count = count;
        }
    }
    module->name = strdup(object->name ? object->name : "");
}

static int collect_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size; (void)data;
    if (listed_count == listed_capacity) {
        size_t capacity = listed_capacity ? listed_capacity * 2 : 64;
        listed_object *grown = realloc(listed, capacity * sizeof *grown);
        if (grown == NULL) return 1; // keep what we have; the table is rebuilt next batch
        listed = grown;
        listed_capacity = capacity;
    }
    listed[listed_count++] = (listed_object){
        .load_bias = info->dlpi_addr, .phdr = info->dlpi_phdr, .phnum = info->dlpi_phnum, .name = info->dlpi_name};
    listed_adds = info->dlpi_adds;
    listed_subs = info->dlpi_subs;
    return 0;
}

static int compare_modules(const void *a, const void *b) {
    uint64_t x = ((const loaded_module *)a)->code_start, y = ((const loaded_module *)b)->code_start;
    return x < y ? -1 : x > y;
}

static int compare_ranges(const void *a, const void *b) {
    uint64_t x = ((const address_range *)a)->start, y = ((const address_range *)b)->start;
    return x < y ? -1 : x > y;
}

static int same_object(const loaded_module *module, const listed_object *object) {
    return module->load_bias == object->load_bias && module->phdr == (uint64_t)(uintptr_t)object->phdr &&
           strcmp(module->name, object->name ? object->name : "") == 0;
}

static void rebuild_table(void) {
    uint32_t generation = atomic_load_explicit(&module_generation, memory_order_relaxed) + 1;
    size_t segment_total = 0;
    for (size_t i = 0; i < listed_count; i++)
        for (uint16_t j = 0; j < listed[i].phnum; j++) segment_total += listed[i].phdr[j].p_type == PT_LOAD;
    address_range *new_readable = malloc((segment_total ? segment_total : 1) * sizeof *new_readable);
    loaded_module *new_modules = calloc(listed_count ? listed_count : 1, sizeof *new_modules);
    if (new_readable == NULL || new_modules == NULL) { free(new_readable); free(new_modules); return; }

    // Readable ranges first: describe_module checks the .eh_frame_hdr against them.
    size_t range_count = 0;
    for (size_t i = 0; i < listed_count; i++)
        for (uint16_t j = 0; j < listed[i].phnum; j++) {
            const ElfW(Phdr) *ph = &listed[i].phdr[j];
            if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) || ph->p_memsz == 0) continue;
            uint64_t start = listed[i].load_bias + ph->p_vaddr;
            new_readable[range_count++] = (address_range){start, start + ph->p_memsz};
        }
    qsort(new_readable, range_count, sizeof *new_readable, compare_ranges);
    address_range *old_readable = readable;
    readable = new_readable;
    readable_count = range_count;

    size_t count = 0;
    for (size_t i = 0; i < listed_count; i++) {
        loaded_module *module = &new_modules[count];
        describe_module(&listed[i], module);
        if (module->code_end == 0 || module->name == NULL) { free(module->name); continue; }
        // An object still listed at the same address with the same headers and path carries its
        // generation over: samples taken before this rebuild may still be unwound through it.
        module->first_generation = generation;
        for (size_t k = 0; k < module_count; k++)
            if (same_object(&modules[k], &listed[i])) { module->first_generation = modules[k].first_generation; break; }
        count += 1;
    }
    qsort(new_modules, count, sizeof *new_modules, compare_modules);
    table_epoch += 1; // remembered unwinds read the old table's modules
    for (size_t k = 0; k < module_count; k++) free(modules[k].name);
    free(modules);
    free(old_readable);
    modules = new_modules;
    module_count = count;
    if (address_space != NULL) unw_flush_cache(address_space, 0, 0);
    atomic_store_explicit(&module_generation, generation, memory_order_release);
    // The list has been frozen (we hold the loader's lock) since the refresh began: a sample taken
    // after that moment ran with exactly these modules.
    generation_history[history_next] = (generation_start){generation, refresh_started_ns};
    history_next = (history_next + 1) % GENERATION_HISTORY;
    if (history_count < GENERATION_HISTORY) history_count += 1;
}

static int table_matches_list(void) {
    if (listed_adds != table_adds || listed_subs != table_subs) return 0;
    size_t matched = 0;
    for (size_t i = 0; i < listed_count; i++) {
        const loaded_module *module = NULL;
        for (size_t k = 0; k < module_count && module == NULL; k++)
            if (same_object(&modules[k], &listed[i])) module = &modules[k];
        if (module != NULL) matched += 1;
        else {
            // Objects without executable segments are never in the table; they don't count.
            int has_code = 0;
            for (uint16_t j = 0; j < listed[i].phnum; j++)
                has_code |= listed[i].phdr[j].p_type == PT_LOAD && (listed[i].phdr[j].p_flags & PF_X);
            if (has_code) return 0;
        }
    }
    return matched == module_count;
}

// MARK: - The unwind memo: one libunwind walk per distinct stack

// libunwind is deterministic: the frames it finds depend only on the register values and the
// stack words it reads (module memory is fixed while the table's generation is). So each complete
// unwind is remembered with exactly those inputs, and a later snapshot whose registers and stack
// words at the same addresses are equal gets the same frames without running libunwind again. A
// busy thread is sampled in the same few stacks over and over; libunwind's own per-IP cache still
// costs a signal-mask syscall pair per frame (Debian's build takes a lock around it), ~9 us a sample.
// Direct-mapped by (PC, SP); a collision replaces the entry. Drain thread only.
#define MEMO_ENTRIES 512
#define MEMO_MAX_FRAMES 64
#define MEMO_MAX_READS 128

typedef struct {
    uint64_t address, value;
} memo_read;

typedef struct {
    uint64_t pc, sp;                 // the key (pc 0: empty)
    uint32_t epoch;                  // table_epoch when remembered
    uint32_t snapshot_generation;    // the sample's module generation
    uint32_t register_mask;          // registers the unwind read (bit per snapshot register)
    uint32_t read_count, depth;
    uint64_t stack_bytes_read;
    uint64_t registers[SNAPSHOT_REGISTERS];
    memo_read reads[MEMO_MAX_READS];
    uint64_t frames[MEMO_MAX_FRAMES];
} memo_entry;

static memo_entry *memo;            // allocated at the first unwind
static _Atomic uint64_t memo_hits;

uint64_t hitch_unwind_memo_hits(void) { return atomic_load_explicit(&memo_hits, memory_order_relaxed); }

static memo_entry *memo_slot(uint64_t pc, uint64_t sp) {
    uint64_t hash = (pc ^ (sp * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return &memo[(hash >> 32) % MEMO_ENTRIES];
}

// MARK: - libunwind accessors

typedef struct {
    const sample_snapshot *snapshot;
    const uint64_t *stack;
    uint64_t copied_end;     // stack_base + copied bytes
    uint64_t highest_read;   // one past the highest copied stack byte read
    int ran_off_copy;        // a read asked for stack bytes above the copy
    int reached_new_module;  // find_proc_info met a module newer than the sample
    memo_entry *recording;   // the inputs of this unwind, for the memo (NULL: not recorded)
    int recording_overflow;  // more stack reads than an entry holds
    int read_failed;         // some read was refused: its outcome hangs on more than the recorded inputs
} unwind_context;

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info, void *arg) {
    unwind_context *context = arg;
    const loaded_module *module = module_containing(ip);
    if (module == NULL) return -UNW_ENOINFO;
    if (module->first_generation > context->snapshot->module_generation) {
        context->reached_new_module = 1;
        return -UNW_EINVAL;
    }
    if (module->eh_frame_hdr == 0) return -UNW_ENOINFO;
    unw_dyn_info_t info;
    memset(&info, 0, sizeof info);
    info.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    info.start_ip = module->code_start;
    info.end_ip = module->code_end;
    info.u.rti.segbase = module->eh_frame_hdr;
    info.u.rti.table_data = module->search_table;
    // Entries are two 4-byte values; the length is in words.
    info.u.rti.table_len = module->fde_count * 8 / sizeof(unw_word_t);
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &info, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {
    // libunwind frees what dwarf_search_unwind_table allocated (UNW_INFO_FORMAT_TABLE) itself.
    (void)as; (void)pi; (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *address, void *arg) {
    (void)as; (void)address; (void)arg;
    return -UNW_ENOINFO; // no dynamically registered unwind info (JIT) is looked up
}

static int access_mem(unw_addr_space_t as, unw_word_t address, unw_word_t *value, int write, void *arg) {
    (void)as;
    unwind_context *context = arg;
    if (write) return -UNW_EINVAL;
    const sample_snapshot *snapshot = context->snapshot;
    uint64_t base = snapshot->stack_base;
    // Compared as an offset into the copy: a garbage address near 2^64 must not wrap `address + 8`
    // below the copy's end (a TSan run read far outside the copy that way).
    if (address >= base && context->copied_end - base >= sizeof *value &&
        address - base <= context->copied_end - base - sizeof *value) {
        memcpy(value, (const uint8_t *)context->stack + (address - base), sizeof *value);
        if (address + sizeof *value > context->highest_read) context->highest_read = address + sizeof *value;
        memo_entry *recording = context->recording;
        if (recording != NULL) {
            if (recording->read_count < MEMO_MAX_READS)
                recording->reads[recording->read_count++] = (memo_read){address, *value};
            else
                context->recording_overflow = 1;
        }
        return 0;
    }
    if (address >= base && address < snapshot->stack_limit) {
        context->ran_off_copy = 1;
        context->read_failed = 1;
        return -UNW_EINVAL;
    }
    if (is_readable(address, sizeof *value)) {
        memcpy(value, (const void *)(uintptr_t)address, sizeof *value);
        return 0;
    }
    context->read_failed = 1;
    return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *value, int write, void *arg) {
    (void)as;
    unwind_context *context = arg;
    if (write || reg < 0 || reg >= SNAPSHOT_REGISTERS) return -UNW_EBADREG;
    *value = context->snapshot->registers[reg];
    if (context->recording != NULL) context->recording->register_mask |= 1u << reg;
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *value, int write, void *arg) {
    (void)as; (void)reg; (void)value; (void)write; (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cursor, void *arg) {
    (void)as; (void)cursor; (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t address, char *buffer, size_t length, unw_word_t *offset, void *arg) {
    (void)as; (void)address; (void)buffer; (void)length; (void)offset; (void)arg;
    return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

// MARK: - Entry points (drain thread, inside a dl_iterate_phdr callback)

void hitch_unwind_refresh_modules(void) {
    if (address_space == NULL) {
        address_space = unw_create_addr_space(&accessors, 0);
        // Per-IP register-state cache: a hot IP's CFI is parsed once (flushed on every rebuild). Per
        // thread, because only the drain thread unwinds, and libunwind's global cache masks signals
        // with two sigprocmask calls per frame around its lock.
        if (address_space != NULL) unw_set_caching_policy(address_space, UNW_CACHE_PER_THREAD);
    }
    refresh_started_ns = hitch_monotonic_ns();
    listed_count = 0;
    dl_iterate_phdr(collect_object, NULL); // recursive: the caller already holds the loader's lock
    if (module_count > 0 && table_matches_list()) return;
    rebuild_table();
    table_adds = listed_adds;
    table_subs = listed_subs;
}

/// The remembered frames if `entry` holds an unwind of this same input (same PC and SP, same table
/// and module generation, equal registers read, equal stack words at every address read, each
/// inside this snapshot's copy); else 0.
static uint32_t memo_replay(const memo_entry *entry, const sample_snapshot *snapshot, const uint64_t *stack,
                            uint64_t copied_end, uint64_t *frames, uint32_t capacity) {
    if (entry->pc != snapshot->registers[SNAPSHOT_REG_RIP] || entry->sp != snapshot->registers[SNAPSHOT_REG_RSP] ||
        entry->epoch != table_epoch || entry->snapshot_generation != snapshot->module_generation ||
        entry->depth > capacity)
        return 0;
    for (uint32_t reg = 0; reg < SNAPSHOT_REGISTERS; reg++)
        if (((entry->register_mask >> reg) & 1) && entry->registers[reg] != snapshot->registers[reg]) return 0;
    uint64_t base = snapshot->stack_base;
    for (uint32_t i = 0; i < entry->read_count; i++) {
        uint64_t address = entry->reads[i].address, value;
        if (address < base || copied_end - base < sizeof value || address - base > copied_end - base - sizeof value)
            return 0;
        memcpy(&value, (const uint8_t *)stack + (address - base), sizeof value);
        if (value != entry->reads[i].value) return 0;
    }
    memcpy(frames, entry->frames, entry->depth * sizeof *frames);
    return entry->depth;
}

uint32_t hitch_unwind_snapshot(const sample_snapshot *snapshot, const uint64_t *stack,
                               uint64_t *frames, uint32_t capacity, unwind_end *end,
                               uint64_t *stack_bytes_read) {
    uint64_t pc = snapshot->registers[SNAPSHOT_REG_RIP];
    *stack_bytes_read = 0;
    *end = UNWIND_COMPLETE;
    if (capacity == 0 || pc == 0) { *end = UNWIND_ERROR; return 0; }
    const loaded_module *first = module_containing(pc);
    if (first != NULL && first->first_generation > snapshot->module_generation) {
        *end = UNWIND_MODULES_CHANGED; // the PC's code may belong to an object loaded since
        return 0;
    }
    if (snapshot->flags & SNAPSHOT_STACK_UNKNOWN) {
        frames[0] = pc;
        *end = UNWIND_STACK_UNKNOWN;
        return 1;
    }
    if (address_space == NULL) { frames[0] = pc; *end = UNWIND_ERROR; return 1; }
    uint64_t copied_end = snapshot->stack_base + (uint64_t)snapshot->stack_words * sizeof(uint64_t);
    if (memo == NULL) memo = calloc(MEMO_ENTRIES, sizeof *memo);
    memo_entry *entry = memo != NULL ? memo_slot(pc, snapshot->registers[SNAPSHOT_REG_RSP]) : NULL;
    uint32_t replayed = entry != NULL ? memo_replay(entry, snapshot, stack, copied_end, frames, capacity) : 0;
    if (replayed > 0) {
        *stack_bytes_read = entry->stack_bytes_read;
        atomic_fetch_add_explicit(&memo_hits, 1, memory_order_relaxed);
        return replayed;
    }
    if (entry != NULL) {
        entry->pc = 0; // rewritten below only if this unwind completes within the entry's limits
        entry->register_mask = 0;
        entry->read_count = 0;
    }
    unwind_context context = {
        .snapshot = snapshot, .stack = stack, .copied_end = copied_end, .recording = entry};
    unw_cursor_t cursor;
    if (unw_init_remote(&cursor, address_space, &context) < 0) { frames[0] = pc; *end = UNWIND_ERROR; return 1; }
    uint32_t depth = 0;
    for (;;) {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
        // Callers' IPs are return addresses: step back into the call instruction.
        uint64_t address = depth == 0 ? (uint64_t)ip : (uint64_t)ip - 1;
        const loaded_module *module = module_containing(address);
        if (module != NULL && module->first_generation > snapshot->module_generation) {
            *end = UNWIND_MODULES_CHANGED;
            break;
        }
        frames[depth++] = address;
        if (module == NULL && depth > 1) { *end = UNWIND_NO_MODULE; break; }
        if (depth == capacity) break;
        int step = unw_step(&cursor);
        if (step == 0) break;
        if (step < 0) {
            *end = context.reached_new_module ? UNWIND_MODULES_CHANGED
                 : context.ran_off_copy ? UNWIND_OFF_COPY_END : UNWIND_ERROR;
            break;
        }
    }
    if (depth == 0) { frames[depth++] = pc; if (*end == UNWIND_COMPLETE) *end = UNWIND_ERROR; }
    if (context.highest_read > snapshot->stack_base) *stack_bytes_read = context.highest_read - snapshot->stack_base;
    if (entry != NULL && *end == UNWIND_COMPLETE && !context.recording_overflow && !context.read_failed &&
        depth <= MEMO_MAX_FRAMES && depth < capacity) {
        // Remembered only when the walk ended by itself (not at `capacity`, which a later caller may differ in).
        entry->pc = pc;
        entry->sp = snapshot->registers[SNAPSHOT_REG_RSP];
        entry->epoch = table_epoch;
        entry->snapshot_generation = snapshot->module_generation;
        entry->depth = depth;
        entry->stack_bytes_read = *stack_bytes_read;
        for (uint32_t reg = 0; reg < SNAPSHOT_REGISTERS; reg++)
            entry->registers[reg] = (entry->register_mask >> reg) & 1 ? snapshot->registers[reg] : 0;
        memcpy(entry->frames, frames, depth * sizeof *frames);
    }
    return depth;
}
#endif
