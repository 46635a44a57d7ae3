#!/usr/bin/env bash
# CI check: the README's CI example (the block between the ci-example markers: budgets,
# `hitch check`, `hitch diff` with markdown) runs as written against the release binary, and every
# command annotated `# exit N` exits N. Paths under /tmp/ go to a private scratch directory.
# Exit 0 = the example holds, 1 = it does not (the README or the CLI must change).
set -euo pipefail
cd "$(dirname "$0")/.."
HITCH=$(bash scripts/release-hitch.sh)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/bin"
ln -s "$(cd "$(dirname "$HITCH")" && pwd)/$(basename "$HITCH")" "$scratch/bin/hitch"

block=$(awk '/<!-- ci-example -->/{inside=1; next} /<!-- \/ci-example -->/{inside=0} inside' README.md | grep -v '^```')
[ -n "$block" ] || { echo "check-ci-example: README.md has no ci-example block" >&2; exit 1; }

# Each `CMD   # exit N` line becomes: run CMD, compare its status with N.
script="$scratch/example.sh"
{
  echo 'failed=0'
  while IFS= read -r line; do
    if [[ $line =~ ^(.*[^[:space:]])[[:space:]]+#\ exit\ ([0-9]+) ]]; then
      command=${BASH_REMATCH[1]}; expected=${BASH_REMATCH[2]}
      printf '%s\n' "$command"
      printf 'status=$?; if [ "$status" -ne %s ]; then echo "check-ci-example: exit $status, expected %s: %s" >&2; failed=1; fi\n' \
        "$expected" "$expected" "$(printf '%q' "$command")"
    else
      printf '%s\n' "$line"
    fi
  done <<< "${block//\/tmp\//$scratch/}"
  echo 'exit $failed'
} > "$script"

export GITHUB_STEP_SUMMARY="$scratch/summary.md"
: > "$GITHUB_STEP_SUMMARY"
# The example speaks of the committed recordings: run it on their copies (Tests/Fixtures/traces),
# since `scripts/demo.sh` re-records Traces/ in place and a noisy machine's recording may break a
# budget. HITCH_CI_EXAMPLE_TRACES=DIR runs the block on other recordings (e.g. Traces/ after the
# demo, or `hitch demo --traces DIR`), to see it hold on this machine's own traces.
mkdir -p "$scratch/work/Traces"
cp "${HITCH_CI_EXAMPLE_TRACES:-Tests/Fixtures/traces}"/*.fxt "$scratch/work/Traces/"
if ! (cd "$scratch/work" && PATH="$scratch/bin:$PATH" bash "$script") 2> "$scratch/stderr"; then
  cat "$scratch/stderr" >&2
  echo "check-ci-example: the README's CI example does not hold" >&2
  exit 1
fi
# What the example says it produces.
grep -q '<testcase' "$scratch/budgets.xml" || { echo "check-ci-example: no JUnit test cases in budgets.xml" >&2; exit 1; }
grep -q '\*\*better: hitch time ratio at 120 Hz' "$GITHUB_STEP_SUMMARY" || {
  echo "check-ci-example: the markdown summary does not open with the verdict 'better'" >&2; cat "$GITHUB_STEP_SUMMARY" >&2; exit 1; }
head -1 "$scratch/diff.txt" | grep -q '^worse: ' || { echo "check-ci-example: the reversed diff does not say 'worse'" >&2; exit 1; }
echo "check-ci-example: the README's CI example holds ($(grep -c '# exit' <<< "$block") commands checked)" >&2
