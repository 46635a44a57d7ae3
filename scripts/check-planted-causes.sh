#!/usr/bin/env bash
# Hitch causes judged on an app written apart from the analyzer (docs/METRICS.md "Hitch causes").
# Examples/PlantedCauses links HitchTrace as a user's app does (a path dependency), runs a 60 Hz
# display-link loop in three pipeline shapes (a swap chain of one, a swap chain of two, a render
# thread sharing the main thread's CPU), and plants seven causes in known frames: main-thread work,
# a lock a sleeping helper holds, a sleep, another process at nice -15 on the main thread's CPU, one
# of its own threads at nice -15 there, a long render (the frames after it queue behind it), and an
# O_DIRECT file read. scripts/support/planted_causes.py compares what it planted with
# `hitch analyze --format json`.
#
# RUNS recordings per shape (default 3): every planted cause must be judged right in at least
# RUNS-1 of them, in every shape (scripts/dev/planted-causes-batch.sh runs more, and prints the table).
# Needs two CPUs and root (or CAP_SYS_NICE) for nice -15; without them the check says why and skips.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
if [ "$(nproc)" -lt 2 ]; then echo "check-planted-causes: skipped: the pipelines need two CPUs ($(nproc) online)"; exit 0; fi
if ! nice -n -15 true 2>/dev/null; then echo "check-planted-causes: skipped: nice -15 is not permitted here (needs root or CAP_SYS_NICE)"; exit 0; fi
hitch=$(bash scripts/release-hitch.sh)
app=$(bash scripts/support/planted-causes-app.sh)
mkdir -p .build
work=$(mktemp -d "$PWD/.build/planted-causes.XXXXXX")   # on disk: the planted read needs O_DIRECT, which tmpfs refuses
trap 'rm -rf "$work"' EXIT
echo "check-planted-causes: load average before: $(cat /proc/loadavg)"
for i in $(seq 1 "$runs"); do
    for shape in swap-chain-of-one swap-chain-of-two shared-cpu; do
        run="$work/$shape-$i"
        "$app" record --shape "$shape" --out "$run" >/dev/null
        "$hitch" analyze "$run/trace.fxt" --format json >"$run/analysis.json"
        python3 scripts/support/planted_causes.py compare "$run/manifest.json" "$run/analysis.json" --label "run $i" \
            >>"$work/verdicts.jsonl" || true
        rm -f "$run/trace.fxt"
    done
done
echo "check-planted-causes: load average after: $(cat /proc/loadavg)"
python3 scripts/support/planted_causes.py table "$work/verdicts.jsonl"
python3 - "$work/verdicts.jsonl" "$runs" <<'PY'
import json, sys
from collections import defaultdict
right, wrong = defaultdict(int), defaultdict(list)
for line in open(sys.argv[1]):
    verdict = json.loads(line)
    key = (verdict["shape"], verdict["kind"])
    if verdict["right"]:
        right[key] += 1
    else:
        wrong[key].append(f'{verdict["label"]}, frame {verdict["frame"]}: {verdict.get("why")}')
runs = int(sys.argv[2])
failed = [key for key in set(right) | set(wrong) if right[key] < runs - 1]
for key in sorted(wrong):
    for why in wrong[key]:
        print(f"check-planted-causes: {key[0]} {key[1]}: {why}")
if failed:
    print(f"check-planted-causes: judged wrong in more than one of {runs} recordings: " + ", ".join(f"{s} {k}" for s, k in sorted(failed)))
    sys.exit(1)
print(f"check-planted-causes: every planted cause judged right in at least {runs - 1} of {runs} recordings, in every shape")
PY
