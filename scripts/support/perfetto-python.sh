#!/usr/bin/env bash
# Runs a Python script with Perfetto's own Python package (PyPI `perfetto`, its TracePacket protos)
# importable, from a virtual environment kept in .build/perfetto-venv (made, and the package
# installed with pip, on first use; Debian's python3-venv is installed by scripts/setup.sh when the
# machine lacks it). The test generators of Tests/Fixtures/import run through it, so a fresh
# machine sets itself up; nothing of it is committed.
#
#   bash scripts/support/perfetto-python.sh SCRIPT.py ARGS...
#
# PERFETTO_VENV overrides the environment's folder. The package version is pinned: the generators
# declare FrameTimelineEvent against this wheel's TracePacket.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="${PERFETTO_VENV:-$ROOT/.build/perfetto-venv}"
PACKAGE="perfetto==0.59.1"

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import perfetto.protos.perfetto.trace.perfetto_trace_pb2" 2>/dev/null; then
    mkdir -p "$(dirname "$VENV")"
    # One installer at a time: test processes may ask for the environment together.
    exec 9>"$VENV.lock"
    flock 9
    if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import perfetto.protos.perfetto.trace.perfetto_trace_pb2" 2>/dev/null; then
        if ! command -v python3 >/dev/null || ! python3 -c "import venv, ensurepip" 2>/dev/null; then
            bash "$ROOT/scripts/setup.sh" python3 python3-venv >&2
        fi
        rm -rf "$VENV"
        python3 -m venv "$VENV" >&2
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$PACKAGE" >&2 \
            || { echo "perfetto-python: could not install $PACKAGE from PyPI into $VENV" >&2; exit 2; }
    fi
    flock -u 9
fi
exec "$VENV/bin/python" "$@"
