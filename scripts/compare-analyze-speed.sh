#!/usr/bin/env bash
# Analyzer speed and peak memory, old binary against new, side by side on one trace (issue 12:
# "hitch bench analyze no slower than before").
#
#   scripts/compare-analyze-speed.sh [--old-commit REV | --old-bin PATH] [--new-bin PATH] [--size 512MB] [--rounds 3]
#
# Without --old-bin, builds `hitch` (release) at --old-commit (default 87cb5b5, the last commit
# before the issue-12 restructure of the analyzer) in a git worktree under $TMPDIR, once (reused
# while that directory exists). Without --new-bin, builds this checkout's release `hitch`.
# Generates one synthetic trace with the new binary's `hitch bench analyze --keep` (the same
# SyntheticTrace generator), then runs `hitch analyze --format json` on it with the old and the new
# binary alternately, --rounds times, each under /usr/bin/time. Prints JSON: per run the CPU seconds
# (user + system), wall seconds and peak resident memory (max RSS), and per round the speed ratio
# new ÷ old = old CPU / new CPU (> 1: the new binary is faster), plus the load average before and after.
# Exit 0; 2 when something could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
old_commit=87cb5b5 old_bin="" new_bin="" size=512MB rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --old-commit) old_commit=$2; shift 2 ;;
        --old-bin) old_bin=$2; shift 2 ;;
        --new-bin) new_bin=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        -h|--help) sed -n 2,16p "$0"; exit 0 ;;
        *) echo "compare-analyze-speed: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x /usr/bin/time ] || { echo "compare-analyze-speed: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
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
trace="$tmp/hitch-compare-$$.fxt"
times="$tmp/hitch-compare-$$.times"
trap 'rm -f "$trace" "$times"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$new_bin" bench analyze --size "$size" --trace "$trace" --keep --format json > /dev/null || { echo "compare-analyze-speed: cannot generate the trace" >&2; exit 2; }
: > "$times"
for round in $(seq 1 "$rounds"); do
    for which in old new; do
        bin=$old_bin; [ "$which" = new ] && bin=$new_bin
        /usr/bin/time -f "$round $which %U %S %e %M" -a -o "$times" "$bin" analyze --format json "$trace" > /dev/null \
            || { echo "compare-analyze-speed: $which binary failed on the trace" >&2; exit 2; }
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$times" "$(stat -c %s "$trace")" "$load_before" "$load_after" "$old_bin" "$new_bin" <<'PY'
import json, sys
runs, ratios = [], []
by_round = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) != 6: continue
    rnd, which, user, system, wall, rss = parts
    run = {"round": int(rnd), "binary": which, "cpuSeconds": round(float(user) + float(system), 2),
           "wallSeconds": float(wall), "peakResidentMB": round(int(rss) / 1024, 1)}
    runs.append(run)
    by_round.setdefault(int(rnd), {})[which] = run
for rnd in sorted(by_round):
    r = by_round[rnd]
    if "old" in r and "new" in r and r["new"]["cpuSeconds"] > 0:
        ratios.append(round(r["old"]["cpuSeconds"] / r["new"]["cpuSeconds"], 3))
print(json.dumps({"traceBytes": int(sys.argv[2]), "oldBinary": sys.argv[5], "newBinary": sys.argv[6],
                  "loadAverageBefore": sys.argv[3], "loadAverageAfter": sys.argv[4],
                  "runs": runs, "speedRatioNewOverOld": ratios}, indent=2))
PY
