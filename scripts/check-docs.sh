#!/usr/bin/env bash
# Docs that match the code (run by scripts/test.sh):
#   1. every test docs/RELIABILITY.md cites as `SuiteTests.testName` (or a bare `SuiteTests`) exists
#      under Tests/ (the suite as a type, the test as a func);
#   2. every metric docs/METRICS.md defines appears as a key in `hitch analyze --format json` of the
#      committed recordings (Tests/Fixtures/traces/*.fxt, the copies of Traces/ that the demo does not
#      re-record, all of them together; HITCH_DOCS_TRACES overrides the list).
#      METRICS.md marks a metric name in two places (see its "JSON schema" section): the keys of
#      the code block under "## JSON schema" (lowercase identifiers outside parentheses), and the
#      code spans in the first column of any table whose first header cell starts with "JSON".
# Exit 0 = all found, 1 = something cited or defined is missing, 2 = the check could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

# 1. Test names cited by RELIABILITY.md.
tests_source=$(cat $(find Tests -name '*.swift'))
while read -r cited; do
    suite=${cited%%.*}
    name=${cited#*.}
    grep -qE "(struct|class|enum|extension) $suite\b" <<<"$tests_source" || { echo "check-docs: docs/RELIABILITY.md cites suite $suite, which Tests/ does not define"; status=1; continue; }
    if [ "$name" != "$cited" ]; then
        grep -qE "func $name\(" <<<"$tests_source" || { echo "check-docs: docs/RELIABILITY.md cites test $cited, which Tests/ does not define"; status=1; }
    fi
done < <(grep -oE '`[A-Z][A-Za-z0-9]*Tests(\.[a-z][A-Za-z0-9]*)?`' docs/RELIABILITY.md | tr -d '`' | sort -u)

# 2. Metrics defined by METRICS.md, against the analyzer's JSON.
swift build --product hitch >/dev/null 2>&1 || { echo "check-docs: cannot build hitch"; exit 2; }
hitch="$(swift build --show-bin-path)/hitch"
traces=${HITCH_DOCS_TRACES:-$(ls Tests/Fixtures/traces/*.fxt)}
json_dir=$(mktemp -d)
trap 'rm -rf "$json_dir"' EXIT
for trace in $traces; do
    "$hitch" analyze "$trace" --format json > "$json_dir/$(basename "$trace").json" || { echo "check-docs: hitch analyze $trace failed"; exit 2; }
done
python3 - docs/METRICS.md "$json_dir" <<'PY' || status=1
import json, os, re, sys
doc, json_dir = open(sys.argv[1]).read(), sys.argv[2]
names = set()
schema = re.search(r"^## JSON schema\n.*?^```\n(.*?)^```", doc, re.S | re.M)
if not schema:
    print("check-docs: docs/METRICS.md has no code block under '## JSON schema'"); sys.exit(1)
block = schema.group(1)
while True:   # drop parenthesized comments, innermost first
    stripped = re.sub(r"\([^()]*\)", " ", block)
    if stripped == block: break
    block = stripped
block = re.sub(r'"[^"]*"', " ", block)
names |= set(re.findall(r"\b([a-z][A-Za-z0-9]*)\b", block))
# `name?` may be absent (documented as optional); the fields of `list[] {...}` can only be seen
# when some bundled trace has an element in that list.
optional = set(re.findall(r"\b([a-z][A-Za-z0-9]*)\?", block))
element_of = {}
for parent, fields in re.findall(r"\b([a-z][A-Za-z0-9]*)\[\]\s*\{([^{}]*)\}", block):
    for field in re.findall(r"\b([a-z][A-Za-z0-9]*)\b", fields): element_of.setdefault(field, parent)
lines = doc.splitlines()
for i, line in enumerate(lines):
    if line.startswith("|") and re.match(r"\|\s*JSON", line) and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
        for row in lines[i + 2:]:
            if not row.startswith("|"): break
            first = row.split("|")[1]
            names |= {re.sub(r"\[\]$", "", span) for span in re.findall(r"`([A-Za-z][A-Za-z0-9]*(?:\[\])?)`", first)}
keys, nonempty_lists = set(), set()
def walk(value):
    if isinstance(value, dict):
        for k, v in value.items():
            keys.add(k)
            if isinstance(v, list) and v: nonempty_lists.add(k)
            walk(v)
    elif isinstance(value, list):
        for v in value: walk(v)
for name in os.listdir(json_dir):
    walk(json.load(open(os.path.join(json_dir, name))))
unseen = sorted(n for n in names if n not in keys and (n in optional or (n in element_of and element_of[n] not in nonempty_lists)))
for n in unseen:
    why = "optional" if n in optional else f"every '{element_of[n]}' list is empty"
    print(f"check-docs: note: '{n}' not seen in the bundled traces ({why})")
missing = sorted(n for n in names if n not in keys and n not in unseen)
for n in missing:
    print(f"check-docs: docs/METRICS.md defines '{n}', which hitch analyze --format json of the bundled traces does not have")
print(f"check-docs: {len(names)} metric names in docs/METRICS.md, {len(missing)} missing from the analyzer's JSON")
sys.exit(1 if missing else 0)
PY
[ "$status" = 0 ] && echo "check-docs: ok"
exit "$status"
