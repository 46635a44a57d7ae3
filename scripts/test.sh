#!/usr/bin/env bash
# The whole test suite: set-up, a zero-warning build, the checks that need a release binary,
# then `swift test` last (its closing line is the suite's verdict).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== build (debug, with tests): zero warnings required"
log=$(mktemp)
swift build --build-tests 2>&1 | tee "$log" | grep -E "error|warning:" || true
if grep -q "error:" "$log"; then echo "build failed"; exit 1; fi
warnings=$(grep -c "warning:" "$log" || true)
if [ "$warnings" != 0 ]; then echo "build printed $warnings warnings"; exit 1; fi

for check in scripts/check-*.sh; do
    [ -e "$check" ] || continue
    echo "== $check"
    bash "$check"
done

echo "== swift test"
swift test
