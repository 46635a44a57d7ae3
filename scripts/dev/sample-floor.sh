#!/usr/bin/env bash
# What 1 kHz sampling costs a busy thread on this machine before any of Hitch's code runs: a bare
# perf task-clock event, the sampler's perf event (registers + stack copy, ring emptied, nothing
# unwound) and a timer signal with an empty handler, each against unsampled repetitions of the same
# loop, interleaved. The floor under `hitch bench sample`'s overhead (docs/RELIABILITY.md). JSON out.
#   scripts/dev/sample-floor.sh [ROUNDS] [RATE_HZ] [STACK_BYTES]     (defaults 15 1000 32768)
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=$(mktemp)
trap 'rm -f "$binary"' EXIT
cc -O2 -o "$binary" scripts/dev/support/sample-floor.c -lpthread
"$binary" "$@"
