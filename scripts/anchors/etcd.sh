#!/usr/bin/env bash
# A three-member etcd cluster on loopback, an anchor of the YCSB report.
#
#   scripts/anchors/etcd.sh up [--fresh]   # members m1..m3, clients on 127.0.0.1:2379, :22379, :32379
#   scripts/anchors/etcd.sh down           # stop them (SIGTERM, then SIGKILL after 30 s)
#   scripts/anchors/etcd.sh status
#
# etcd is Debian's etcd-server package (installed with apt-get when /usr/bin/etcd is missing; the
# package's own service is not used). Peers on ports 2380, 22380, 32380; data and member.log under
# $QKV_ANCHORS_DIR/etcd/m<i> (default run/anchors). etcd is linearizable: a write is answered once
# a majority has appended it to its Raft log and fsynced that log (no setting here changes it),
# and jetcd's default reads go through the leader's read index. The YCSB binding is
# io.quorumkv.ycsb.anchors.EtcdDb (jetcd).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${QKV_ANCHORS_DIR:-$ROOT/run/anchors}/etcd"
ETCD="${ETCD_BIN:-/usr/bin/etcd}"
UP_TIMEOUT="${ETCD_UP_TIMEOUT:-60}"
MEMBERS=(m1 m2 m3)
CLIENT_PORTS=(2379 22379 32379)
PEER_PORTS=(2380 22380 32380)

die() {
  echo "etcd.sh: $*" >&2
  exit 1
}

ensure_etcd() {
  if [ -x "$ETCD" ]; then
    return
  fi
  echo "no $ETCD: installing Debian's etcd-server with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >/dev/null ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >/dev/null; } ||
    die "could not install etcd-server"
}

pid_of() { cat "$DIR/$1/etcd.pid" 2>/dev/null || true; }

# Whether PID is member NAME of this cluster (a PID file can outlive its process).
is_member() {
  local pid="$1" name="$2"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--data-dir $DIR/$name/data"
}

healthy() { curl -s -m 2 "http://127.0.0.1:$1/health" 2>/dev/null | grep -q '"health":"true"'; }

cmd_up() {
  local fresh=0 i name cluster=""
  [ "${1:-}" = "--fresh" ] && fresh=1
  ensure_etcd
  for i in 0 1 2; do
    is_member "$(pid_of "${MEMBERS[$i]}")" "${MEMBERS[$i]}" && die "${MEMBERS[$i]} is already running (etcd.sh down first)"
    curl -s -o /dev/null -m 1 "http://127.0.0.1:${CLIENT_PORTS[$i]}/health" && die "port ${CLIENT_PORTS[$i]} is taken"
    cluster="${cluster:+$cluster,}${MEMBERS[$i]}=http://127.0.0.1:${PEER_PORTS[$i]}"
  done
  [ "$fresh" = 1 ] && rm -rf "$DIR"
  echo "starting etcd $("$ETCD" --version | head -n 1 | sed 's/etcd Version: //'): 3 members, clients on 127.0.0.1:${CLIENT_PORTS[*]}, dir $DIR"
  for i in 0 1 2; do
    name="${MEMBERS[$i]}"
    mkdir -p "$DIR/$name"
    local state=new
    [ -d "$DIR/$name/data/member" ] && state=existing
    nohup "$ETCD" --name "$name" --data-dir "$DIR/$name/data" \
      --listen-client-urls "http://127.0.0.1:${CLIENT_PORTS[$i]}" \
      --advertise-client-urls "http://127.0.0.1:${CLIENT_PORTS[$i]}" \
      --listen-peer-urls "http://127.0.0.1:${PEER_PORTS[$i]}" \
      --initial-advertise-peer-urls "http://127.0.0.1:${PEER_PORTS[$i]}" \
      --initial-cluster "$cluster" --initial-cluster-token quorumkv-anchor \
      --initial-cluster-state "$state" >>"$DIR/$name/member.log" 2>&1 </dev/null &
    echo $! >"$DIR/$name/etcd.pid"
  done
  local deadline=$((SECONDS + UP_TIMEOUT))
  for i in 0 1 2; do
    until healthy "${CLIENT_PORTS[$i]}"; do
      if ! kill -0 "$(pid_of "${MEMBERS[$i]}")" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
        tail -n 20 "$DIR/${MEMBERS[$i]}/member.log" >&2 || true
        cmd_down
        die "${MEMBERS[$i]} did not become healthy"
      fi
      sleep 0.5
    done
  done
  echo "etcd ready: http://127.0.0.1:2379, http://127.0.0.1:22379, http://127.0.0.1:32379 (Raft log fsynced per write)"
}

cmd_down() {
  local name pid waited
  for name in "${MEMBERS[@]}"; do
    pid="$(pid_of "$name")"
    if is_member "$pid" "$name"; then
      kill -TERM "$pid" 2>/dev/null || true
      waited=0
      while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 300 ]; do sleep 0.1; waited=$((waited + 1)); done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$DIR/$name/etcd.pid"
  done
  echo "etcd in $DIR stopped"
}

cmd_status() {
  local i state
  for i in 0 1 2; do
    state=down
    is_member "$(pid_of "${MEMBERS[$i]}")" "${MEMBERS[$i]}" && state="running (pid $(pid_of "${MEMBERS[$i]}"))"
    healthy "${CLIENT_PORTS[$i]}" && state="$state, healthy"
    echo "${MEMBERS[$i]} 127.0.0.1:${CLIENT_PORTS[$i]}: $state"
  done
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) die "usage: scripts/anchors/etcd.sh up [--fresh] | down | status" ;;
esac
