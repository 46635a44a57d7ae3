#!/usr/bin/env bash
# Records Examples/PlantedCauses RUNS times in each pipeline shape and prints the table shape x
# planted cause x recordings judged right (docs/METRICS.md "Hitch causes"; the expected causes are
# in scripts/support/planted_causes.py), with the load average before and after the batch.
#
# usage: scripts/dev/planted-causes-batch.sh RUNS [--noisy] [--shapes A,B,...] [--keep DIR]
#   --noisy     four busy loops run on the machine's CPUs for the whole batch (started and
#               stopped here, by their process ids)
#   --shapes    swap-chain-of-one,swap-chain-of-two,shared-cpu (the default: all three)
#   --keep DIR  keep the traces, manifests, analyses and verdicts in DIR
# env: HITCH (the analyzer judged; else the release build of this tree), HITCH_BEFORE (another
#   analyzer, e.g. one built from an older commit: each trace is judged by both, columns
#   "before" and "after"). Needs root (nice -15) and two CPUs.
# exit: 0 every judgement right, 1 some wrong, 2 bad usage or a recording that failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
runs=${1:-}
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then sed -n '2,15p' "$0" >&2; exit 2; fi
shift
noisy=0 shapes="swap-chain-of-one,swap-chain-of-two,shared-cpu" keep=""
while [ $# -gt 0 ]; do
    case $1 in
        --noisy) noisy=1; shift ;;
        --shapes) shapes=${2:?--shapes needs a list}; shift 2 ;;
        --keep) keep=${2:?--keep needs a folder}; shift 2 ;;
        *) echo "planted-causes-batch: unknown option $1" >&2; exit 2 ;;
    esac
done

hitch=$(bash scripts/release-hitch.sh)
app=$(bash scripts/support/planted-causes-app.sh)
mkdir -p .build
work=${keep:-$(mktemp -d "$PWD/.build/planted-causes.XXXXXX")}   # on disk: the planted read needs O_DIRECT, which tmpfs refuses
mkdir -p "$work"
busy=()
cleanup() {
    for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT
if [ $noisy = 1 ]; then
    for _ in 1 2 3 4; do (while :; do :; done) & busy+=($!); done
fi

analyzers=("after=$hitch")
[ -n "${HITCH_BEFORE:-}" ] && analyzers=("before=$HITCH_BEFORE" "${analyzers[@]}")
verdicts="$work/verdicts.jsonl"
: >"$verdicts"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
status=0
for i in $(seq 1 "$runs"); do
    for shape in ${shapes//,/ }; do
        run="$work/$shape-$i"
        if ! "$app" record --shape "$shape" --out "$run" >/dev/null; then
            echo "planted-causes-batch: recording $shape $i failed" >&2
            exit 2
        fi
        for analyzer in "${analyzers[@]}"; do
            label=${analyzer%%=*} binary=${analyzer#*=}
            "$binary" analyze "$run/trace.fxt" --format json >"$run/analysis-$label.json"
            python3 scripts/support/planted_causes.py compare "$run/manifest.json" "$run/analysis-$label.json" \
                --label "$label" >>"$verdicts" || status=1
        done
        [ -n "$keep" ] || rm -f "$run/trace.fxt"
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "PlantedCauses, $runs recordings per shape$([ $noisy = 1 ] && echo ", four busy loops running"); load average before $load_before, after $load_after"
python3 scripts/support/planted_causes.py table "$verdicts"
exit $status
