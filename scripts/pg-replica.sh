#!/usr/bin/env bash
# A Postgres primary and a streaming replica of it, of our own, for the replica tests and CI
# (docs/operations.md#postgres-read-replicas): the machine's Postgres is never reconfigured.
#
#   bash scripts/pg-replica.sh start    # idempotent: starts what is not running, waits until both answer
#   bash scripts/pg-replica.sh stop     # stops both (the data directories stay, for a quick restart)
#   bash scripts/pg-replica.sh status   # exit 0 when both answer and the replica is in recovery
#   bash scripts/pg-replica.sh stop-replica  # stops the replica only (the tests of a replica gone down)
#
# The primary (initdb, wal_level=replica, trust auth including replication) listens on
# 127.0.0.1:$PG_REPLICA_PRIMARY_PORT (5440); the replica, made by `pg_basebackup -R`, on
# 127.0.0.1:$PG_REPLICA_PORT (5441), hot standby, replaying every change $PG_REPLICA_DELAY (2s) late:
# a known lag the read-your-writes tests rely on. Data directories under $PG_REPLICA_DIR
# (/tmp/waveline-pg-replica), owned by the postgres user (Postgres refuses to run as root).
set -euo pipefail

PRIMARY_PORT="${PG_REPLICA_PRIMARY_PORT:-5440}"
REPLICA_PORT="${PG_REPLICA_PORT:-5441}"
DELAY="${PG_REPLICA_DELAY:-2s}"
BASE="${PG_REPLICA_DIR:-/tmp/waveline-pg-replica}"
BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}"
PRIMARY="$BASE/primary"
REPLICA="$BASE/replica"

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
answers() { "$BIN/pg_isready" -h 127.0.0.1 -p "$1" -q; }
running() { [ -f "$1/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$1" status >/dev/null 2>&1; }
wait_for() {
  for _ in $(seq 1 150); do
    answers "$1" && return 0
    sleep 0.2
  done
  echo "Postgres on 127.0.0.1:$1 does not answer (log: $2)" >&2
  return 1
}

start() {
  mkdir -p "$BASE"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$BASE"
  if [ ! -f "$PRIMARY/PG_VERSION" ]; then
    rm -rf "$PRIMARY" "$REPLICA"
    as_pg "$BIN/initdb" -D "$PRIMARY" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
    cat >>"$PRIMARY/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PRIMARY_PORT
unix_socket_directories = '$BASE'
wal_level = replica
max_wal_senders = 5
wal_keep_size = '256MB'
fsync = off
synchronous_commit = on
EOF
    # initdb's pg_hba.conf (with --auth=trust) already trusts local and host replication connections.
    echo "host all all 127.0.0.1/32 trust" >>"$PRIMARY/pg_hba.conf"
    echo "host replication all 127.0.0.1/32 trust" >>"$PRIMARY/pg_hba.conf"
  fi
  if ! running "$PRIMARY"; then
    as_pg "$BIN/pg_ctl" -D "$PRIMARY" -l "$BASE/primary.log" -w start >/dev/null
  fi
  wait_for "$PRIMARY_PORT" "$BASE/primary.log"

  if [ ! -f "$REPLICA/standby.signal" ]; then
    rm -rf "$REPLICA"
    as_pg "$BIN/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$REPLICA" -R -X stream --checkpoint=fast
    cat >>"$REPLICA/postgresql.conf" <<EOF
port = $REPLICA_PORT
hot_standby = on
recovery_min_apply_delay = '$DELAY'
hot_standby_feedback = on
EOF
  fi
  if ! running "$REPLICA"; then
    as_pg "$BIN/pg_ctl" -D "$REPLICA" -l "$BASE/replica.log" -w start >/dev/null
  fi
  wait_for "$REPLICA_PORT" "$BASE/replica.log"
  status >/dev/null || {
    echo "the replica on 127.0.0.1:$REPLICA_PORT answers but is not in recovery" >&2
    return 1
  }
  echo "postgres primary 127.0.0.1:$PRIMARY_PORT, streaming replica 127.0.0.1:$REPLICA_PORT (apply delay $DELAY)"
}

stop() {
  for dir in "$REPLICA" "$PRIMARY"; do
    if running "$dir"; then as_pg "$BIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null; fi
  done
  echo "stopped"
}

stop_replica() {
  if running "$REPLICA"; then as_pg "$BIN/pg_ctl" -D "$REPLICA" -m immediate -w stop >/dev/null; fi
  echo "replica stopped"
}

status() {
  local primary=down replica=down
  answers "$PRIMARY_PORT" && primary=up
  if answers "$REPLICA_PORT" &&
    [ "$(as_pg "$BIN/psql" -h 127.0.0.1 -p "$REPLICA_PORT" -U postgres -d postgres -Atc 'select pg_is_in_recovery()')" = t ]; then
    replica=up
  fi
  echo "primary 127.0.0.1:$PRIMARY_PORT $primary; replica 127.0.0.1:$REPLICA_PORT $replica"
  [ "$primary" = up ] && [ "$replica" = up ]
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  stop-replica) stop_replica ;;
  *)
    echo "usage: $0 start|stop|status|stop-replica" >&2
    exit 2
    ;;
esac
