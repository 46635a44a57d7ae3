#!/usr/bin/env bash
# The recorder's concurrency tests under ThreadSanitizer (run by scripts/test.sh).
# Its own scratch path, so the sanitized build neither fights nor invalidates the normal one:
# the first run builds the package with -sanitize=thread (minutes), later runs are incremental.
#   HITCH_TSAN_SCRATCH   scratch path (default /tmp/hb-tsan)
source "$(dirname "$0")/support/sanitized-tests.sh"
scratch="${HITCH_TSAN_SCRATCH:-/tmp/hb-tsan}"
# Recorder round trips, thread exit, the exclusive session, the load test (8 threads recording flat
# out while the 1 kHz sampler's drain thread feeds the same trace), disk full, a thread exiting with
# an unflushed buffer and sampling signals in blocking syscalls: every place the hot path, the writer
# thread, the sampler's drain thread and thread exits meet. Left out: the 8 x 1M-event test (the
# load test covers 8 threads; it alone takes over 3 minutes under TSan) and the sampler's rate and
# symbol-share tests (timing figures that TSan's 5-15x slowdown invalidates, not concurrency).
filter='RecorderRoundTripTests|RecorderThreadTests/(exitingThread|disabledPath)|LoadTests|FaultTests/(diskFullOnDevFull|threadExiting|samplingSignals)'
# halt_on_error: the first race fails the run; second_deadlock_stack for readable lock reports.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
# One test at a time: under TSan's slowdown a test waiting for the one-recording-per-process
# session would time out behind the load test.
swift test --scratch-path "$scratch" --sanitize=thread --no-parallel --filter "$filter" > "$log" 2>&1 || status=$?
grep -E "WARNING: ThreadSanitizer|SUMMARY: ThreadSanitizer|✘|Test run with" "$log" | head -40 || true
sanitized_verdict check-tsan "ThreadSanitizer" ThreadSanitizer \
    "swift test --scratch-path $scratch --sanitize=thread --filter '$filter'" \
    "no data races in the recorder's concurrency tests"
