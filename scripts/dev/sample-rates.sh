#!/usr/bin/env bash
# The sampler's overhead beside the machine's floor at each candidate rate, RUNS runs each:
# `hitch bench sample` (both sources, each with its floor, interleaved rounds) at every rate, then
# one JSON table: per rate and source, the median overhead, the floor, ours above the floor (each
# run's median with its 95% interval), the drain thread's share, and samples per hitching frame.
# The figures behind SamplerConfiguration.defaultRateHz (docs/RELIABILITY.md, "Sampling overhead").
#   scripts/dev/sample-rates.sh [RATES] [RUNS] [SECONDS]     (defaults "1000 500 250" 3 15)
# HITCH_BIN picks the binary (default: a release build of this checkout).
set -euo pipefail
cd "$(dirname "$0")/../.."
rates=${1:-"1000 500 250"}
runs=${2:-3}
seconds=${3:-15}
if [[ -z "${HITCH_BIN:-}" ]]; then
    swift build -c release --product hitch >/dev/null
    HITCH_BIN=.build/release/hitch
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Rates interleaved run by run, so drift in the machine's load falls on every rate.
for run in $(seq 1 "$runs"); do
    for rate in $rates; do
        "$HITCH_BIN" bench sample --rate "$rate" --seconds "$seconds" --format json > "$out/$rate-$run.json"
    done
done
python3 - "$out" "$runs" $rates <<'PY'
import json, sys, os
out, runs, rates = sys.argv[1], int(sys.argv[2]), [int(r) for r in sys.argv[3:]]
frame_ms = 1000 / 120
table = []
for rate in rates:
    row = {"rateHz": rate, "samplesPerHitchingFrame120Hz": {"oneFrameLate16_7ms": round(rate * 2 * frame_ms / 1000, 1),
                                                          "frameBudget8_3ms": round(rate * frame_ms / 1000, 1)},
           "runs": []}
    for run in range(1, runs + 1):
        d = json.load(open(os.path.join(out, f"{rate}-{run}.json")))
        entry = {"loadAverage": d["loadAverageBefore"], "sources": {}}
        for s in d["sources"]:
            r = lambda k: None if s.get(k) is None else round(s[k], 2)
            entry["sources"][s["sampleSource"]] = {
                "overheadPercent": [r("overheadPercent"), r("overheadPercentCI95Low"), r("overheadPercentCI95High")],
                "floorPercent": [r("floorOverheadPercent"), r("floorOverheadPercentCI95Low"), r("floorOverheadPercentCI95High")],
                "aboveFloorPercent": [r("aboveFloorPercent"), r("aboveFloorPercentCI95Low"), r("aboveFloorPercentCI95High")],
                "drainCPUPercent": r("drainCPUPercent"), "drainWakeupsPerSecond": r("drainWakeupsPerSecond"),
                "samplesTakenOfExpected": round(s["samplesTaken"] / max(s["samplesExpected"], 1), 3),
                "hotFunctionShare": round(s["hotFunctionShare"], 3), "offCopyEndShare": s["offCopyEndShare"],
                "unwindMemoHitShare": round(s["unwindMemoHitShare"], 3)}
        row["runs"].append(entry)
    table.append(row)
print(json.dumps(table, indent=1))
PY
