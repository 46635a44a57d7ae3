#!/usr/bin/env bash
# Prints the path of the release `hitch` the checks run: $HITCH when set, else builds
# `.build/release/hitch` (incremental; build output goes to stderr). Use: HITCH=$(bash scripts/release-hitch.sh)
set -euo pipefail
if [ -n "${HITCH:-}" ]; then echo "$HITCH"; exit 0; fi
cd "$(dirname "$0")/.."
swift build -c release --product hitch >&2
echo "$PWD/.build/release/hitch"
