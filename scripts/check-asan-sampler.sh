#!/usr/bin/env bash
# The C sampler (and the recorder's C hot path) under AddressSanitizer + UndefinedBehaviorSanitizer,
# driven by the Swift tests that exercise them (run by scripts/test.sh). Own scratch path:
# the first run builds the package sanitized (minutes), later runs are incremental.
# The dlopen/dlclose storm (every thread sampled at 1 kHz, some inside the loader) runs
# HITCH_SAMPLER_STORM_ITERATIONS sessions in a row (default 200); the test's own watchdog aborts
# with every thread's state if one hangs, and the test run sits under with-deadline.sh, which prints
# gdb backtraces of every thread and fails the check if the whole run passes its limit.
#   HITCH_ASAN_SCRATCH              scratch path (default /tmp/hb-asan)
#   HITCH_SAMPLER_STORM_ITERATIONS  storm sessions (default 200)
#   HITCH_ASAN_TEST_SECONDS         limit for the test run after the build (default 600)
source "$(dirname "$0")/support/sanitized-tests.sh"
scratch="${HITCH_ASAN_SCRATCH:-/tmp/hb-asan}"
# Sampler sessions (1 kHz on a busy chain, a thread blocked in read, dlopen during sampling),
# samples through a real trace, the sampling fault test and the load test (8 threads + sampler).
filter='SamplerTests|SamplingTraceTests|BacktraceTests|SymbolicatorTests|FaultTests/samplingSignals|LoadTests'
# Leak checking is off: the sampler's per-thread slots are allocated once and never freed by design
# (a late signal must never touch freed memory). UBSan findings abort the run.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export HITCH_SAMPLER_STORM_ITERATIONS="${HITCH_SAMPLER_STORM_ITERATIONS:-200}"
# Swift has no UBSan on Linux: -fsanitize=undefined goes to clang for the C targets only (the ASan
# runtime carries the UBSan handlers); -fno-sanitize-recover makes each finding fatal.
sanitize=(--scratch-path "$scratch" --sanitize=address -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined)
# Build first (minutes on a cold scratch path), so the deadline below measures the tests alone.
swift build --build-tests "${sanitize[@]}" > "$log" 2>&1 || { tail -30 "$log"; echo "check-asan-sampler: build failed"; exit 1; }
bash scripts/with-deadline.sh "${HITCH_ASAN_TEST_SECONDS:-600}" \
    swift test --skip-build "${sanitize[@]}" --filter "$filter" > "$log" 2>&1 || status=$?
grep -E "ERROR: AddressSanitizer|runtime error:|SUMMARY:|✘|Test run with|sampler storm:|watchdog:" "$log" | head -40 || true
if [ "$status" = 124 ]; then
    grep -A400 -E "^---- process" "$log" | head -400 || true
    echo "check-asan-sampler: the tests passed their time limit (backtraces above)"
    exit 1
fi
sanitized_verdict check-asan-sampler "ERROR: AddressSanitizer|runtime error:" ASan/UBSan \
    "swift test --scratch-path $scratch --sanitize=address -Xcc -fsanitize=undefined --filter '$filter'" \
    "no ASan or UBSan findings in the sampler and recorder C code"
