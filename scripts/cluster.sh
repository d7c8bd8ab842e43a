#!/usr/bin/env bash
# Runs a local QuorumKV cluster: N `java -jar service/target/quorumkv.jar` nodes on 127.0.0.1.
#
#   scripts/cluster.sh up [--nodes N] [--backend lsm|h2|derby] [--placement rendezvous|consistent-hash]
#                         [--base-port P] [--dir D] [--fresh] [--tls CERTS | --insecure] [--aot]
#   scripts/cluster.sh down|status [--dir D]
#   scripts/cluster.sh kill NODE [--dir D]      # SIGKILL of one node (fault runs)
#   scripts/cluster.sh restart NODE [--dir D]   # start it again with the cluster's settings
#   scripts/cluster.sh add [--dir D]            # start one more node, a newcomer that waits
#                                               # to be joined: scripts/qkv join <its URL>
#
# Node i listens on port P+i-1 (default P=8081), serves Actuator on port P+i-1+1000 (9081...;
# management.server.port), keeps its data in D/node<i>/data and logs to D/node<i>/node.log
# (default D=./run/cluster under the repository). `up` persists the settings in D/cluster.env so
# the other commands need only --dir, and lists the nodes' URLs in D/nodes and their management
# URLs in D/management (for scripts/qkv --cluster-dir D). The cluster secret is generated per
# cluster into D/secret (mode 600) and handed to the nodes through the environment, never on the
# command line and never printed; so is an admin API key, D/admin-key (mode 600), of which the
# nodes get only the SHA-256 (docs/security.md). `up --fresh` deletes the nodes' earlier data
# first.
# Secure by default: the API is served over TLS, with mutual TLS between the nodes, and clients
# authenticate with an API key. `up` makes a CA of its own for the cluster in D/ca (its key stays
# there), a node certificate in D/certs for the cluster id in D/cluster-id (scripts/dev-certs.sh),
# and a read-write API key in D/api-key (mode 600; the nodes get its SHA-256); D/ca.crt is the CA
# for clients and for scripts/qkv --cluster-dir D:
#   curl --cacert D/ca.crt -H "Authorization: Bearer $(cat D/api-key)" https://127.0.0.1:8081/v0/entity?id=k
# `up --tls CERTS` takes the PEM files CERTS/ca.crt, CERTS/node.crt and CERTS/node.key instead
# (the nodes' quorumkv.cluster.id must then be the one in the certificate: QKV_NODE_ARGS). Node
# URLs are https:// (Actuator's too: its port takes the server's TLS). `up --insecure` serves plain
# HTTP with the public API open to anyone on this host (the load and benchmark scripts use it:
# they measure the store, not TLS; scripts/tls-cost.sh measures TLS). QKV_NODE_ARGS that set
# quorumkv.security.public-api themselves keep their setting.
# The nodes `up` starts seed the cluster (quorumkv.cluster.nodes); a node `add` starts is given
# them as its seed list and serves nothing until `scripts/qkv join` adds it to the ring
# (docs/membership.md).
# `up` copies the build (QKV_JAR) into D/quorumkv.jar and every node of the cluster, `add` and
# `restart` included, runs that copy: a JVM loads classes from its jar lazily, so rebuilding
# service/target/quorumkv.jar under running nodes would make their later requests hang on
# NoClassDefFoundError. A new build runs after `down` and `up`.
# `up --aot` first trains an AOT cache (Java 25, JEP 483/515) for that copy as the Dockerfile does:
# the jar extracted into D/app, one run that serves a short workload through its own front door
# (quorumkv.aot-training) and writes D/quorumkv.aot; every node then starts with
# -XX:AOTCache=D/quorumkv.aot: classes loaded and linked and methods profiled from the start, so a
# node reaches its steady state sooner (docs/performance.md, "Warm-up").
#
# Environment: JAVA_HOME (its bin/java is used when set), QKV_JAVA_OPTS (JVM options, default
# "-Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10": docs/performance.md, "Collectors"), QKV_NODE_ARGS (extra Spring arguments for every node), QKV_JAR (another
# build of the service, for A/B runs; default service/target/quorumkv.jar),
# QKV_UP_TIMEOUT (seconds `up` waits for readiness, default 120: JVMs start slowly on busy
# cores), QKV_DOWN_TIMEOUT (seconds a node gets to stop after SIGTERM before SIGKILL, default 30).
#
# Every node gets one event loop per core of this host, as a node alone would
# (-Dreactor.netty.ioWorkerCount; one given in QKV_JAVA_OPTS wins): the nodes share the cores,
# and a node the load aims at uses the cores the others leave idle.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAR="${QKV_JAR:-$ROOT/service/target/quorumkv.jar}"

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
  exit "${1:-2}"
}

java_bin() {
  if [ -n "${JAVA_HOME:-}" ]; then
    [ -x "$JAVA_HOME/bin/java" ] || die "JAVA_HOME=$JAVA_HOME has no bin/java"
    echo "$JAVA_HOME/bin/java"
  else
    command -v java >/dev/null 2>&1 || die "no java on PATH: install JDK 25 and set JAVA_HOME"
    command -v java
  fi
}

check_java() {
  local major
  major="$("$JAVA" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
  if [ -z "$major" ] || [ "$major" -lt 25 ]; then
    die "QuorumKV needs Java 25 or newer, $JAVA is ${major:-unknown}: export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64"
  fi
}

# Event loops per node: one per core of this host. With a share of the cores each (cores / N)
# a node that coordinates most requests (a client that talks to one node, as perf-goals.sh's
# wrk does) could not use the cores the others leave idle: three nodes on two cores served
# 29,377 PUT/s at 2/3 with one loop each and 37,058 with two (node 1 used 1.03 and 1.22 cores;
# docs/operations.md, "Event loops").
event_loops() {
  nproc 2>/dev/null || getconf _NPROCESSORS_ONLN
}

# Whether QKV_JAVA_OPTS names the event loops itself (then it wins over event_loops).
loops_given() {
  [[ "$JAVA_OPTS" == *-Dreactor.netty.ioWorkerCount=* ]]
}

check_jar() {
  [ -f "$JAR" ] || die "$JAR is missing: run ./mvnw -DskipTests package first"
}

# The cluster's own copy of the build (see the header); made by `up`, or on first use by a
# cluster that an earlier version of this script started.
node_jar() {
  if [ ! -f "$DIR/quorumkv.jar" ]; then
    check_jar
    cp "$JAR" "$DIR/quorumkv.jar.tmp" && mv "$DIR/quorumkv.jar.tmp" "$DIR/quorumkv.jar"
  fi
  echo "$DIR/quorumkv.jar"
}

# An AOT cache for the cluster's copy of the build (see the header): the jar extracted into
# D/app (the cache needs the class path it was trained on) and one training run, bounded in time.
train_aot_cache() {
  local log="$DIR/aot-training.log"
  echo "training an AOT cache for $DIR/quorumkv.jar (log: $log)"
  rm -rf "$DIR/app" "$DIR/aot-training"
  "$JAVA" -Djarmode=tools -jar "$(node_jar)" extract --destination "$DIR/app" >"$log" 2>&1 \
    || die "could not extract $DIR/quorumkv.jar for the AOT cache (see $log)"
  timeout 600 "$JAVA" -XX:AOTCacheOutput="$DIR/quorumkv.aot" -Dquorumkv.aot-training=true \
    -jar "$DIR/app/quorumkv.jar" --quorumkv.storage.path="$DIR/aot-training" --server.port=0 \
    --management.server.port=0 >>"$log" 2>&1 || die "the AOT training run failed (see $log)"
  rm -rf "$DIR/aot-training"
  [ -f "$DIR/quorumkv.aot" ] || die "the AOT training run made no cache (see $log)"
}

# --- settings -----------------------------------------------------------------------------

NODES=3
SEEDS=""
BACKEND=lsm
PLACEMENT=rendezvous
BASE_PORT=8081
DIR="$ROOT/run/cluster"
JAVA_OPTS="${QKV_JAVA_OPTS:--Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10}"
NODE_ARGS="${QKV_NODE_ARGS:-}"
FRESH=0
TLS_DIR=""
INSECURE=0
CLUSTER_ID=""
AOT=0

parse_options() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --nodes) NODES="${2:?--nodes needs a value}"; shift 2 ;;
      --backend) BACKEND="${2:?--backend needs a value}"; shift 2 ;;
      --placement) PLACEMENT="${2:?--placement needs a value}"; shift 2 ;;
      --base-port) BASE_PORT="${2:?--base-port needs a value}"; shift 2 ;;
      --dir) DIR="${2:?--dir needs a value}"; shift 2 ;;
      --fresh) FRESH=1; shift ;;
      --tls) TLS_DIR="${2:?--tls needs a folder}"; shift 2 ;;
      --insecure) INSECURE=1; shift ;;
      --aot) AOT=1; shift ;;
      -h | --help) usage 0 ;;
      *) die "unknown option: $1 (see --help)" ;;
    esac
  done
  [[ "$NODES" =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a positive number, not $NODES"
  if ! [[ "$BASE_PORT" =~ ^[1-9][0-9]*$ ]] || [ $((BASE_PORT + NODES - 1 + 1000)) -gt 65535 ]; then
    die "--base-port must leave room for $NODES ports, and their management ports 1000 above, below 65536"
  fi
  case "$BACKEND" in lsm | h2 | derby) ;; *) die "--backend must be lsm, h2 or derby, not $BACKEND" ;; esac
  case "$PLACEMENT" in rendezvous | consistent-hash) ;;
    *) die "--placement must be rendezvous or consistent-hash, not $PLACEMENT" ;;
  esac
  [ -z "$TLS_DIR" ] || [ "$INSECURE" = 0 ] || die "--tls and --insecure exclude each other"
  mkdir -p "$DIR"
  DIR="$(cd "$DIR" && pwd)"
  if [ -n "$TLS_DIR" ]; then
    for f in ca.crt node.crt node.key; do
      [ -r "$TLS_DIR/$f" ] || die "--tls $TLS_DIR has no $f (scripts/dev-certs.sh makes them)"
    done
    TLS_DIR="$(cd "$TLS_DIR" && pwd)"
  fi
}

save_settings() {
  {
    printf 'NODES=%q\n' "$NODES"
    printf 'SEEDS=%q\n' "${SEEDS:-$NODES}"
    printf 'BACKEND=%q\n' "$BACKEND"
    printf 'PLACEMENT=%q\n' "$PLACEMENT"
    printf 'BASE_PORT=%q\n' "$BASE_PORT"
    printf 'JAVA_OPTS=%q\n' "$JAVA_OPTS"
    printf 'NODE_ARGS=%q\n' "$NODE_ARGS"
    printf 'TLS_DIR=%q\n' "$TLS_DIR"
    printf 'INSECURE=%q\n' "$INSECURE"
    printf 'CLUSTER_ID=%q\n' "$CLUSTER_ID"
    printf 'AOT=%q\n' "$AOT"
  } >"$DIR/cluster.env"
}

load_settings() {
  [ -f "$DIR/cluster.env" ] || die "no cluster in $DIR (run: scripts/cluster.sh up --dir $DIR)"
  INSECURE=""
  CLUSTER_ID=""
  # shellcheck source=/dev/null
  . "$DIR/cluster.env"
  SEEDS="${SEEDS:-$NODES}"
  AOT="${AOT:-0}"
  # A cluster an earlier version of this script started: TLS as it had it, API keys off.
  INSECURE="${INSECURE:-1}"
}

# The cluster's own CA, node certificate, cluster id and API key (see the header), made once
# per D and kept across `up`s, so that clients and stored data stay valid.
make_credentials() {
  [ -s "$DIR/cluster-id" ] || (umask 077 && echo "local-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')" >"$DIR/cluster-id")
  CLUSTER_ID="$(cat "$DIR/cluster-id")"
  if [ ! -f "$DIR/ca/ca.crt" ]; then
    "$ROOT/scripts/dev-certs.sh" ca "$DIR/ca" >/dev/null || die "could not make a CA in $DIR/ca"
  fi
  if [ ! -f "$DIR/certs/node.crt" ]; then
    "$ROOT/scripts/dev-certs.sh" node "$DIR/ca" "$DIR/certs" node "$CLUSTER_ID" IP:127.0.0.1 DNS:localhost \
      >/dev/null || die "could not make the node certificate in $DIR/certs"
  fi
  TLS_DIR="$DIR/certs"
}

# The Spring arguments of client authentication: the public API needs an API key (D/api-key, of
# which the nodes get the SHA-256), unless the node arguments choose themselves.
auth_args() {
  [ "${INSECURE:-0}" = 0 ] || return 0
  echo "--quorumkv.security.api-keys.cluster-app.sha256=$(sha256sum <"$DIR/api-key" | cut -c1-64)" \
    "--quorumkv.security.api-keys.cluster-app.access=read-write"
  [[ "$NODE_ARGS" == *quorumkv.security.public-api* ]] || echo "--quorumkv.security.public-api=authenticated"
}

port_of() { echo $((BASE_PORT + $1 - 1)); }
url_of() { echo "$([ -n "${TLS_DIR:-}" ] && echo https || echo http)://127.0.0.1:$(port_of "$1")"; }
management_url_of() {
  echo "$([ -n "${TLS_DIR:-}" ] && echo https || echo http)://127.0.0.1:$(($(port_of "$1") + 1000))"
}
pid_file() { echo "$DIR/node$1/node.pid"; }

# The seed list: the nodes `up` started. A node reads it on its first start only.
node_urls() {
  local i urls=""
  for ((i = 1; i <= ${SEEDS:-$NODES}; i++)); do
    urls="${urls:+$urls,}$(url_of "$i")"
  done
  echo "$urls"
}

pid_of() {
  local file
  file="$(pid_file "$1")"
  if [ -f "$file" ]; then cat "$file"; fi
}

# Whether process PID is node I of this cluster: a PID file can outlive its process, and the
# PID can by then belong to another process, which must never get our signals.
is_node_process() {
  local pid="$1" i="$2" cmdline
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmdline" == *"--quorumkv.storage.path=$DIR/node$i/data "* ]]
}

alive() {
  is_node_process "$(pid_of "$1")" "$1"
}

http_code() {
  local -a tls=()
  [ -z "${TLS_DIR:-}" ] || tls=(--cacert "$TLS_DIR/ca.crt")
  curl -s "${tls[@]}" -o /dev/null -m 2 -w '%{http_code}' "$1" 2>/dev/null || true
}

# The Spring arguments of TLS: one SSL bundle for the server and the calls to peers, mutual TLS.
tls_args() {
  [ -n "${TLS_DIR:-}" ] || return 0
  local b=--spring.ssl.bundle.pem.quorumkv
  [ -z "${CLUSTER_ID:-}" ] || echo "--quorumkv.cluster.id=$CLUSTER_ID"
  echo "$b.keystore.certificate=file:$TLS_DIR/node.crt $b.keystore.private-key=file:$TLS_DIR/node.key" \
    "$b.truststore.certificate=file:$TLS_DIR/ca.crt $b.reload-on-update=true --server.ssl.bundle=quorumkv" \
    "--server.ssl.client-auth=want --quorumkv.cluster.tls.bundle=quorumkv --quorumkv.cluster.tls.mutual=true"
}

check_node_arg() {
  if ! [[ "${1:-}" =~ ^[1-9][0-9]*$ ]] || [ "$1" -gt "$NODES" ]; then
    die "NODE must be 1..$NODES, not '${1:-}'"
  fi
}

# --- commands -------------------------------------------------------------------------------

start_node() {
  local i="$1" dir port
  dir="$DIR/node$i"
  port="$(port_of "$i")"
  mkdir -p "$dir/data"
  if alive "$i"; then
    die "node $i is already running (pid $(pid_of "$i"))"
  fi
  if [ "$(http_code "$(url_of "$i")/v0/status")" != "000" ]; then
    die "port $port is already taken by another process"
  fi
  local -a java_opts node_args tls_node_args auth_node_args
  read -r -a java_opts <<<"$JAVA_OPTS"
  read -r -a node_args <<<"$NODE_ARGS"
  read -r -a tls_node_args <<<"$(tls_args | tr '\n' ' ')"
  read -r -a auth_node_args <<<"$(auth_args | tr '\n' ' ')"
  loops_given || java_opts+=("-Dreactor.netty.ioWorkerCount=$(event_loops)")
  local jar
  jar="$(node_jar)"
  if [ "${AOT:-0}" = 1 ]; then
    [ -f "$DIR/quorumkv.aot" ] || train_aot_cache
    java_opts+=("-XX:AOTCache=$DIR/quorumkv.aot")
    jar="$DIR/app/quorumkv.jar"
  fi
  {
    echo "=== $(date -u +%FT%TZ) starting node $i on port $port"
  } >>"$dir/node.log"
  QUORUMKV_CLUSTER_SECRET="$(cat "$DIR/secret")" nohup "$JAVA" "${java_opts[@]}" -jar "$jar" \
    --server.port="$port" \
    --management.server.port="$((port + 1000))" \
    --management.server.address=127.0.0.1 \
    --management.endpoints.web.exposure.include=health,metrics,prometheus,quorumkv \
    --quorumkv.security.api-keys.cluster-admin.sha256="$(sha256sum <"$DIR/admin-key" | cut -c1-64)" \
    --quorumkv.security.api-keys.cluster-admin.access=admin \
    --quorumkv.storage.backend="$BACKEND" \
    --quorumkv.storage.path="$dir/data" \
    --quorumkv.cluster.nodes="$(node_urls)" \
    --quorumkv.cluster.self="$(url_of "$i")" \
    --quorumkv.cluster.placement="$PLACEMENT" \
    "${tls_node_args[@]}" "${auth_node_args[@]}" "${node_args[@]}" >>"$dir/node.log" 2>&1 </dev/null &
  echo $! >"$(pid_file "$i")"
}

wait_ready() {
  local timeout="${QKV_UP_TIMEOUT:-120}" deadline i pending
  deadline=$((SECONDS + timeout))
  while :; do
    pending=""
    for i in "$@"; do
      # Just started by us: the PID is ours even before the JVM's command line is in /proc.
      if ! kill -0 "$(pid_of "$i")" 2>/dev/null; then
        echo "node $i exited while starting; last lines of $DIR/node$i/node.log:" >&2
        tail -n 20 "$DIR/node$i/node.log" >&2 || true
        return 1
      fi
      if [ "$(http_code "$(url_of "$i")/v0/status")" != 200 ] ||
        [ "$(http_code "$(management_url_of "$i")/actuator/health/readiness")" != 200 ]; then
        pending="$pending $i"
      fi
    done
    [ -z "$pending" ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "nodes not ready after ${timeout}s:$pending (logs: $DIR/node<i>/node.log)" >&2
      return 1
    fi
    sleep 0.5
  done
}

stop_node() {
  local i="$1" pid waited=0 timeout="${QKV_DOWN_TIMEOUT:-30}"
  pid="$(pid_of "$i")"
  if is_node_process "$pid" "$i"; then
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((timeout * 10)) ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "node $i (pid $pid) still running after ${timeout}s: SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$(pid_file "$i")"
}

cmd_up() {
  JAVA="$(java_bin)"
  check_java
  check_jar
  local i old_nodes=0 running=""
  if [ -f "$DIR/cluster.env" ]; then
    # shellcheck source=/dev/null
    old_nodes="$(. "$DIR/cluster.env" && echo "$NODES")"
    for ((i = 1; i <= old_nodes; i++)); do
      if alive "$i"; then
        running="$running $i"
      fi
    done
    [ -z "$running" ] ||
      die "a cluster is already running in $DIR (nodes:$running): run scripts/cluster.sh down --dir $DIR"
  fi
  if [ "$FRESH" = 1 ]; then
    for ((i = 1; i <= old_nodes || i <= NODES; i++)); do
      rm -rf "$DIR/node$i/data"
    done
  fi
  SEEDS="$NODES"
  if [ ! -s "$DIR/secret" ]; then
    (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$DIR/secret")
  fi
  if [ ! -s "$DIR/admin-key" ]; then
    (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$DIR/admin-key")
  fi
  CLUSTER_ID=""
  if [ "$INSECURE" = 0 ]; then
    [ -n "$TLS_DIR" ] || make_credentials
    if [ ! -s "$DIR/api-key" ]; then
      (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$DIR/api-key")
    fi
  fi
  save_settings
  rm -f "$DIR/quorumkv.jar"
  node_jar >/dev/null
  rm -rf "$DIR/app" "$DIR/quorumkv.aot"
  [ "$AOT" = 0 ] || train_aot_cache
  node_urls | tr ',' '\n' >"$DIR/nodes"
  if [ -n "$TLS_DIR" ]; then cp "$TLS_DIR/ca.crt" "$DIR/ca.crt"; else rm -f "$DIR/ca.crt"; fi
  for ((i = 1; i <= NODES; i++)); do management_url_of "$i"; done >"$DIR/management"
  local loops="event loops as QKV_JAVA_OPTS says"
  loops_given || loops="$(event_loops) event loop(s) each"
  echo "starting $NODES node(s): backend $BACKEND, placement $PLACEMENT, ports $BASE_PORT..$(port_of "$NODES"), $loops, dir $DIR"
  for ((i = 1; i <= NODES; i++)); do
    start_node "$i"
  done
  local nodes
  nodes="$(seq 1 "$NODES" | tr '\n' ' ')"
  # shellcheck disable=SC2086
  if ! wait_ready $nodes; then
    cmd_down >/dev/null
    die "cluster did not start; stopped it"
  fi
  echo "cluster ready: $(node_urls)"
  if [ "$INSECURE" = 1 ]; then
    echo "insecure (--insecure): plain HTTP, the public API open to anyone on this host"
  else
    echo "TLS, clients authenticate: curl --cacert $DIR/ca.crt -H \"Authorization: Bearer \$(cat $DIR/api-key)\" $(url_of 1)/v0/entity?id=k"
  fi
}

cmd_down() {
  local i
  for ((i = 1; i <= NODES; i++)); do
    stop_node "$i"
  done
  echo "cluster in $DIR stopped"
}

cmd_status() {
  local i pid state status
  printf '%-6s %-6s %-8s %-6s %s\n' node port pid alive /v0/status
  for ((i = 1; i <= NODES; i++)); do
    pid="$(pid_of "$i")"
    if alive "$i"; then state=yes; else state=no; fi
    status="$(http_code "$(url_of "$i")/v0/status")"
    printf '%-6s %-6s %-8s %-6s %s\n' "$i" "$(port_of "$i")" "${pid:--}" "$state" "${status/#000/-}"
  done
}

cmd_kill() {
  local i="$1" pid
  check_node_arg "$i"
  pid="$(pid_of "$i")"
  alive "$i" || die "node $i is not running"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  rm -f "$(pid_file "$i")"
  echo "node $i (pid $pid) killed"
}

cmd_restart() {
  local i="$1"
  check_node_arg "$i"
  JAVA="$(java_bin)"
  check_java
  stop_node "$i"
  start_node "$i"
  wait_ready "$i" || die "node $i did not become ready"
  echo "node $i ready: $(url_of "$i")"
}

cmd_add() {
  JAVA="$(java_bin)"
  check_java
  NODES=$((NODES + 1))
  if [ $((BASE_PORT + NODES - 1)) -gt 65535 ]; then
    die "no port left for node $NODES"
  fi
  save_settings
  start_node "$NODES"
  wait_ready "$NODES" || die "node $NODES did not become ready"
  echo "node $NODES ready at $(url_of "$NODES"), waiting to be joined: scripts/qkv --nodes $(node_urls) join $(url_of "$NODES")"
}

[ $# -ge 1 ] || usage
command="$1"
shift
case "$command" in
  up)
    parse_options "$@"
    cmd_up
    ;;
  down | status | add)
    parse_options "$@"
    load_settings
    "cmd_$command"
    ;;
  kill | restart)
    [ $# -ge 1 ] || die "$command needs a NODE number"
    node="$1"
    shift
    parse_options "$@"
    load_settings
    "cmd_$command" "$node"
    ;;
  -h | --help | help) usage 0 ;;
  *) die "unknown command: $command (up, down, status, add, kill NODE, restart NODE)" ;;
esac
