#!/usr/bin/env bash
# Builds and runs the libFuzzer targets in Tests/Fuzz (see docs/RELIABILITY.md).
#
#   scripts/dev/fuzz.sh [--seconds N] [--keep-going] [--build-only|--no-build] TARGET...   run targets (in parallel)
#   scripts/dev/fuzz.sh seeds                                                   regenerate generated seeds
#   scripts/dev/fuzz.sh repro TARGET FILE...                                    run inputs once (a crasher)
#   scripts/dev/fuzz.sh triage TARGET                                           distinct crash sites of the artifacts
#   scripts/dev/fuzz.sh big [TARGET...]                                         1 MB inputs, each within its target's -timeout
#
# Targets: reader (FXT TraceReader), analyze (reader -> every analysis pass -> JSON),
#          chrome (Chrome JSON importer -> analysis), budget (budget-file parser -> evaluation),
#          framestats, perfetto, xctrace (their importers -> FXT -> analysis; Tests/Fuzz/ImportFuzz.swift),
#          gguf (GGUF model files -> model, tokenizer, prefill and a step; truncated and corrupted
#          K-quant files among them; Tests/Fuzz/GGUFFuzz.swift).
#
# Each target is one binary built with `swiftc -sanitize=fuzzer,address`: CHitchSupport's C files
# compiled by clang with -fsanitize=fuzzer-no-link,address, HitchAlgorithms, HitchTrace, HitchReader (and
# HitchImport, HitchAnalysis) compiled by swiftc as modules with the same instrumentation, linked with Tests/Fuzz/<Target>Fuzz.swift.
# Limits on every run: -timeout=1 (a 1 MB input must not take over a second; gguf: GGUF_TIMEOUT,
# see below), -malloc_limit_mb=256 (no single allocation beyond it), -rss_limit_mb=2048 (ASan's own
# overhead included), inputs up to 1 MB. Seeds come from Tests/Fuzz/corpus/TARGET (read only); new
# inputs go to $HITCH_FUZZ_BUILD/corpus/TARGET, crashers to $HITCH_FUZZ_BUILD/artifacts/TARGET/,
# logs to $HITCH_FUZZ_BUILD/logs/TARGET.log.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${HITCH_FUZZ_BUILD:-/tmp/hb-fuzz}"
SECONDS_PER_TARGET=60
KEEP_GOING=0
BUILD_ONLY=0
NO_BUILD=0
ALL_TARGETS=(reader analyze chrome budget framestats perfetto xctrace gguf)

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }

# gguf's inputs are whole model files: one input reads the model, builds its tokenizer and runs a
# prefill and a decode step through every layer, under ASan, so its slowest inputs take a good part
# of a second on a loaded machine (docs/RELIABILITY.md has the figures). 10 s is far above the
# slowest input found, and a loop that does not end is still caught.
GGUF_TIMEOUT=10
timeout_of() { if [[ "$1" == gguf ]]; then echo "$GGUF_TIMEOUT"; else echo 1; fi; }

# Runs TARGET's fuzz binary on the given inputs once each, under the limits every run has.
run_inputs() {
    local target="$1"; shift
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" "$BUILD/bin/fuzz-$target" \
        -timeout="$(timeout_of "$target")" -malloc_limit_mb=256 -rss_limit_mb=2048 "$@"
}

needs_analysis() { [[ "$1" != reader && "$1" != gguf ]]; }
needs_workloads() { [[ "$1" == gguf ]]; }
source_file() {
    case "$1" in
        reader) echo "$ROOT/Tests/Fuzz/ReaderFuzz.swift" ;;
        analyze) echo "$ROOT/Tests/Fuzz/AnalyzeFuzz.swift $ROOT/Tests/Fuzz/FuzzSupport.swift" ;;
        chrome) echo "$ROOT/Tests/Fuzz/ChromeFuzz.swift $ROOT/Tests/Fuzz/FuzzSupport.swift" ;;
        budget) echo "$ROOT/Tests/Fuzz/BudgetFuzz.swift" ;;
        framestats) echo "-D FUZZ_FRAMESTATS $ROOT/Tests/Fuzz/ImportFuzz.swift $ROOT/Tests/Fuzz/FuzzSupport.swift" ;;
        perfetto) echo "-D FUZZ_PERFETTO $ROOT/Tests/Fuzz/ImportFuzz.swift $ROOT/Tests/Fuzz/FuzzSupport.swift" ;;
        xctrace) echo "-D FUZZ_XCTRACE $ROOT/Tests/Fuzz/ImportFuzz.swift $ROOT/Tests/Fuzz/FuzzSupport.swift" ;;
        gguf) echo "$ROOT/Tests/Fuzz/GGUFFuzz.swift $ROOT/Tests/HitchWorkloadsTests/TinyGemma3.swift" ;;
        *) echo "fuzz.sh: unknown target '$1' (known: ${ALL_TARGETS[*]})" >&2; exit 2 ;;
    esac
}

SAN=(-sanitize=fuzzer,address)
# -package-name: the modules share FXT internals through `package` access, as SwiftPM builds them.
SWIFT_FLAGS=(-O -g -parse-as-library -swift-version 6 -package-name hitch -I "$BUILD/mod" -Xcc "-fmodule-map-file=$BUILD/mod/module.modulemap")
# The library modules every target links, in dependency order.
LIBRARY_MODULES=(HitchAlgorithms HitchTrace HitchReader HitchImport HitchAnalysis)
LIBS=(-lunwind -lunwind-x86_64 -ldl -lz)

# Rebuilds the instrumented modules when any of their sources changed.
build_modules() {
    mkdir -p "$BUILD/mod" "$BUILD/obj"
    cat > "$BUILD/mod/module.modulemap" <<EOF
module CHitchSupport {
    umbrella "$ROOT/Sources/CHitchSupport/include"
    export *
}
module CZlib [system] {
    header "$ROOT/Sources/CZlib/shim.h"
    link "z"
    export *
}
module CHitchKernels {
    umbrella "$ROOT/Sources/CHitchKernels/include"
    export *
}
EOF
    local stamp="$BUILD/mod/.built"
    if [[ -f "$stamp" ]] && [[ -z "$(find "$ROOT/Sources/CHitchSupport" "${LIBRARY_MODULES[@]/#/$ROOT/Sources/}" -newer "$stamp" -type f | head -1)" ]]; then
        return
    fi
    echo "fuzz.sh: building instrumented CHitchSupport, ${LIBRARY_MODULES[*]} in $BUILD" >&2
    for c in "$ROOT"/Sources/CHitchSupport/*.c; do
        clang -c -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address \
            -I "$ROOT/Sources/CHitchSupport/include" "$c" -o "$BUILD/obj/$(basename "$c" .c).o"
    done
    local module
    for module in "${LIBRARY_MODULES[@]}"; do
        # shellcheck disable=SC2046
        swiftc "${SWIFT_FLAGS[@]}" "${SAN[@]}" -wmo -module-name "$module" -emit-module \
            -emit-module-path "$BUILD/mod/$module.swiftmodule" -c $(find "$ROOT/Sources/$module" -name '*.swift' | sort) \
            -o "$BUILD/obj/$module.o"
    done
    touch "$stamp"
}

# The GGUF target's modules (HeadlessUI, CHitchKernels, HitchWorkloads), instrumented the same way;
# HitchWorkloads with -enable-testing (the target reads files through its internal API).
build_workload_modules() {
    local stamp="$BUILD/mod/.built-workloads"
    if [[ -f "$stamp" ]] && [[ -z "$(find "$ROOT/Sources/CHitchKernels" "$ROOT/Sources/HeadlessUI" "$ROOT/Sources/HitchWorkloads" "$ROOT/Sources/HitchTrace" "$ROOT/Sources/HitchAlgorithms" -newer "$stamp" -type f | head -1)" ]]; then
        return
    fi
    echo "fuzz.sh: building instrumented HeadlessUI, CHitchKernels, HitchWorkloads in $BUILD" >&2
    clang -c -O2 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address \
        -I "$ROOT/Sources/CHitchKernels/include" "$ROOT/Sources/CHitchKernels/kernels.c" -o "$BUILD/obj/CHitchKernels.o"
    # shellcheck disable=SC2046
    swiftc "${SWIFT_FLAGS[@]}" "${SAN[@]}" -wmo -module-name HeadlessUI -emit-module \
        -emit-module-path "$BUILD/mod/HeadlessUI.swiftmodule" -c $(find "$ROOT/Sources/HeadlessUI" -name '*.swift' | sort) \
        -o "$BUILD/obj/HeadlessUI.o"
    # shellcheck disable=SC2046
    swiftc "${SWIFT_FLAGS[@]}" "${SAN[@]}" -enable-testing -wmo -module-name HitchWorkloads -emit-module \
        -emit-module-path "$BUILD/mod/HitchWorkloads.swiftmodule" -c $(find "$ROOT/Sources/HitchWorkloads" -name '*.swift' | sort) \
        -o "$BUILD/obj/HitchWorkloads.o"
    touch "$stamp"
}

objects_for() {
    # Every CHitchSupport object build_modules compiled (a hand-kept list fell behind new C files).
    local objs=() c
    for c in "$ROOT"/Sources/CHitchSupport/*.c; do objs+=("$BUILD/obj/$(basename "$c" .c).o"); done
    objs+=("$BUILD/obj/HitchAlgorithms.o" "$BUILD/obj/HitchTrace.o" "$BUILD/obj/HitchReader.o")
    if needs_analysis "$1"; then objs+=("$BUILD/obj/HitchImport.o" "$BUILD/obj/HitchAnalysis.o"); fi
    if needs_workloads "$1"; then objs+=("$BUILD/obj/HeadlessUI.o" "$BUILD/obj/CHitchKernels.o" "$BUILD/obj/HitchWorkloads.o"); fi
    echo "${objs[@]}"
}

build_target() {
    local target="$1"
    if needs_workloads "$target"; then build_workload_modules; fi
    mkdir -p "$BUILD/bin"
    # shellcheck disable=SC2046
    swiftc "${SWIFT_FLAGS[@]}" "${SAN[@]}" $(source_file "$target") $(objects_for "$target") "${LIBS[@]}" \
        -o "$BUILD/bin/fuzz-$target" 2> >(grep -v "Cannot export local symbol" >&2)
}

run_target() {
    local target="$1" seconds="$2"
    local work="$BUILD/corpus/$target" artifacts="$BUILD/artifacts/$target" log="$BUILD/logs/$target.log"
    mkdir -p "$work" "$artifacts" "$BUILD/logs" "$ROOT/Tests/Fuzz/corpus/$target"
    local flags=(-timeout="$(timeout_of "$target")" -malloc_limit_mb=256 -rss_limit_mb=2048 -max_len=1048576
                 -artifact_prefix="$artifacts/" -print_final_stats=1 -use_value_profile=1)
    # --keep-going: after a finding, start again (same growing corpus) until the time is used up.
    # (Plain restarts, not libFuzzer's -fork mode, which reloads the corpus per job.)
    local status=0 end=$(( $(date +%s) + seconds )) remaining="$seconds" restarts=0 before
    before=$(find "$artifacts" -maxdepth 1 -type f | wc -l)
    : > "$log"; touch "$log.start"
    while (( remaining > 0 )); do
        status=0
        SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=0}" \
            "$BUILD/bin/fuzz-$target" -max_total_time="$remaining" "${flags[@]}" "$work" "$ROOT/Tests/Fuzz/corpus/$target" >> "$log" 2>&1 || status=$?
        [[ "$KEEP_GOING" == 1 && "$status" != 0 ]] || break
        restarts=$(( restarts + 1 ))
        (( restarts < 1000 )) || break
        remaining=$(( end - $(date +%s) ))
    done
    # Plain mode prints final stats; fork mode prints "#N: cov: ..." progress lines with total executions.
    execs=$({ grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" || true; } | awk '{s+=$2} END {print s+0}')
    if [[ "$execs" == 0 ]]; then execs=$({ grep -Eo '^#[0-9]+' "$log" || true; } | tail -1 | tr -d '#'); fi
    # libFuzzer's -timeout is wall time, so a noisy machine can stop an input that is not slow. Each
    # new timeout is run again alone; one that now ends within the bound is set aside under load/, named
    # in the summary with its time, and does not count as a finding. One that still times out counts.
    local load_timeouts=0 t out
    mkdir -p "$artifacts/load"
    for t in $(find "$artifacts" -maxdepth 1 -type f -name 'timeout-*' -newer "$log.start"); do
        out=$(run_inputs "$target" "$t" 2>&1) || continue
        mv "$t" "$artifacts/load/"
        load_timeouts=$(( load_timeouts + 1 ))
        echo "fuzz.sh: $target: $(basename "$t") timed out under load; alone: $(grep -Eo 'Executed .* in [0-9]+ ms' <<< "$out" | sed 's|.*/||')" >> "$log"
    done
    found=$(find "$artifacts" -maxdepth 1 -type f | wc -l)
    echo "fuzz.sh: $target: exit $status, ${execs:-0} executions in ${seconds}s budget, $restarts restarts after findings, $(( found - before )) new artifacts ($found in all) in $artifacts, $load_timeouts timeouts that ran within the bound alone (in load/), corpus $(find "$work" -type f | wc -l) new inputs; log $log"
    if (( found > before )); then return 1; fi
    return "$status"
}

make_seeds() {
    build_modules
    local out="$ROOT/Tests/Fuzz/corpus"
    mkdir -p "$out/reader" "$out/analyze" "$out/chrome" "$BUILD/bin"
    local rt
    rt=$(ls -d "$(dirname "$(dirname "$(command -v swiftc)")")"/lib/clang/*/lib/linux | head -1)
    # shellcheck disable=SC2046
    swiftc "${SWIFT_FLAGS[@]}" -sanitize=address "$ROOT/Tests/Fuzz/Seeds/MakeSeeds.swift" $(objects_for reader) "${LIBS[@]}" \
        -Xlinker "$rt/libclang_rt.fuzzer_no_main-x86_64.a" -lstdc++ -o "$BUILD/bin/make-seeds" 2> >(grep -v "Cannot export local symbol" >&2)
    ASAN_OPTIONS=detect_leaks=0 "$BUILD/bin/make-seeds" "$out/reader"
    python3 "$ROOT/Tests/Fuzz/Seeds/edge_cases.py" "$out"
    cp "$out"/reader/every-kind.fxt "$out"/reader/recorded.fxt "$out/analyze/"
    build_target gguf
    HITCH_FUZZ_WRITE_SEEDS="$out/gguf" ASAN_OPTIONS=detect_leaks=0 "$BUILD/bin/fuzz-gguf"
    ls -la "$out"/*
}

repro() {
    local target="$1"; shift
    build_modules
    build_target "$target"
    run_inputs "$target" "$@"
}

# One line per distinct crash site (the first frame in the project's sources) over TARGET's artifacts.
triage() {
    local target="$1" f out site where
    for f in "$BUILD/artifacts/$target"/*; do
        [[ -f "$f" ]] || continue
        out=$(run_inputs "$target" "$f" 2>&1 || true)
        # An input that no longer fails matches none of these: not a reason to stop (set -e, pipefail).
        site=$({ grep -Eo "(runtime failure: [a-z ]+|Fatal error: [^:]*|ERROR: AddressSanitizer: [a-z-]+)" <<< "$out" || true; } | head -1)
        [[ -n "$site" ]] || site=$({ grep -Eo "ERROR: libFuzzer: [a-z-]+" <<< "$out" || true; } | head -1)
        where=$({ grep -Eo "$ROOT/Sources/[^ ]+:[0-9]+" <<< "$out" || true; } | head -1)
        echo "${site:-no crash now} @ ${where#"$ROOT/"}	$(basename "$f") ($(stat -c %s "$f") bytes)"
    done | sort -t'	' -k1,1 -u
}

# Generated 1 MB inputs (Tests/Fuzz/Seeds/big_inputs.py) run once each under the same limits.
big() {
    local dir="$BUILD/big" target f out status=0
    python3 "$ROOT/Tests/Fuzz/Seeds/big_inputs.py" "$dir" "$ROOT"
    for target in "$@"; do
        for f in "$dir/$target"/*; do
            out=$(run_inputs "$target" "$f" 2>&1) || status=1
            local line ms
            line=$(grep -Eo "Executed .* in [0-9]+ ms|ERROR: [A-Za-z]+: [a-z -]+|timeout" <<< "$out" | head -1 | sed "s|$dir/$target/||")
            ms=$(grep -Eo "[0-9]+ ms" <<< "$line" | grep -Eo "[0-9]+" || echo 0)
            local bound; bound=$(timeout_of "$target")
            if (( ms > 1000 * bound )); then line="$line: OVER THE $bound s BOUND"; status=1; fi
            echo "$target $(basename "$f"): $line"
        done
    done
    return "$status"
}

targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) SECONDS_PER_TARGET="$2"; shift 2 ;;
        --keep-going) KEEP_GOING=1; shift ;;
        --build-only) BUILD_ONLY=1; shift ;;
        --no-build) NO_BUILD=1; shift ;;
        -h|--help) usage; exit 0 ;;
        seeds) make_seeds; exit 0 ;;
        repro) shift; repro "$@"; exit $? ;;
        triage) shift; triage "$1"; exit 0 ;;
        big) shift; if [[ $# -eq 0 ]]; then set -- "${ALL_TARGETS[@]}"; fi; big "$@"; exit $? ;;
        all) targets+=("${ALL_TARGETS[@]}"); shift ;;
        -*) echo "fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
        *) source_file "$1" > /dev/null; targets+=("$1"); shift ;;
    esac
done
[[ ${#targets[@]} -gt 0 ]] || { usage; exit 2; }

if [[ "$NO_BUILD" != 1 ]]; then
    build_modules
    for t in "${targets[@]}"; do build_target "$t"; done
fi
if [[ "$BUILD_ONLY" == 1 ]]; then exit 0; fi

pids=()
for t in "${targets[@]}"; do run_target "$t" "$SECONDS_PER_TARGET" & pids+=($!); done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit "$status"
