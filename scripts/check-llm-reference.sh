#!/usr/bin/env bash
# Our decoder against llama.cpp on real models (run by scripts/test.sh): for every fixture
# Tests/Fixtures/llm/MODEL-reference.json (written by scripts/dev/llama-reference.sh MODEL; llama.cpp is
# never built here), the release `hitch generate --format json` on MODEL (scripts/fetch-model.sh MODEL)
# must give llama.cpp's prompt token ids exactly, and each greedy 32-token continuation must equal
# llama.cpp's or first depart from it at a near tie: our top-2 logit gap there under 0.5 (both
# runtimes' gaps are printed).
#   smollm2 (the Q4_1 file): all prompts but one equal, the one departing at token 16 or later.
#   gemma3, smollm2-q4_k_m, smollm2-q6_k: at least 3 of the 5 equal.
# Then, per model, `hitch record llm --model` streams a greedy reply through the view, stopping at the
# model's first end-of-generation token, every token read back from the trace by `hitch analyze`.
# A model that cannot be fetched is skipped with the reason (exit 0 when all are skipped or pass):
# the requantized SmolLM2 files need llama-quantize from scripts/dev/llama-reference.sh --build's cache.
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
  [[ -f "$fixture" ]] || { echo "check-llm-reference: no fixture $fixture (scripts/dev/llama-reference.sh $which writes it)"; status=1; continue; }
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
need = len(cases) - 1 if strict else min(3, len(cases))
if equal < need:
    failures.append(f"only {equal} of {len(cases)} greedy continuations equal llama.cpp's (at least {need} must)")
for failure in failures:
    print(f"check-llm-reference: {which}: " + failure)
if failures:
    sys.exit(1)
print(f"check-llm-reference: {which}: ok: {len(cases)} prompts tokenize as llama.cpp; {equal} of {len(cases)} greedy continuations equal")
PY
  # End to end: `record llm --model` streams the file's greedy reply to a question through the view
  # and stops at the model's first end-of-generation token (Gemma's <eos>/<end_of_turn>, SmolLM2's
  # <|endoftext|>/<|im_end|>): as many tokens as `hitch generate --chat` (which never stops) makes
  # before its first such token, at most --tokens; the analysis reads every token back from the trace.
  trace="$(mktemp -d)/record-$which.fxt"
  question="What is the capital of France? Answer in one word."
  if ! "$HITCH" record llm --model "$model" --prompt "$question" --tokens 48 --temperature 0 -o "$trace" >"$trace.log" 2>&1 \
     || ! "$HITCH" analyze "$trace" --format json >"$trace.json" 2>>"$trace.log" \
     || ! "$HITCH" generate --model "$model" --chat --prompt "$question" --tokens 48 --format json >"$trace.generate.json" 2>>"$trace.log"; then
    echo "check-llm-reference: $which: record llm, analyze or generate failed: $(tail -n 1 "$trace.log")"; status=1; continue
  fi
  python3 - "$which" "$trace.json" "$trace.generate.json" <<'PY' || status=1
import json, sys
which, path, generated_path = sys.argv[1:]
end_of_generation = {"gemma3": {1, 106}}.get(which, {0, 2})
analysis, generated = json.load(open(path)), json.load(open(generated_path))["tokens"]
tokens = analysis["tokens"]
expected = next((i for i, t in enumerate(generated) if t in end_of_generation), len(generated))
print(f"  {which}: record llm: {tokens['produced']} tokens produced, {tokens['delivered']} delivered, {tokens['lost']} lost; "
      f"the greedy reply ends after {expected} of at most {len(generated)}")
if not (tokens["produced"] == expected and tokens["delivered"] == expected and tokens["lost"] == 0):
    print(f"check-llm-reference: {which}: record llm --model streamed {tokens['produced']} tokens, not the reply's {expected}")
    sys.exit(1)
PY
  rm -rf "$(dirname "$trace")"
done
exit $status
