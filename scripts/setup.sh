#!/usr/bin/env bash
# Installs what a fresh machine (Swift toolchain only) lacks: libunwind's headers and
# development links (Debian libunwind-dev); zlib's (zlib1g-dev), which the importers (HitchImport,
# linked by `hitch`) inflate Perfetto traces with; for `hitch history`, SQLite's and libpq's headers (libsqlite3-dev,
# libpq-dev; hitch loads the libraries at run time) and the PostgreSQL server its tests start privately (postgresql; the package's own
# cluster service is not needed and not used). Idempotent and quiet when nothing is missing.
# Sourced by scripts/demo.sh and scripts/test.sh; also runnable on its own.
set -euo pipefail

need=()
for package in libunwind-dev zlib1g-dev libsqlite3-dev libpq-dev postgresql "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || need+=("$package")
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
