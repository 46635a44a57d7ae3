#!/usr/bin/env bash
# The history store's tests against a real PostgreSQL server (Debian's `postgresql` package): a
# private cluster in a temporary directory, owned by an unprivileged user (postgres when run as
# root), listening on a Unix socket in that directory only (no TCP at all, so no network login of
# any kind), stopped and removed on exit whatever happened. No system service is started.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

. scripts/support/private-postgres.sh
trap private_postgres_stop EXIT
private_postgres_start || exit 1

export HITCH_TEST_POSTGRES_URL="$PRIVATE_POSTGRES_URL"
log=$(mktemp)
status=0
timeout 900 swift test --filter 'PostgresStoreTests' 2>&1 | tee "$log" | grep -E "✘|error:|passed after|failed after" || true
grep -q "Suite PostgresStoreTests passed" "$log" || status=1
# A skipped suite would pass silently: it must have run.
if grep -q "PostgresStoreTests skipped" "$log"; then echo "PostgreSQL store tests were skipped"; status=1; fi
rm -f "$log"
exit $status
