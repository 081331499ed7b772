#!/usr/bin/env bash
# A real Redis Cluster on 127.0.0.1 with three primaries and no replicas, for the sharded waiting room's tests
# and benchmark: three redis-server processes in cluster mode, joined by `redis-cli --cluster create`, which
# spreads the 16,384 hash slots over them. Idempotent: `start` leaves a cluster that answers as it is.
#
#   scripts/lib/redis-cluster.sh start | stop | status | env
#   (also `scripts/services cluster start|stop|status|env`)
#
#   ONSALE_REDIS_CLUSTER_PORT (17101): the first primary's port; the others are +1 and +2
#   ONSALE_DATA: where its data, logs and pid files live (default $REPO/.data), under redis-cluster/
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${ONSALE_DATA:-$REPO/.data}/redis-cluster"
BASE="${ONSALE_REDIS_CLUSTER_PORT:-17101}"
PORTS=("$BASE" "$((BASE + 1))" "$((BASE + 2))")

log() { printf '[redis-cluster] %s\n' "$*" >&2; }
die() { printf '[redis-cluster] ERROR: %s\n' "$*" >&2; exit 1; }
ping() { [[ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" == PONG ]]; }
cluster_ok() { timeout 3 redis-cli -h 127.0.0.1 -p "${PORTS[0]}" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }
nodes_env() { local IFS=,; echo "REDIS_CLUSTER_NODES=${PORTS[*]/#/127.0.0.1:}"; }

start() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || die "redis-server and redis-cli are needed (apt-get install redis-server)"
  if cluster_ok; then log "running on ${PORTS[*]}"; return 0; fi
  local p
  for p in "${PORTS[@]}"; do
    mkdir -p "$DIR/$p"
    ping "$p" && continue
    # A node that never joined (or a half-made cluster) starts over: its nodes.conf would pin the old slots.
    rm -f "$DIR/$p/nodes.conf"
    redis-server --bind 127.0.0.1 --port "$p" --dir "$DIR/$p" --save '' --appendonly no \
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 \
      --daemonize yes --pidfile "$DIR/$p/redis.pid" --logfile "$DIR/$p/redis.log" 9>&-
  done
  for p in "${PORTS[@]}"; do
    for _ in $(seq 50); do ping "$p" && break; sleep 0.1; done
    ping "$p" || die "redis on $p did not answer; see $DIR/$p/redis.log"
  done
  if ! timeout 3 redis-cli -p "${PORTS[0]}" cluster info | grep -q '^cluster_slots_assigned:16384'; then
    for p in "${PORTS[@]}"; do redis-cli -p "$p" flushall >/dev/null; redis-cli -p "$p" cluster reset hard >/dev/null; done
    redis-cli --cluster create "${PORTS[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >"$DIR/create.log" 2>&1 \
      || { cat "$DIR/create.log" >&2; die "cluster create failed"; }
  fi
  for _ in $(seq 100); do cluster_ok && break; sleep 0.1; done
  cluster_ok || die "the cluster did not reach state ok"
  log "three primaries on ${PORTS[*]}"
}

stop() {
  local p pid
  for p in "${PORTS[@]}"; do
    pid="$(cat "$DIR/$p/redis.pid" 2>/dev/null || true)"
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && log "stopped $p (pid $pid)"
    rm -f "$DIR/$p/redis.pid"
  done
  return 0
}

case "${1:-}" in
  # Test files running side by side may start it at once: the first builds it, the others wait and find it up.
  start) mkdir -p "$DIR"; exec 9>"$DIR/start.lock"; flock 9; start; nodes_env ;;
  stop) stop ;;
  status) if cluster_ok; then log "ok on ${PORTS[*]}"; else log "not running"; exit 1; fi ;;
  env) nodes_env ;;
  *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
