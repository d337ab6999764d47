#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for trying the server on PostgreSQL by hand (the tests start their own).
#
#   eval "$(bash scripts/postgres.sh start)"      # creates and starts it, prints `export DOTFIGHT_DATABASE_URL=…`
#   python3 -m dotfight.cli serve                  # now on PostgreSQL
#   bash scripts/postgres.sh stop                  # stops it and removes every file
#
# The cluster lives in $DOTFIGHT_PG_DIR (default /tmp/dotfight-pg), listens only on a Unix socket in that
# directory and trusts local connections: it is for trying things out, never for real pages.
set -euo pipefail

dir="${DOTFIGHT_PG_DIR:-/tmp/dotfight-pg}"
port=5432
database=dotfight

bindir=""
if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    bindir="$(pg_config --bindir)"
else
    # Debian keeps the server programs in a versioned directory; take the newest.
    bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "PostgreSQL's server programs are not installed (apt-get install postgresql)" >&2
    exit 1
fi

# initdb refuses to run as root: as root, the programs run as the postgres account.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

case "${1:-}" in
start)
    if [ -e "$dir" ]; then
        echo "$dir already exists: stop that cluster first (bash $0 stop)" >&2
        exit 1
    fi
    mkdir -p "$dir"
    [ "$(id -u)" -ne 0 ] || chown postgres: "$dir"
    (cd "$dir" && as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale \
        >"$dir/initdb.log")
    (cd "$dir" && as_owner "$bindir/pg_ctl" start -D "$dir/data" -l "$dir/postgres.log" -w \
        -o "-c listen_addresses='' -k $dir -p $port" >/dev/null)
    (cd "$dir" && as_owner "$bindir/createdb" -h "$dir" -p "$port" -U postgres "$database")
    echo "export DOTFIGHT_DATABASE_URL='postgresql+psycopg://postgres@/$database?host=$dir&port=$port'"
    ;;
stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
        (cd "$dir" && as_owner "$bindir/pg_ctl" stop -D "$dir/data" -m fast -w >/dev/null)
    fi
    rm -rf "$dir"
    ;;
*)
    echo "usage: bash $0 start | stop   (directory: \$DOTFIGHT_PG_DIR, default /tmp/dotfight-pg)" >&2
    exit 2
    ;;
esac
