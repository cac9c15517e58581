#!/usr/bin/env bash
# A local Redis Cluster for the tests and CI (docs/operations.md#redis-cluster): six redis-server nodes on
# 127.0.0.1:7101–7106 (three masters, one replica each), nothing saved to disk, a short node timeout so a
# failover takes seconds.
#   scripts/redis-cluster.sh start    start what is not running, create the cluster if it is not, wait for ok
#   scripts/redis-cluster.sh stop     stop every node and remove their directory
#   scripts/redis-cluster.sh status   cluster_state of each node (exit 1 unless all answer ok)
# `start` is idempotent: on a running healthy cluster it only checks it. A node restarted after a test
# killed it rejoins from its nodes.conf (kept in its directory) as a replica.
set -euo pipefail

PORTS=(${REDIS_CLUSTER_PORTS:-7101 7102 7103 7104 7105 7106})
BASE=${REDIS_CLUSTER_DIR:-/tmp/waveline-redis-cluster}
NODE_TIMEOUT=${REDIS_CLUSTER_NODE_TIMEOUT:-2000}

cli() { redis-cli -h 127.0.0.1 -p "$1" "${@:2}"; }
up() { cli "$1" ping 2>/dev/null | grep -q PONG; }
state() { cli "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n 's/^cluster_state://p'; }
known() { cli "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n 's/^cluster_known_nodes://p'; }

start_node() {
  local port=$1 dir="$BASE/$1"
  mkdir -p "$dir"
  up "$port" && return 0
  redis-server --port "$port" --bind 127.0.0.1 --protected-mode no --daemonize yes \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout "$NODE_TIMEOUT" \
    --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" --pidfile "$dir/redis.pid"
}

wait_for() { # seconds, command…
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

all_up() { for p in "${PORTS[@]}"; do up "$p" || return 1; done; }
all_ok() { for p in "${PORTS[@]}"; do [[ "$(state "$p")" == ok ]] || return 1; done; }
all_known() { for p in "${PORTS[@]}"; do [[ "$(known "$p")" == "${#PORTS[@]}" ]] || return 1; done; }

case "${1:-}" in
  start)
    command -v redis-server >/dev/null || { echo "redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }
    for p in "${PORTS[@]}"; do start_node "$p"; done
    wait_for 20 all_up || { echo "the Redis Cluster nodes did not start (logs in $BASE/*/redis.log)" >&2; exit 1; }
    # Created once: a node that knows no other has never joined a cluster.
    if [[ "$(known "${PORTS[0]}")" == 1 ]]; then
      seeds=()
      for p in "${PORTS[@]}"; do seeds+=("127.0.0.1:$p"); done
      redis-cli --cluster create "${seeds[@]}" --cluster-replicas 1 --cluster-yes >"$BASE/create.log" 2>&1 ||
        { cat "$BASE/create.log" >&2; exit 1; }
    fi
    wait_for 60 all_known || { echo "the Redis Cluster nodes did not all meet" >&2; exit 1; }
    wait_for 60 all_ok || { echo "the Redis Cluster did not reach cluster_state:ok" >&2; exit 1; }
    echo "redis cluster ok on ${PORTS[*]}"
    ;;
  stop)
    for p in "${PORTS[@]}"; do cli "$p" shutdown nosave >/dev/null 2>&1 || true; done
    wait_for 20 bash -c "! redis-cli -h 127.0.0.1 -p ${PORTS[0]} ping >/dev/null 2>&1" || true
    rm -rf "$BASE"
    echo "redis cluster stopped"
    ;;
  status)
    rc=0
    for p in "${PORTS[@]}"; do
      s=$(state "$p")
      echo "127.0.0.1:$p ${s:-down}"
      [[ "$s" == ok ]] || rc=1
    done
    exit $rc
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 64
    ;;
esac
