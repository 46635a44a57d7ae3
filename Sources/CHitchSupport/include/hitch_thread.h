#ifndef HITCH_THREAD_H
#define HITCH_THREAD_H

/// Makes the calling thread background work: Linux SCHED_IDLE, so any ordinary thread that wakes
/// (the UI's main and render threads at each vsync) preempts it at once, as a device's background
/// QoS yields to user-interactive work. Nice 19 alone still lets a busy thread finish its slice
/// first. Where SCHED_IDLE is refused, falls back to nice 19. Returns 1 for SCHED_IDLE, 0 for the
/// fallback, -1 if neither could be set.
int hitch_thread_make_background(void);

#endif
