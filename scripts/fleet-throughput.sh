#!/usr/bin/env bash
# The fleet run's throughput (docs/FLEET.md "Throughput"): traces per second per worker, and the
# scaling from 1 to 2 workers, measured side by side in one run. Writes N seeded traces (hitch bench
# traces), then runs scripts/fleet.py on a local cluster of 1 worker and of 2, interleaved for R rounds
# (1, 2, 1, 2, …), and prints one JSON line per run (map-phase seconds, traces/s, traces/s per worker,
# the load average before and after), then the same traces summarized by one plain hitch process and by
# two (the machine's own 2-over-1 ceiling in that round, without Dask), and a last line with the median
# speedups. The map phase (hitch summarize of every trace on the workers) is what is timed; the
# cluster's start is not. Each round also times pure register work, one process against two at once
# (scripts/support/core-pair-probe.c): independent integer operations, which two hardware threads of
# one physical core must share, and a dependent multiply chain, which they need not; where the first
# gains far less from two processes than the second, the two CPUs share one core's execution units,
# and no analyzer-bound job gains more than the first does.
#   scripts/fleet-throughput.sh [--traces N] [--frames F] [--rounds R] [--hitch PATH]
# Defaults: 100 traces of 30,000 frames (250 s at 120 Hz, ~30 MB each: the analyzer, not the process start, is
# the cost), 3 rounds, the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
traces=100 frames=30000 rounds=3 hitch=""
while [ $# -gt 0 ]; do
    case "$1" in
        --traces) traces=$2; shift 2 ;;
        --frames) frames=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --hitch) hitch=$2; shift 2 ;;
        *) echo "usage: scripts/fleet-throughput.sh [--traces N] [--frames F] [--rounds R] [--hitch PATH]" >&2; exit 2 ;;
    esac
done
bash scripts/setup.sh fleet
python="${HITCH_FLEET_VENV:-$HOME/.cache/hitch/fleet-venv}/bin/python"
if [ -z "$hitch" ]; then
    swift build -c release --product hitch >/dev/null 2>&1 || { echo "fleet-throughput: cannot build hitch (release)" >&2; exit 2; }
    hitch="$(swift build -c release --show-bin-path)/hitch"
fi
work=$(mktemp -d /tmp/hitch-fleet-throughput.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$hitch" bench traces --count "$traces" --frames "$frames" -o "$work/traces" >/dev/null
# The machine's own ceiling in the same round: the same traces summarized by one plain hitch process,
# and by two at once (half each), without Dask. On a shared machine the two cores may not be free:
# the job's speedup is read against this one.
plain() { # seconds for `hitch summarize` of the traces in N processes at once
    local n=$1 start end
    start=$(date +%s.%N)
    for part in $(seq 0 $((n - 1))); do
        ls "$work"/traces/*.fxt | awk -v n="$n" -v p="$part" 'NR % n == p' | xargs "$hitch" summarize -o "$work/plain-$part/" >/dev/null &
    done
    wait
    end=$(date +%s.%N)
    "$python" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$start" "$end"
}
cc -O2 -o "$work/core-pair-probe" scripts/support/core-pair-probe.c || { echo "fleet-throughput: cannot compile the core probe (needs cc)" >&2; exit 2; }
probe_pair() { # one process of register work, then two at once: prints the 2-over-1 speedup
    local kind=$1 a b c
    a=$(date +%s.%N); "$work/core-pair-probe" "$kind" 1000000000
    b=$(date +%s.%N); "$work/core-pair-probe" "$kind" 1000000000 & "$work/core-pair-probe" "$kind" 1000000000; wait
    c=$(date +%s.%N)
    "$python" -c "import sys; a, b, c = map(float, sys.argv[1:]); print(round(2 * (b - a) / (c - b), 3))" "$a" "$b" "$c"
}
speedups=() ceilings=() independents=() chains=()
for round in $(seq 1 "$rounds"); do
    rate=()
    for workers in 1 2; do
        "$python" scripts/fleet.py --local-workers "$workers" --hitch "$hitch" --traces "$work/traces/*.fxt" --out "$work/out" \
            --worst-reports 0 >/dev/null 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
        "$python" -c "
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({'round': int(sys.argv[2]), 'run': 'fleet job', 'workers': r['workers'], 'traces': r['traces'], 'mapSeconds': r['mapSeconds'],
                  'tracesPerSecond': r['tracesPerSecond'], 'tracesPerSecondPerWorker': r['tracesPerSecondPerWorker'],
                  'loadAverageBefore': r['loadAverages']['start'][0], 'loadAverageAfter': r['loadAverages']['mapped'][0]}))
" "$work/out/run.json" "$round"
        rate+=("$("$python" -c "import json, sys; print(json.load(open(sys.argv[1]))['tracesPerSecond'])" "$work/out/run.json")")
    done
    speedups+=("$("$python" -c "import sys; print(round(float(sys.argv[2]) / float(sys.argv[1]), 3))" "${rate[0]}" "${rate[1]}")")
    load=$(cut -d' ' -f1 /proc/loadavg)
    one=$(plain 1) two=$(plain 2)
    echo "{\"round\": $round, \"run\": \"plain hitch summarize\", \"oneProcessSeconds\": $one, \"twoProcessesSeconds\": $two, \"loadAverageBefore\": $load, \"loadAverageAfter\": $(cut -d' ' -f1 /proc/loadavg)}"
    ceilings+=("$("$python" -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 3))" "$one" "$two")")
    independent=$(probe_pair independent) chain=$(probe_pair chain)
    echo "{\"round\": $round, \"run\": \"register work\", \"independentSpeedupTwoOverOne\": $independent, \"chainSpeedupTwoOverOne\": $chain, \"loadAverageAfter\": $(cut -d' ' -f1 /proc/loadavg)}"
    independents+=("$independent") chains+=("$chain")
done
"$python" -c "
import json, statistics, sys
n = len(sys.argv) // 4
s, c, i, k = ([float(x) for x in sys.argv[1 + j * n:1 + (j + 1) * n]] for j in range(4))
print(json.dumps({'speedupTwoOverOneWorker': s, 'median': statistics.median(s), 'target': 1.7,
                  'machineCeilingTwoOverOneProcess': c, 'ceilingMedian': statistics.median(c),
                  'registerWorkIndependent': i, 'independentMedian': statistics.median(i),
                  'registerWorkChain': k, 'chainMedian': statistics.median(k)}))" "${speedups[@]}" "${ceilings[@]}" "${independents[@]}" "${chains[@]}"
