#!/usr/bin/env bash
# The whole test suite: set-up, a zero-warning build, the checks in scripts/check-*.sh (reports are
# fresh, hostile names stay text in a real browser, ThreadSanitizer, ASan/UBSan on the C sampler),
# then `swift test` last (its closing line is the suite's verdict). Every step runs even when an
# earlier one failed, so one run shows every failure; the exit code is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
# Chromium for scripts/check-report-in-browser.sh, which fails rather than skips without it.
bash scripts/setup.sh chromium || exit 2

failed=()
step() { # name, command...
    local name=$1; shift
    local start=$SECONDS
    echo "== $name"
    if "$@"; then echo "== $name: ok ($((SECONDS - start)) s)"; else echo "== $name: FAILED ($((SECONDS - start)) s)"; failed+=("$name"); fi
}

zero_warning_build() {
    local log
    log=$(mktemp)
    swift build --build-tests 2>&1 | tee "$log" | grep -E "error|warning:"
    if grep -q "error:" "$log"; then echo "build failed"; return 1; fi
    local warnings
    warnings=$(grep -c "warning:" "$log")
    [ "$warnings" = 0 ] || { echo "build printed $warnings warnings"; return 1; }
}

step "build (debug, with tests; zero warnings)" zero_warning_build
for check in scripts/check-*.sh; do
    step "$check" bash "$check"
done
swift_test() {
    local log
    log=$(mktemp)
    swift test 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    # A skipped test did not run: count skips apart from passes, with their reasons.
    local skipped
    skipped=$(grep -cE "Test .* (skipped|was cancelled)" "$log" || true)
    echo "swift test: $skipped skipped (not run)"
    grep -E "Test .* (skipped|was cancelled)" "$log" | sed 's/^/  /' || true
    return "$status"
}
step "swift test" swift_test

if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
