#!/usr/bin/env bash
# Throwaway PostgreSQL server for the test suite (Debian's packages, no Docker).
#   postgres.sh start DIR PORT   -> last stdout line is the DATABASE_URL
#   postgres.sh stop DIR
# CI runs as root and passes a DIR under /tmp: initdb/postgres refuse to run as
# root, so the cluster belongs to the `postgres` user, which must be able to
# reach DIR (parents get o+x if needed). fsync is off: the data is disposable.
set -euo pipefail

usage() { echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 2; }
log() { echo "postgres.sh: $*" >&2; }

is_root() { [ "$(id -u)" -eq 0 ]; }

# /usr/local/bin may hold a client-only pg_ctl, so use the server's own bin dir.
find_bin() {
    local initdb
    initdb=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$initdb" ] && dirname "$initdb"
}

as_pg() {
    if is_root; then runuser -u postgres -- "$@"; else "$@"; fi
}

ensure_installed() {
    find_bin >/dev/null && return 0
    local sudo=""
    is_root || sudo="sudo"
    log "installing Debian's postgresql package"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >&2
    find_bin >/dev/null || { log "initdb still missing after install"; exit 1; }
}

# The postgres user needs search permission on every parent of DIR.
open_parents() {
    local path="" part
    local -a parts
    IFS=/ read -r -a parts <<<"${1#/}"
    for part in "${parts[@]:0:${#parts[@]}-1}"; do
        path="$path/$part"
        if ! runuser -u postgres -- test -x "$path"; then
            log "chmod o+x $path so the postgres user can reach the data dir"
            chmod o+x "$path"
        fi
    done
}

is_running() {
    [ -f "$DIR/PG_VERSION" ] && as_pg "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1
}

cmd_start() {
    [[ "$PORT" =~ ^[0-9]+$ ]] || usage
    [[ "$DIR" != *"'"* ]] || { log "DIR must not contain a single quote"; exit 2; }
    ensure_installed
    BIN=$(find_bin)

    if [ ! -f "$DIR/PG_VERSION" ]; then
        mkdir -p "$DIR"
        chmod 700 "$DIR"
        if is_root; then
            chown postgres:postgres "$DIR"
            open_parents "$DIR"
        fi
        log "initdb into $DIR"
        as_pg "$BIN/initdb" -D "$DIR" -A trust -U postgres --encoding=UTF8 --no-locale >&2
    fi

    if is_running; then
        log "already running in $DIR"
    else
        log "starting on 127.0.0.1:$PORT"
        if ! as_pg "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w \
            -o "-p $PORT -k '$DIR' -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
            start >&2; then
            tail -n 30 "$DIR/server.log" >&2 || true
            exit 1
        fi
    fi

    # CREATEDB: Django's test runner creates test_console itself.
    "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 >&2 <<'SQL'
SELECT 'CREATE ROLE console LOGIN CREATEDB PASSWORD ''console'''
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'console')\gexec
SELECT 'CREATE DATABASE console OWNER console'
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'console')\gexec
SQL

    echo "postgres://console:console@127.0.0.1:$PORT/console"
}

cmd_stop() {
    BIN=$(find_bin) || { log "PostgreSQL server not installed; nothing to stop"; return 0; }
    if is_running; then
        as_pg "$BIN/pg_ctl" -D "$DIR" -m fast stop >&2
    else
        log "not running in $DIR"
    fi
}

[ $# -ge 2 ] || usage
SUBCMD=$1
DIR=$(realpath -m -- "$2")
# Tools run as postgres complain if they cannot access the caller's cwd.
cd /

case "$SUBCMD" in
    start) [ $# -eq 3 ] || usage; PORT=$3; cmd_start ;;
    stop) [ $# -eq 2 ] || usage; cmd_stop ;;
    *) usage ;;
esac
