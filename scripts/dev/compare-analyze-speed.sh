#!/usr/bin/env bash
# Analyzer speed and peak memory, old binary against new, side by side on one trace: a change to
# the analyzer must leave `hitch bench analyze` no slower.
#
#   scripts/dev/compare-analyze-speed.sh [--old-commit REV | --old-bin PATH] [--new-bin PATH] [--size 512MB] [--rounds 3]
#
# Without --old-bin, builds `hitch` (release) at --old-commit (default 87cb5b5, the single-loop
# analyzer the pass dispatcher is measured against) in a git worktree under $TMPDIR, once (reused
# while that directory exists). Without --new-bin, builds this checkout's release `hitch`.
# Runs `hitch bench analyze --size SIZE --format json` with the old and the new binary alternately,
# --rounds times (each generates the same seeded SyntheticTrace, then measures the analyzer alone on
# the measuring thread's CPU time, and its peak resident memory). Prints JSON: per run the analyzer's
# events/s (CPU time and wall), CPU seconds and peak resident MB, and per round the speed ratio
# new ÷ old (> 1: the new binary is faster), plus the load average before and after. Peak memory is
# given whole (peakResidentMB) and above the process's resident size before the analysis
# (analysisResidentMB: the analyzer's own; the baseline differs with the binary's linked libraries).
# (`hitch analyze --format json` is not used: encoding a large trace's per-frame JSON would dominate.)
# Exit 0; 2 when something could not run.
set -euo pipefail
cd "$(dirname "$0")/../.."
old_commit=87cb5b5 old_bin="" new_bin="" size=512MB rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --old-commit) old_commit=$2; shift 2 ;;
        --old-bin) old_bin=$2; shift 2 ;;
        --new-bin) new_bin=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        -h|--help) sed -n 2,18p "$0"; exit 0 ;;
        *) echo "compare-analyze-speed: unknown option '$1'" >&2; exit 2 ;;
    esac
done
tmp=${TMPDIR:-/tmp}
if [ -z "$old_bin" ]; then
    old_tree="$tmp/hitch-old-$old_commit"
    [ -d "$old_tree" ] || git worktree add --detach "$old_tree" "$old_commit" >&2 || exit 2
    (cd "$old_tree" && swift build -c release --product hitch >&2) || { echo "compare-analyze-speed: cannot build $old_commit" >&2; exit 2; }
    old_bin="$old_tree/.build/release/hitch"
fi
if [ -z "$new_bin" ]; then
    swift build -c release --product hitch >&2 || { echo "compare-analyze-speed: cannot build this checkout" >&2; exit 2; }
    new_bin="$(swift build -c release --show-bin-path)/hitch"
fi
out="$tmp/hitch-compare-$$.jsonl"
trap 'rm -f "$out"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$out"
for round in $(seq 1 "$rounds"); do
    for which in old new; do
        bin=$old_bin; [ "$which" = new ] && bin=$new_bin
        json=$("$bin" bench analyze --size "$size" --format json) || { echo "compare-analyze-speed: $which binary failed" >&2; exit 2; }
        python3 -c 'import json,sys; d=json.loads(sys.argv[3]); d["round"]=int(sys.argv[1]); d["binary"]=sys.argv[2]; print(json.dumps(d))' \
            "$round" "$which" "$json" >> "$out"
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$out" "$load_before" "$load_after" "$old_bin" "$new_bin" <<'PY'
import json, sys
runs, by_round = [], {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    run = {"round": d["round"], "binary": d["binary"], "events": d["events"], "traceBytes": d["traceBytes"],
           "analyzeEventsPerSecond": d["analyzeEventsPerSecond"], "analyzeEventsPerSecondWall": d["analyzeEventsPerSecondWall"],
           "analyzeCPUSeconds": d["analyzeCPUSeconds"], "peakResidentMB": d["peakResidentMB"],
           "baselineResidentMB": d["baselineResidentMB"],
           "analysisResidentMB": round(d["peakResidentMB"] - d["baselineResidentMB"], 1)}
    runs.append(run)
    by_round.setdefault(d["round"], {})[d["binary"]] = run
ratios = [round(r["new"]["analyzeEventsPerSecond"] / r["old"]["analyzeEventsPerSecond"], 3)
          for _, r in sorted(by_round.items()) if "old" in r and "new" in r and r["old"]["analyzeEventsPerSecond"] > 0]
peaks = {which: max(r["peakResidentMB"] for r in runs if r["binary"] == which) for which in ("old", "new")}
own = {which: max(r["analysisResidentMB"] for r in runs if r["binary"] == which) for which in ("old", "new")}
print(json.dumps({"oldBinary": sys.argv[4], "newBinary": sys.argv[5], "loadAverageBefore": sys.argv[2],
                  "loadAverageAfter": sys.argv[3], "runs": runs, "speedRatioNewOverOld": ratios,
                  "peakResidentMB": peaks, "analysisResidentMB": own}, indent=2))
PY
