#!/usr/bin/env bash
# How far schedstat's on-CPU field lags the thread's CPU clock right after a wake-up, and how much of
# that lag the thread's perf switch-in record cannot account for (docs/FORMAT.md "Thread states":
# why a reading takes its CPU time from the clock, not from the schedstat read). JSON out.
#   scripts/schedstat-lag.sh [ROUNDS]     (default 2000, one 1 ms sleep each)
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(mktemp)
trap 'rm -f "$binary"' EXIT
cc -O2 -Wall -Wextra -o "$binary" scripts/support/schedstat-lag.c
"$binary" "$@"
