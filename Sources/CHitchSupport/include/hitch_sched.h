#ifndef HITCH_SCHED_H
#define HITCH_SCHED_H
// What the scheduler did to the threads that make frames (docs/FORMAT.md "Thread states").
// sched_state.c: each frame thread reads its own counters at its frame phases (CPU clock,
// schedstat run delay, switch counts from its own perf ring or getrusage) into its raw buffer;
// the writer thread reads the machine's counters (steal, CPU pressure, cgroup throttling).
// sched_events.c: exact context switches from a per-thread perf_event_open ring, where the kernel
// permits it.
#include <stdint.h>
#include <stddef.h>
#include "hitch_recorder.h"

/// The raw record kind of a thread-state reading (RawKind.threadState in RawRecord.swift).
#define HITCH_RAW_KIND_THREAD_STATE 20ull
/// A reading that was unavailable (the field reads back as nil).
#define HITCH_SCHED_NONE UINT64_MAX

/// Non-zero while readings are taken (a session is active and thread states are on).
extern int hitch_thread_states_flag;

/// Emits the calling thread's reading at a frame phase (ThreadStateReading.Phase raw value)
/// as two raw records stamped `ticks`. Opens the thread's schedstat file on its first reading.
void hitch_thread_state_emit(uint64_t ticks, uint64_t frame_id, uint32_t phase);

/// The calling thread has begun recording events in this session: with context-switch rings on,
/// it opens its ring now, so the switches of every recording thread (not only the frame threads')
/// are in the trace and a frame thread's wait for a CPU can be laid beside what the app's other
/// threads ran meanwhile. Once per thread and session; called by the recorder's slow path and by
/// `Trace.setCurrentThreadName` (not by the recorder's own writer thread). No-op outside a session.
void hitch_sched_join_thread(void);

static inline void hitch_thread_state(uint64_t ticks, uint64_t frame_id, uint32_t phase) {
    if (__builtin_expect(__atomic_load_n(&hitch_thread_states_flag, __ATOMIC_RELAXED) != 0, 1))
        hitch_thread_state_emit(ticks, frame_id, phase);
}

/// One reading of the calling thread (for tests and the bench): cumulative values, or
/// HITCH_SCHED_NONE where unavailable.
typedef struct hitch_thread_reading {
    uint64_t cpu_ns, runnable_wait_ns, voluntary_switches, involuntary_switches;
} hitch_thread_reading;
void hitch_thread_read(hitch_thread_reading *out);
/// The system calls one frame's readings cannot do without, and nothing else: the CPU clock, the
/// schedstat pread (the first reading after a wake-up), the CPU clock again (the second reading).
/// `hitch bench record` times it beside the readings as their floor on this machine.
void hitch_thread_read_floor(void);

/// Starts taking readings for a session: `thread_states` turns the per-frame reads on,
/// `switch_events` asks for perf context-switch rings. Returns the source actually used
/// (0 none, 1 procfs, 2 perf-context-switch) and writes why perf was refused (or why
/// reads are unavailable) into `reason`.
int hitch_sched_begin(int thread_states, int switch_events, char *reason, size_t reason_capacity);
/// Stops taking readings (the writer drains the rings once more, then calls hitch_sched_close).
void hitch_sched_end(void);

/// Replaces "/proc" and "/sys/fs/cgroup" (tests: a directory without them exercises the
/// missing-file paths). NULL restores the defaults. Call only while no session is active.
void hitch_sched_set_roots(const char *proc_root, const char *cgroup_root);

/// Machine-wide counters; a has_ flag of 0 means the file was missing or unreadable.
typedef struct hitch_machine_reading {
    int64_t steal_ns;
    int64_t cpu_pressure_some_us;
    int64_t cgroup_throttled_us;
    int32_t online_cpus;
    uint8_t has_steal, has_cpu_pressure, has_cgroup_throttled;
} hitch_machine_reading;
void hitch_machine_read(hitch_machine_reading *out);

/// One context switch of a recorded thread from its perf ring.
typedef struct hitch_sched_switch {
    uint64_t monotonic_ns;   // CLOCK_MONOTONIC (the rings' clock)
    int32_t tid;
    uint16_t cpu;
    uint8_t switched_in;     // 1 in, 0 out
    uint8_t preempted;       // out while runnable
} hitch_sched_switch;

/// Writer side: copies up to `capacity` switches from the threads' rings; `*lost` adds records
/// the kernel dropped because a ring was full. Returns how many were filled (call again while it
/// fills `capacity`). Rings of exited threads are closed once drained.
uint32_t hitch_sched_drain(hitch_sched_switch *out, uint32_t capacity, uint64_t *lost);
/// Writer side, after the last drain: closes every ring.
void hitch_sched_close(void);

/// Opens the calling thread's context-switch event (a perf software event with context_switch, user
/// space only, TID, time and CPU on CLOCK_MONOTONIC) and maps its ring (a header page and 16 data
/// pages) into `*map`, `*map_bytes`. Returns the event's fd, or -1 (nothing left open). The
/// recorder's rings are these; scripts/dev/schedstat-lag.sh measures against one.
int hitch_sched_switch_ring_open(void **map, size_t *map_bytes);

/// Used by sched_state.c: opens (once per thread and session) the calling thread's ring.
/// Returns a handle for hitch_sched_events_release, or -1.
int64_t hitch_sched_events_register_thread(void);
/// The thread is exiting: its ring is closed after the writer drained it.
void hitch_sched_events_release(int64_t handle);
/// How far a thread has counted the switches in its own ring (sched_events.c).
typedef struct hitch_switch_cursor {
    uint64_t head;           // the ring position counted up to
    uint64_t tail_floor;     // the ring's tail when last looked at: the tail has only moved on since
    int valid;
} hitch_switch_cursor;
/// The calling thread, about its own ring: the switch-outs appended since `cursor` (asleep ->
/// `voluntary`, preempted -> `involuntary`), `switched` = any record at all, and the cursor moved on.
/// Returns 1 when that count is exact, 0 when it cannot be (no cursor yet, a full ring may have
/// dropped records, a lost record; then resync), -1 when the ring is gone (session closing).
int hitch_sched_events_count(int64_t handle, hitch_switch_cursor *cursor, uint64_t *voluntary,
                             uint64_t *involuntary, int *switched);
/// The calling thread's getrusage switch counts and its ring position at one moment, into `cursor`.
/// Returns 1 (counts set; the cursor stays invalid if a switch kept landing in between), 0 if
/// getrusage failed, -1 when the ring is gone.
int hitch_sched_events_resync(int64_t handle, hitch_switch_cursor *cursor, uint64_t *voluntary, uint64_t *involuntary);
/// Probes whether a per-thread context-switch event opens here; 0 if so, else errno (reason set).
int hitch_sched_events_probe(char *reason, size_t reason_capacity);
/// Turns ring registration on or off for new registrations.
void hitch_sched_events_enable(int on);

#endif
