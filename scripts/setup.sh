#!/usr/bin/env bash
# Installs what a fresh machine (Swift toolchain only) lacks: libunwind's headers and
# development links (Debian libunwind-dev); zlib's (zlib1g-dev), which the importers (HitchImport,
# linked by `hitch`) inflate Perfetto traces with; for `hitch history`, SQLite's and libpq's headers (libsqlite3-dev,
# libpq-dev; hitch loads the libraries at run time) and the PostgreSQL server its tests start privately (postgresql; the package's own
# cluster service is not needed and not used). Idempotent and quiet when nothing is missing.
# Sourced by scripts/demo.sh and scripts/test.sh; also runnable on its own.
#   scripts/setup.sh PACKAGE...   also these Debian packages (chromium for the browser checks)
#   scripts/setup.sh fleet        also the fleet job's Python environment (Dask distributed, jsonschema;
#                                 scripts/fleet-requirements.txt, from PyPI) in a virtual environment at
#                                 $HITCH_FLEET_VENV (default ~/.cache/hitch/fleet-venv); only the fleet
#                                 job (scripts/fleet.sh) and its check ask for it
set -euo pipefail

fleet=false
debian=()
for word in "$@"; do
    if [ "$word" = fleet ]; then fleet=true; else debian+=("$word"); fi
done

need=()
for package in libunwind-dev zlib1g-dev libsqlite3-dev libpq-dev postgresql ${debian[@]+"${debian[@]}"}; do
    # Installed, not merely known to dpkg (a removed package keeps its configuration files and a status).
    [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || need+=("$package")
done

if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup: installing ${need[*]} (Debian packages)" >&2
    # Hitch's PostgreSQL tests start a private server of their own: tell the package not to create
    # (and start) its default cluster. An existing machine's configuration is left alone.
    if [[ " ${need[*]} " == *" postgresql "* ]] && [ ! -e /etc/postgresql-common/createcluster.d/hitch.conf ] \
        && [ ! -e /etc/postgresql-common/createcluster.conf ]; then
        $sudo mkdir -p /etc/postgresql-common/createcluster.d
        echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.d/hitch.conf >/dev/null
    fi
    # An apt list older than the package archive gives 404s: refresh it once, then install.
    $sudo apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

if $fleet; then
    venv="${HITCH_FLEET_VENV:-$HOME/.cache/hitch/fleet-venv}"
    requirements="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fleet-requirements.txt"
    # Reinstalled only when the pinned list changed since the last install.
    if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$venv/.hitch-requirements"; then
        echo "setup: installing the fleet job's Python packages (Dask distributed, from PyPI) into $venv" >&2
        python3 -m venv "$venv" >&2
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
        cp "$requirements" "$venv/.hitch-requirements"
    fi
fi
