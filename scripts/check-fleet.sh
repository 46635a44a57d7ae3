#!/usr/bin/env bash
# The fleet run on a real Dask cluster (docs/FLEET.md "Checking a run"); run by scripts/test.sh.
#  1. 500 generated traces (hitch bench traces) and one corrupt trace.
#  2. The serial result: hitch summarize of every trace in one process (the corrupt one reported,
#     exit 2), then hitch merge.
#  3. Every summary, and the fleet summaries below, validated against docs/summary.schema.json by
#     jsonschema (from PyPI, an implementation written apart from Hitch).
#  4. A cluster started the way a real one is: a scheduler and two workers on loopback, each its own
#     process (group), and the job pointed at the scheduler's address. Once 100 traces have started,
#     one worker (its nanny and its worker process) is killed with SIGKILL just after it started a
#     trace: the job must finish on the other, every trace summarized once or reported (its own
#     check: counts and path digest), the traces the killed worker had in hand started again on the
#     other, the corrupt trace reported, and fleet.json byte-identical to the serial run's.
#  5. The job on a local cluster (--local-workers 2) over a file:// prefix of 40 traces, storing the
#     fleet's figures in a private PostgreSQL; the stored hitch time ratio is fleet.json's, and
#     storing the same fleet again stores nothing.
# HITCH_FLEET_CHECK_TRACES changes the count (default 500). Each fleet run has a time limit of its own
# (900 and 600 s; scripts/test.sh bounds the whole check). Exit 0 = all held, 1 = one did not,
# 2 = the check could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh fleet
venv="${HITCH_FLEET_VENV:-$HOME/.cache/hitch/fleet-venv}"
swift build --product hitch >/dev/null 2>&1 || { echo "check-fleet: cannot build hitch"; exit 2; }
hitch="$(swift build --show-bin-path)/hitch"
count=${HITCH_FLEET_CHECK_TRACES:-500}
work=$(mktemp -d /tmp/hitch-fleet-check.XXXXXX)
groups=()
. scripts/support/private-postgres.sh
cleanup() {
    for group in ${groups[@]+"${groups[@]}"}; do kill -9 -- "-$group" 2>/dev/null || true; done
    private_postgres_stop
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check-fleet: FAILED: $*"; exit 1; }
step() { echo "check-fleet: $* ($SECONDS s)"; }
json() { "$venv/bin/python" -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }
by=(--by appVersion --by device --by appVersion,device)

# 1. The traces.
"$hitch" bench traces --count "$count" --frames 240 -o "$work/traces" >/dev/null
for i in $(seq 1 200); do printf 'this is not a trace %d\n' "$i"; done > "$work/traces/corrupt.fxt"
step "$count traces and one corrupt trace written"

# 2. The serial run.
status=0
"$hitch" summarize "$work"/traces/*.fxt -o "$work/serial/" 2>"$work/serial.err" || status=$?
[ "$status" = 2 ] || fail "serial hitch summarize exited $status, expected 2 for the corrupt trace"
grep -q "corrupt.fxt" "$work/serial.err" || fail "serial hitch summarize did not name the corrupt trace: $(cat "$work/serial.err")"
[ "$(ls "$work/serial" | wc -l)" = "$count" ] || fail "the serial run wrote $(ls "$work/serial" | wc -l) summaries, expected $count"
"$hitch" merge "$work/serial" "${by[@]}" --format json -o "$work/serial.json"
step "serial run: $count summaries, the corrupt trace reported"

# 3. The schema.
"$venv/bin/python" scripts/support/validate-summaries.py docs/summary.schema.json "$work"/serial/*.json | tail -n 3 \
    || fail "summaries do not match docs/summary.schema.json"

# 4. A cluster started as a real one is, a worker killed mid-run.
setsid "$venv/bin/dask" scheduler --host 127.0.0.1 --port 0 --no-dashboard --scheduler-file "$work/scheduler.json" \
    >"$work/scheduler.log" 2>&1 &
groups+=($!)
disown
for _ in $(seq 1 120); do [ -s "$work/scheduler.json" ] && break; sleep 0.5; done
[ -s "$work/scheduler.json" ] || { cat "$work/scheduler.log"; fail "the scheduler did not start"; }
address=$(json "$work/scheduler.json" 'd["address"]')
for name in kept killed; do
    setsid "$venv/bin/dask" worker --scheduler-file "$work/scheduler.json" --nthreads 1 --nworkers 1 --name "$name" \
        --no-dashboard --local-directory "$work/$name" >"$work/$name.log" 2>&1 &
    groups+=($!)
    disown
done
"$venv/bin/python" -c "
import sys
from distributed import Client
with Client(sys.argv[1], timeout=60) as client:
    client.wait_for_workers(2, timeout=120)" "$address" || fail "the workers did not join the scheduler"
step "scheduler $address with workers 'kept' and 'killed'"
fleet_status=0
timeout 900 "$venv/bin/python" scripts/fleet.py --scheduler "$address" --hitch "$hitch" --traces "$work/traces/*.fxt" "${by[@]}" \
    --attempt-log "$work/attempts.log" --out "$work/fleet" >"$work/fleet.log" 2>&1 &
fleet=$!
# Killed just after it started a trace (the log's last line is its own), so a trace is in flight.
for _ in $(seq 1 6000); do
    if [ "$(grep -c . "$work/attempts.log" 2>/dev/null || echo 0)" -ge 100 ] && [ "$(tail -n 1 "$work/attempts.log" | cut -f 3)" = killed ]; then break; fi
    kill -0 "$fleet" 2>/dev/null || break
    sleep 0.02
done
killed_at=$(grep -c . "$work/attempts.log" || true)
kill -9 -- "-${groups[2]}" || fail "could not kill the worker 'killed'"
step "worker 'killed' killed (SIGKILL to its nanny and worker) after $killed_at traces had started"
wait "$fleet" || fleet_status=$?
[ "$fleet_status" = 0 ] || { tail -n 20 "$work/fleet.log"; fail "the fleet job exited $fleet_status"; }
cmp -s "$work/serial.json" "$work/fleet/fleet.json" || fail "the fleet's figures differ from the serial run's (diff $work/serial.json $work/fleet/fleet.json)"
[ "$(json "$work/fleet/run.json" 'd["checked"]')" = True ] || fail "the job's own check: $(json "$work/fleet/run.json" 'd["problems"]')"
[ "$(json "$work/fleet/run.json" 'd["summarized"], d["failed"]')" = "$count 1" ] \
    || fail "summarized and failed are $(json "$work/fleet/run.json" 'd["summarized"], d["failed"]'), expected $count and 1"
[ "$(json "$work/fleet/failures.json" '[f["path"].split("/")[-1] for f in d]')" = "['corrupt.fxt']" ] \
    || fail "failures.json: $(cat "$work/fleet/failures.json")"
killed_started=$(awk -F'\t' '$3 == "killed"' "$work/attempts.log" | wc -l)
rerun=$(awk -F'\t' '{ n[$2]++; if ($3 == "killed") k[$2] = 1 } END { c = 0; for (p in k) if (n[p] > 1) c++; print c }' "$work/attempts.log")
[ "$killed_started" -gt 0 ] || fail "the killed worker never started a trace"
[ "$rerun" -gt 0 ] || fail "no trace the killed worker had started was started again"
"$venv/bin/python" scripts/support/validate-summaries.py docs/summary.schema.json "$work/fleet/fleet.state.json" >/dev/null \
    || fail "the fleet summary does not match docs/summary.schema.json"
"$venv/bin/python" - "$work/fleet" <<'PY' || fail "fleet.html links a worst trace's report the job did not write"
import os, re, sys
out = sys.argv[1]
links = re.findall(r'href="\./([^"]+)"', open(os.path.join(out, "fleet.html")).read())
sys.exit(0 if links and all(os.path.isfile(os.path.join(out, link)) for link in links) else 1)
PY
step "fleet run: $count summarized once each, corrupt.fxt reported, fleet.json identical to the serial run's; the killed worker had started $killed_started traces, $rerun of them started again on 'kept'"
grep "traces merged" "$work/fleet.log" | sed 's/^/  /'

# 5. A local cluster over a prefix, into PostgreSQL.
private_postgres_start >/dev/null || exit 2
mkdir -p "$work/small"
for trace in $(ls "$work"/traces/trace-*.fxt | head -n 40); do cp "$trace" "$work/small/"; done
timeout 600 "$venv/bin/python" scripts/fleet.py --local-workers 2 --hitch "$hitch" --prefix "file://$work/small" --out "$work/local" \
    --db "$PRIVATE_POSTGRES_URL" --commit 0123abc --branch fleet-check >"$work/local.log" 2>&1 \
    || { tail -n 20 "$work/local.log"; fail "the fleet job on a local cluster failed"; }
[ "$(json "$work/local/run.json" 'd["summarized"], d["checked"]')" = "40 True" ] || fail "local run: $(cat "$work/local/run.json")"
grep -q "stored the fleet's figures" "$work/local.log" || fail "the local run did not store the fleet's figures: $(tail -n 5 "$work/local.log")"
expected=$(json "$work/local/fleet.json" 'd["fleet"]["hitches"]["120"]["hitchTimeRatioMsPerS"]')
stored=$("$hitch" history show hitches.120.hitchTimeRatioMsPerS --branch fleet-check --db "$PRIVATE_POSTGRES_URL" --format json \
    | "$venv/bin/python" -c "import json, sys; print(json.load(sys.stdin)['values'][-1]['value'])")
[ "$stored" = "$expected" ] || fail "PostgreSQL holds $stored for the fleet's hitch time ratio at 120 Hz, fleet.json $expected"
"$hitch" merge "$work/local/fleet.state.json" --db "$PRIVATE_POSTGRES_URL" --commit 0123abc --branch fleet-check -o /dev/null 2>"$work/again.log"
grep -q "already stored" "$work/again.log" || fail "storing the same fleet again: $(cat "$work/again.log")"
step "local cluster over file://$work/small: 40 traces, the fleet's figures in PostgreSQL ($stored ms/s at 120 Hz), stored once"
echo "check-fleet: ok"
