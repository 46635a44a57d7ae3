#!/usr/bin/env bash
# The fleet run (scripts/fleet.py, docs/FLEET.md): installs Dask distributed into the fleet job's own
# Python environment on first use (scripts/setup.sh fleet), then runs the job with it. Every option is
# the job's: 'bash scripts/fleet.sh --help'.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/setup.sh" fleet
exec "${HITCH_FLEET_VENV:-$HOME/.cache/hitch/fleet-venv}/bin/python" "$here/fleet.py" "$@"
