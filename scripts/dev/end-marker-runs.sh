#!/usr/bin/env bash
# Measures the end-of-recording marker end to end (docs/METRICS.md "Evidence"): N recordings of the
# tuned feed killed by SIGKILL at a random moment, N that stop cleanly, and N that exit without
# stop() (hitch-record-probe frames … exit), each given to `hitch check`. Prints one JSON line per
# kind: how many check refused (exit 2) and accepted (exit 0 or 1). Needs `swift build --build-tests`.
#   bash scripts/dev/end-marker-runs.sh [N]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-20}
bin=$(swift build --show-bin-path)
hitch=$bin/hitch probe=$bin/hitch-record-probe
[ -x "$hitch" ] && [ -x "$probe" ] || { echo "end-marker-runs: build first (swift build --build-tests)" >&2; exit 2; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
echo '{"budgets": [{"metric": "hitches.120.hitchTimeRatioMsPerS", "max": 100000}]}' > "$dir/budgets.json"
tally() { # kind, then the check exit codes
    local kind=$1; shift; local refused=0 accepted=0
    for code in "$@"; do if [ "$code" = 2 ]; then refused=$((refused + 1)); else accepted=$((accepted + 1)); fi; done
    echo "{\"kind\": \"$kind\", \"runs\": $#, \"refusedByCheck\": $refused, \"acceptedByCheck\": $accepted, \"loadAverage\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
}
check() { "$hitch" check "$1" --budget "$dir/budgets.json" >/dev/null 2>&1 && echo 0 || echo $?; }
killed=() stopped=() exited=()
for i in $(seq "$n"); do
    "$hitch" record feed --variant tuned --refresh 120 --seconds 6 -o "$dir/killed-$i.fxt" >/dev/null 2>&1 &
    pid=$!
    sleep "$(python3 -c "import random; print(round(random.uniform(0.6, 5.5), 3))")"
    kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    killed+=("$(check "$dir/killed-$i.fxt")")
    "$hitch" record feed --variant tuned --refresh 120 --seconds 2 -o "$dir/stopped-$i.fxt" >/dev/null 2>&1
    stopped+=("$(check "$dir/stopped-$i.fxt")")
    "$probe" frames "$dir/exited-$i.fxt" exit >/dev/null
    exited+=("$(check "$dir/exited-$i.fxt")")
done
tally "killed by SIGKILL at a random moment" "${killed[@]}"
tally "stopped cleanly (stop())" "${stopped[@]}"
tally "exited without stop()" "${exited[@]}"
