#!/usr/bin/env bash
# The main job: set up, build the release `hitch`, and run `hitch demo` (records the bundled
# workloads, analyzes them at 60 and 120 Hz, writes HTML reports to Reports/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product hitch
# The real model for the LLM recording (scripts/fetch-model.sh); without it the synthetic model runs.
if HITCH_MODEL="$(bash scripts/fetch-model.sh 2>/dev/null)"; then export HITCH_MODEL
else echo "demo: could not fetch the SmolLM2 model; the LLM demo uses the synthetic model" >&2; fi
exec .build/release/hitch demo "$@"
