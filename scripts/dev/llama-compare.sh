#!/usr/bin/env bash
# Decode speed against llama.cpp on the same GGUF file, interleaved in one run, printed as JSON.
#   scripts/dev/llama-compare.sh [--rounds N] [--tokens N] [--threads N] model [NAME...]
#       Models of scripts/fetch-model.sh (default smollm2, the Q4_1 file; also gemma3,
#       smollm2-q4_k_m, smollm2-q6_k): `llama-bench -m FILE -p 0 -n TOKENS -t THREADS` against
#       `hitch bench decode --model FILE --tokens TOKENS --threads THREADS`.
#   scripts/dev/llama-compare.sh [...] formats [f32,f16,q8_0,q4_0,q4_1]
#       The bundled synthetic shape (0.40 B, random weights of seed 1) written as GGUF in each type
#       (any ggml type hitch reads: q4_K, q5_K, q6_K, q5_0, q5_1, ...; `hitch bench decode
#       --write-gguf`, cached in $HITCH_MODEL_CACHE/synthetic/), both runtimes on each file. Each round
#       also runs `hitch bench decode --model FILE --tokens 8` with its bandwidth probes, for the
#       format's share of the STREAM triad bandwidth measured in the same run (`utilization`: bytes per
#       token over step time against the triad passes around each step).
# Each round runs llama.cpp then hitch on every file (defaults: 3 rounds, 128 tokens, 2 threads). A
# round's ratio is hitch's mean tokens/s (tokens over summed step times, as llama-bench's avg_ts)
# over llama.cpp's; the JSON gives every round, the median ratio, and the load averages seen.
# hitch runs with --speed-only: steps back to back as llama-bench runs them (its bandwidth passes
# between steps would evict the model from the cache). llama.cpp comes from
# scripts/dev/llama-reference.sh --build (built once, cached), or LLAMA_BIN=DIR names another build's
# bin directory (an AVX2-only build, say). HITCH=path/to/hitch to use a built binary; otherwise
# scripts/release-hitch.sh builds the release one. HITCH_KERNELS_ISA (avx2, avx512, avx512vnni)
# caps hitch's kernels; the JSON gives the instruction set each side ran.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=3 tokens=128 threads=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    model|formats) break ;;
    *) echo "llama-compare: unknown argument '$1' (usage: see the header of $0)" >&2; exit 2 ;;
  esac
done
mode=${1:-}
[[ "$mode" == model || "$mode" == formats ]] || { echo "llama-compare: say 'model' or 'formats'" >&2; exit 2; }
cache="${HITCH_MODEL_CACHE:-$HOME/.cache/hitch}"
if [[ -n "${LLAMA_BIN:-}" ]]; then
  bin="$LLAMA_BIN"
  [[ -x "$bin/llama-bench" ]] || { echo "llama-compare: no llama-bench in LLAMA_BIN=$bin" >&2; exit 2; }
else
  bin="$(bash scripts/dev/llama-reference.sh --build)" || { echo "llama-compare: no llama.cpp build" >&2; exit 2; }
fi
HITCH=$(bash scripts/release-hitch.sh)

files=()
if [[ "$mode" == model ]]; then
  shift
  for name in "${@:-smollm2}"; do
    files+=("$(bash scripts/fetch-model.sh "$name")") || { echo "llama-compare: no model $name" >&2; exit 2; }
  done
else
  mkdir -p "$cache/synthetic"
  IFS=, read -r -a types <<<"${2:-f32,f16,q8_0,q4_0,q4_1}"
  for type in "${types[@]}"; do
    file="$cache/synthetic/bundled-seed1-$type.gguf"
    if [[ ! -s "$file" ]]; then
      echo "llama-compare: writing $file" >&2
      "$HITCH" bench decode --write-gguf "$file.tmp" --weights "$type" --seed 1 && mv "$file.tmp" "$file"
    fi
    files+=("$file")
  done
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for ((round = 0; round < rounds; round++)); do
  for index in "${!files[@]}"; do
    file="${files[$index]}"
    echo "llama-compare: round $((round + 1))/$rounds: $(basename "$file")" >&2
    cut -d' ' -f1 /proc/loadavg >"$out/load-$round-$index"
    # -r 1: one timed repetition per round (after llama-bench's own warm-up run).
    # Its libraries beside it: a build moved from where it was built keeps a stale rpath.
    LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin/llama-bench" -m "$file" -p 0 -n "$tokens" -t "$threads" -r 1 -o json >"$out/llama-$round-$index.json" 2>"$out/llama-$round-$index.log" \
      || { echo "llama-compare: llama-bench failed on $file: $(tail -n 3 "$out/llama-$round-$index.log")" >&2; exit 1; }
    "$HITCH" bench decode --model "$file" --tokens "$tokens" --threads "$threads" --speed-only --format json >"$out/hitch-$round-$index.json" 2>"$out/hitch-$round-$index.log" \
      || { echo "llama-compare: hitch bench decode failed on $file: $(tail -n 3 "$out/hitch-$round-$index.log")" >&2; exit 1; }
    if [[ "$mode" == formats ]]; then
      "$HITCH" bench decode --model "$file" --tokens 8 --threads "$threads" --format json >"$out/share-$round-$index.json" 2>/dev/null \
        || { echo "llama-compare: hitch bench decode (bandwidth) failed on $file" >&2; exit 1; }
    fi
  done
done

python3 - "$out" "$rounds" "$tokens" "$threads" "${files[@]}" <<'PY'
import json, os, statistics, sys
out, rounds, tokens, threads, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
results = []
for index, path in enumerate(files):
    per_round = []
    for r in range(rounds):
        llama = json.load(open(f"{out}/llama-{r}-{index}.json"))[0]
        hitch = json.load(open(f"{out}/hitch-{r}-{index}.json"))["results"][0]
        load = float(open(f"{out}/load-{r}-{index}").read())
        share = {}
        if os.path.exists(f"{out}/share-{r}-{index}.json"):
            probe = json.load(open(f"{out}/share-{r}-{index}.json"))["results"][0]
            share = {"triadShare": round(probe["utilization"], 3), "bandwidthGBps": round(probe["bandwidthGBps"], 2),
                     "triadGBps": round(probe["triadGBps"], 2)}
        per_round.append({**share, "llamaTokensPerSecond": round(llama["avg_ts"], 2),
                          "hitchTokensPerSecond": round(hitch["meanTokensPerSecond"], 2),
                          "hitchMedianStepTokensPerSecond": round(hitch["tokensPerSecond"], 2),
                          "ratio": round(hitch["meanTokensPerSecond"] / llama["avg_ts"], 3), "loadAverage": load})
    llama_type = json.load(open(f"{out}/llama-0-{index}.json"))[0].get("model_type", "")
    results.append({"file": os.path.basename(path), "llamaModelType": llama_type,
                    "weights": json.load(open(f"{out}/hitch-0-{index}.json"))["results"][0]["weights"],
                    "medianRatio": round(statistics.median(x["ratio"] for x in per_round), 3),
                    **({"medianTriadShare": round(statistics.median(x["triadShare"] for x in per_round), 3)}
                       if all("triadShare" in x for x in per_round) else {}),
                    "llamaTokensPerSecond": round(statistics.median(x["llamaTokensPerSecond"] for x in per_round), 2),
                    "hitchTokensPerSecond": round(statistics.median(x["hitchTokensPerSecond"] for x in per_round), 2),
                    "rounds": per_round})
llama0 = json.load(open(f"{out}/llama-0-0.json"))[0]
print(json.dumps({"threads": threads, "tokens": tokens, "rounds": rounds,
                  "llamaBuild": llama0.get("build_commit", ""), "cpu": llama0.get("cpu_info", ""),
                  "llamaBackends": llama0.get("backends", ""),
                  "hitchKernels": json.load(open(f"{out}/hitch-0-0.json"))["quantizedKernels"],
                  "loadAverageNow": float(open("/proc/loadavg").read().split()[0]),
                  "results": results}, indent=1))
PY
