#!/usr/bin/env bash
# The main job: set up, build the release `hitch`, and run `hitch demo` (records the bundled
# workloads, analyzes them at 60 and 120 Hz, writes HTML reports to Reports/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product hitch
exec .build/release/hitch demo "$@"
