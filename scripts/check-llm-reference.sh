#!/usr/bin/env bash
# Our decoder against llama.cpp on the real model (run by scripts/test.sh): for every prompt of
# Tests/Fixtures/llm/smollm2-reference.json (written by scripts/llama-reference.sh; llama.cpp is never
# built here), the release `hitch generate --format json` must give llama.cpp's prompt token ids
# exactly, and its greedy 32-token continuation must equal llama.cpp's in all prompts but one; in
# that one the first difference must come at token 16 or later and be a near tie (both runtimes'
# top-2 logit gaps at that position are printed; a gap above 0.5 fails).
# Skips (exit 0, with the reason) only when the model cannot be fetched (scripts/fetch-model.sh).
#   HITCH=path/to/hitch to use a built binary; otherwise scripts/release-hitch.sh builds the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
fixture=Tests/Fixtures/llm/smollm2-reference.json
[[ -f "$fixture" ]] || { echo "check-llm-reference: no fixture $fixture (scripts/llama-reference.sh writes it)"; exit 1; }
if ! model="$(bash scripts/fetch-model.sh 2>&1)"; then
  echo "check-llm-reference: skipped: the model cannot be fetched ($model)"
  exit 0
fi
HITCH=$(bash scripts/release-hitch.sh)
python3 - "$HITCH" "$model" "$fixture" <<'PY'
import json, subprocess, sys
hitch, model, fixture = sys.argv[1:]
cases = json.load(open(fixture))["cases"]
near_tie = 0.5          # logits; a greedy difference with a larger gap is a real disagreement
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
        print(f"  equal  {label}: {len(case['greedy'])} tokens ({rate:.0f} tok/s)")
        continue
    gap = ours["margins"][first]
    theirs = case.get("margins", [None] * len(case["greedy"]))[first]
    note = (f"first difference at token {first}: ours {ours['tokens'][first]}, llama.cpp {case['greedy'][first]}; "
            f"top-2 logit gap there: ours {gap:.4f}, llama.cpp " + ("?" if theirs is None else f"{theirs:.4f}"))
    print(f"  differs {label}: {note}")
    if first < 16:
        failures.append(f"{label}: differs before token 16 ({note})")
    elif gap > near_tie or (theirs is not None and theirs > near_tie):
        failures.append(f"{label}: not a near tie ({note})")
need = len(cases) - 1
if equal < need:
    failures.append(f"only {equal} of {len(cases)} greedy continuations equal llama.cpp's (at least {need} must)")
for failure in failures:
    print("check-llm-reference: " + failure)
if failures:
    sys.exit(1)
print(f"check-llm-reference: ok: {len(cases)} prompts tokenize as llama.cpp; {equal} of {len(cases)} greedy continuations equal")
PY
