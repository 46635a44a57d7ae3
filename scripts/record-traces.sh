#!/usr/bin/env bash
# Regenerates the bundled recordings in Traces/ and their reports in Reports/.
# Recording runs the workloads in real time on this machine, so figures vary run to run;
# the reports are a pure function of the traces (scripts/check-reports-fresh.sh checks that).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product hitch
hitch=.build/release/hitch
$hitch record feed --variant naive --refresh 120 -o Traces/feed-naive-120hz.fxt
$hitch record feed --variant tuned --refresh 120 -o Traces/feed-tuned-120hz.fxt
$hitch record llm --weights q4_0 --tokens 48 -o Traces/llm-q4_0-120hz.fxt
bash scripts/render-reports.sh "$hitch" Reports
