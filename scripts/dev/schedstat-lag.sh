#!/usr/bin/env bash
# How far schedstat's on-CPU field lags the thread's CPU clock right after a wake-up, and how much of
# that lag the thread's perf switch-in record cannot account for (docs/FORMAT.md "Thread states":
# why a reading takes its CPU time from the clock, not from the schedstat read). JSON out.
#   scripts/dev/schedstat-lag.sh [ROUNDS]     (default 2000, one 1 ms sleep each)
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=$(mktemp)
trap 'rm -f "$binary"' EXIT
# The recorder's own switch-ring setup (CHitchSupport), compiled in: the measurement and the recorder
# open the same event.
cc -O2 -Wall -Wextra -I Sources/CHitchSupport/include -o "$binary" scripts/dev/support/schedstat-lag.c \
    Sources/CHitchSupport/sched_events.c Sources/CHitchSupport/platform.c
"$binary" "$@"
