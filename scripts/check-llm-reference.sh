#!/usr/bin/env bash
# Our decoder against llama.cpp on real models (run by scripts/test.sh): for every fixture
# Tests/Fixtures/llm/MODEL-reference.json (written by scripts/llama-reference.sh MODEL; llama.cpp is
# never built here), the release `hitch generate --format json` on MODEL (scripts/fetch-model.sh MODEL)
# must give llama.cpp's prompt token ids exactly, and each greedy 32-token continuation must equal
# llama.cpp's or first depart from it at a near tie: our top-2 logit gap there under 0.5 (both
# runtimes' gaps are printed).
#   smollm2 (the Q4_1 file): all prompts but one equal, the one departing at token 16 or later.
#   gemma3, smollm2-q4_k_m, smollm2-q6_k: at least 3 of the 5 equal; or, where llama.cpp agrees
#   with itself on fewer (its continuation with the prompt decoded token by token against the batched
#   one, both in the fixture), at least as many as it does: its own arithmetic moves those ties.
# A model that cannot be fetched is skipped with the reason (exit 0 when all are skipped or pass):
# the requantized SmolLM2 files need llama-quantize from scripts/llama-reference.sh --build's cache.
#   scripts/check-llm-reference.sh [MODEL...]   (default: every fixture)
#   HITCH=path/to/hitch to use a built binary; otherwise scripts/release-hitch.sh builds the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
models=("$@")
if [[ ${#models[@]} == 0 ]]; then
  for fixture in Tests/Fixtures/llm/*-reference.json; do models+=("$(basename "$fixture" -reference.json)"); done
fi
HITCH=$(bash scripts/release-hitch.sh)
status=0
for which in "${models[@]}"; do
  fixture="Tests/Fixtures/llm/$which-reference.json"
  [[ -f "$fixture" ]] || { echo "check-llm-reference: no fixture $fixture (scripts/llama-reference.sh $which writes it)"; status=1; continue; }
  if ! model="$(bash scripts/fetch-model.sh "$which" 2>&1)"; then
    echo "check-llm-reference: $which skipped: the model cannot be fetched ($model)"
    continue
  fi
  python3 - "$HITCH" "$model" "$fixture" "$which" <<'PY' || status=1
import json, subprocess, sys
hitch, model, fixture, which = sys.argv[1:]
cases = json.load(open(fixture))["cases"]
near_tie = 0.5          # logits; a greedy difference with a larger gap is a real disagreement
strict = which == "smollm2"
failures, equal = [], 0
for case in cases:
    args = [hitch, "generate", "--model", model, "--prompt", case["prompt"], "--tokens", str(len(case["greedy"])),
            "--threads", "2", "--format", "json"] + (["--parse-special"] if case["parseSpecial"] else [])
    run = subprocess.run(args, capture_output=True, text=True)
    label = json.dumps(case["prompt"][:40], ensure_ascii=False)
    if run.returncode != 0:
        failures.append(f"{label}: hitch generate exited {run.returncode}: {run.stderr.strip()}")
        continue
    ours = json.loads(run.stdout)
    if ours["promptTokens"] != case["tokens"]:
        failures.append(f"{label}: prompt tokens differ: {ours['promptTokens']} vs llama.cpp {case['tokens']}")
        continue
    first = next((i for i, (a, b) in enumerate(zip(ours["tokens"], case["greedy"])) if a != b), None)
    rate = ours["decodeTokensPerSecond"]
    if first is None:
        equal += 1
        print(f"  {which}: equal   {label}: {len(case['greedy'])} tokens ({rate:.0f} tok/s)")
        continue
    gap = ours["margins"][first]
    theirs = case.get("margins", [None] * len(case["greedy"]))[first]
    note = (f"first difference at token {first}: ours {ours['tokens'][first]}, llama.cpp {case['greedy'][first]}; "
            f"top-2 logit gap there: ours {gap:.4f}, llama.cpp " + ("?" if theirs is None else f"{theirs:.4f}"))
    print(f"  {which}: differs {label}: {note}")
    if strict and first < 16:
        failures.append(f"{label}: differs before token 16 ({note})")
    elif gap >= near_tie or (strict and theirs is not None and theirs > near_tie):
        failures.append(f"{label}: not a near tie ({note})")
if strict:
    need = len(cases) - 1
else:
    own = sum(1 for c in cases if c.get("greedyPromptTokenByToken", c["greedy"]) == c["greedy"])
    need = min(3, len(cases), own)
    print(f"  {which}: llama.cpp's token-by-token prompt agrees with its batched one on {own} of {len(cases)}")
if equal < need:
    failures.append(f"only {equal} of {len(cases)} greedy continuations equal llama.cpp's (at least {need} must)")
for failure in failures:
    print(f"check-llm-reference: {which}: " + failure)
if failures:
    sys.exit(1)
print(f"check-llm-reference: {which}: ok: {len(cases)} prompts tokenize as llama.cpp; {equal} of {len(cases)} greedy continuations equal")
PY
done
exit $status
