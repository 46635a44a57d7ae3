#!/usr/bin/env bash
# CI check: Reports/ holds the reports of the traces in Traces/. Regenerates them into a temporary
# directory with `hitch demo --reports-only` (the same code `hitch demo` writes them with) and compares
# byte for byte. Exit 0 = up to date, 1 = stale or missing (regenerate: hitch demo --reports-only).
set -euo pipefail
cd "$(dirname "$0")/.."
HITCH=$(bash scripts/release-hitch.sh)
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
"$HITCH" demo --reports-only --traces Traces --reports "$fresh" >/dev/null
stale=0
for report in "$fresh"/*.html; do
  name=$(basename "$report")
  if [ ! -f "Reports/$name" ]; then
    echo "missing: Reports/$name" >&2; stale=1
  elif ! cmp -s "$report" "Reports/$name"; then
    echo "stale: Reports/$name differs from a fresh render of Traces/" >&2; stale=1
  fi
done
for report in Reports/*.html; do
  [ -e "$report" ] || continue
  [ -f "$fresh/$(basename "$report")" ] || { echo "orphan: $report has no trace in Traces/" >&2; stale=1; }
done
if [ "$stale" -ne 0 ]; then
  echo "check-reports-fresh: Reports/ is out of date; run: hitch demo --reports-only" >&2
  exit 1
fi
echo "check-reports-fresh: $(ls "$fresh"/*.html | wc -l) reports match Traces/" >&2
