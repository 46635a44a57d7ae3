#!/usr/bin/env bash
# The whole test suite: set-up, a zero-warning build, the checks in scripts/check-*.sh (reports are
# fresh, hostile names stay text in a real browser, ThreadSanitizer, ASan/UBSan on the C sampler),
# then `swift test` last (its closing line is the suite's verdict). Every step runs even when an
# earlier one failed, so one run shows every failure; the exit code is non-zero if any failed.
# Every step runs under scripts/with-deadline.sh: a step that hangs is killed after its limit with a
# backtrace of every thread, so a hang costs minutes, not CI's 90. Skipped tests are counted apart.
set -uo pipefail
cd "$(dirname "$0")/.."
# Chromium for scripts/check-report-in-browser.sh, which fails rather than skips without it.
bash scripts/setup.sh chromium || exit 2

failed=()
step() { # name, time limit in seconds, command...
    local name=$1 limit=$2; shift 2
    local start=$SECONDS
    echo "== $name (limit $limit s)"
    if bash scripts/with-deadline.sh "$limit" "$@"; then echo "== $name: ok ($((SECONDS - start)) s)"; else echo "== $name: FAILED ($((SECONDS - start)) s)"; failed+=("$name"); fi
}

zero_warning_build() {
    local log
    log=$(mktemp)
    swift build --build-tests 2>&1 | tee "$log" | grep -E "error|warning:"
    local status=${PIPESTATUS[0]}
    if [ "$status" != 0 ] || grep -q "error:" "$log"; then echo "build failed (exit $status)"; return 1; fi
    local warnings
    warnings=$(grep -c "warning:" "$log")
    [ "$warnings" = 0 ] || { echo "build printed $warnings warnings"; return 1; }
}

export -f zero_warning_build
step "build (debug, with tests; zero warnings)" 1200 bash -c zero_warning_build
for check in scripts/check-*.sh; do
    step "$check" 1500 bash "$check"
done

test_log=$(mktemp)
trap 'rm -f "$test_log"' EXIT
swift_test() { swift test 2>&1 | tee "$test_log"; return "${PIPESTATUS[0]}"; }
export -f swift_test
export test_log
step "swift test" 1800 bash -c swift_test
# A skipped test is not a pass: name each one and count them apart from the passes.
# (`Test.cancel` is how a test that cannot run in this environment skips itself, with its reason.)
skipped=$(grep -E '^[^ ]+ Test .* (skipped|cancelled|was cancelled)' "$test_log" || true)
if [ -n "$skipped" ]; then
    echo "== skipped tests: $(grep -c . <<<"$skipped")"
    echo "$skipped"
else
    echo "== skipped tests: 0"
fi

if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
# The suite's verdict stays the last line: Swift Testing's own closing line.
grep -E 'Test run with [0-9]+ tests?' "$test_log" | tail -1
