# Sourced by the checks that need a PostgreSQL server (check-history-postgres.sh, check-fleet.sh):
# `private_postgres_start` starts a private cluster of Debian's `postgresql` package in a temporary
# directory, owned by an unprivileged user (postgres when run as root), listening on a Unix socket in
# that directory only (no TCP at all, so no network login of any kind), with one database, and sets
# PRIVATE_POSTGRES_URL to it; `private_postgres_stop` stops it and removes the directory (call it from
# the caller's EXIT trap, so it runs whatever happened). No system service is started.
private_postgres_start() {
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "no PostgreSQL server binaries under /usr/lib/postgresql (Debian package postgresql)"; return 1; }
    PRIVATE_POSTGRES_BIN=$bin
    PRIVATE_POSTGRES_DIR=$(mktemp -d /tmp/hitch-pg.XXXXXX)
    private_postgres_as_owner() { "$@"; }
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$PRIVATE_POSTGRES_DIR"
        private_postgres_as_owner() { runuser -u postgres -- "$@"; }
    fi
    chmod 700 "$PRIVATE_POSTGRES_DIR"
    local work=$PRIVATE_POSTGRES_DIR port=$((20000 + RANDOM % 20000))
    private_postgres_as_owner "$bin/initdb" -D "$work/data" -U hitch --auth=trust -E UTF8 --no-locale >"$work/initdb.log" 2>&1 \
        || { cat "$work/initdb.log"; return 1; }
    private_postgres_as_owner "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w -t 60 \
        -o "-c listen_addresses='' -c unix_socket_directories='$work' -p $port -c fsync=off -c max_connections=40" start >/dev/null \
        || { cat "$work/server.log"; return 1; }
    private_postgres_as_owner "$bin/createdb" -h "$work" -p "$port" -U hitch hitch_test || return 1
    PRIVATE_POSTGRES_URL="postgresql://hitch@/hitch_test?host=$work&port=$port"
}

private_postgres_stop() {
    [ -n "${PRIVATE_POSTGRES_DIR:-}" ] || return 0
    private_postgres_as_owner "$PRIVATE_POSTGRES_BIN/pg_ctl" -D "$PRIVATE_POSTGRES_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$PRIVATE_POSTGRES_DIR"
    PRIVATE_POSTGRES_DIR=
}
