#!/usr/bin/env bash
# A three-node Apache Cassandra 5.0.6 cluster on loopback, the anchor of the YCSB report.
#
#   scripts/anchors/cassandra.sh up [--fresh]   # start nodes 127.0.0.1..3 (CQL on port 9042 each)
#   scripts/anchors/cassandra.sh down           # stop them (SIGTERM, then SIGKILL after 60 s)
#   scripts/anchors/cassandra.sh status
#
# Nothing is downloaded into the repository: the server is the Maven Central jar
# org.apache.cassandra:cassandra-all:5.0.6 with its dependencies, resolved by ./mvnw
# (dependency:copy-dependencies over scripts/anchors/cassandra/pom.xml) into
# $QKV_TOOLS/cassandra-5.0.6/lib (default QKV_TOOLS=/work/tools). Cassandra 5.0 runs on Java 11
# or 17, not 25: CASSANDRA_JAVA_HOME (default /usr/lib/jvm/java-17-openjdk-amd64; installed with
# apt-get when missing). Each node: heap CASSANDRA_HEAP (default 768m), data and node.log under
# $QKV_ANCHORS_DIR/cassandra/node<i> (default run/anchors), JMX off (nothing here needs nodetool).
#
# Durability as configured (Cassandra's default): commitlog_sync: periodic with a 10 s
# commitlog_sync_period, so a write is acknowledged before its commit-log segment is fsynced; a
# power loss on all replicas can lose up to 10 s of acknowledged writes. The YCSB binding
# (io.quorumkv.ycsb.anchors.CassandraDb) creates keyspace "ycsb" with SimpleStrategy, RF 3, and
# reads and writes at QUORUM.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/scripts/anchors/cassandra"
VERSION=5.0.6
TOOLS="${QKV_TOOLS:-/work/tools}"
HOME_DIR="$TOOLS/cassandra-$VERSION"
DIR="${QKV_ANCHORS_DIR:-$ROOT/run/anchors}/cassandra"
JAVA17="${CASSANDRA_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
HEAP="${CASSANDRA_HEAP:-768m}"
NODES=3
UP_TIMEOUT="${CASSANDRA_UP_TIMEOUT:-300}"

die() {
  echo "cassandra.sh: $*" >&2
  exit 1
}

address() { echo "127.0.0.$1"; }

resolve_jars() {
  if [ -f "$HOME_DIR/lib/cassandra-all-$VERSION.jar" ]; then
    return
  fi
  echo "resolving cassandra-all $VERSION and its dependencies into $HOME_DIR/lib (Maven Central)"
  mkdir -p "$HOME_DIR/lib"
  (cd "$ROOT" && ./mvnw -q -f scripts/anchors/cassandra/pom.xml dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$HOME_DIR/lib") || die "could not resolve cassandra-all $VERSION"
}

ensure_java17() {
  if [ -x "$JAVA17/bin/java" ]; then
    return
  fi
  echo "no Java 17 at $JAVA17: installing openjdk-17-jre-headless with apt-get"
  apt-get install -y -q openjdk-17-jre-headless >/dev/null || die "could not install Java 17"
  [ -x "$JAVA17/bin/java" ] || die "no $JAVA17/bin/java after installing Java 17 (set CASSANDRA_JAVA_HOME)"
}

write_config() {
  local i="$1" node="$DIR/node$1" addr
  addr="$(address "$i")"
  mkdir -p "$node/data" "$node/commitlog" "$node/saved_caches" "$node/hints" "$node/cdc_raw"
  cat >"$node/cassandra.yaml" <<YAML
cluster_name: quorumkv-anchor
num_tokens: 16
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$(address 1):7000,$(address 2):7000,$(address 3):7000"
listen_address: $addr
rpc_address: $addr
storage_port: 7000
native_transport_port: 9042
start_native_transport: true
data_file_directories:
  - $node/data
commitlog_directory: $node/commitlog
saved_caches_directory: $node/saved_caches
hints_directory: $node/hints
cdc_raw_directory: $node/cdc_raw
# Cassandra's default durability, stated by the report: fsync the commit log every 10 s.
commitlog_sync: periodic
commitlog_sync_period: 10000ms
concurrent_reads: 16
concurrent_writes: 16
concurrent_counter_writes: 16
concurrent_compactors: 1
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
YAML
}

pid_of() { cat "$DIR/node$1/node.pid" 2>/dev/null || true; }

# Whether PID is node I of this cluster (a PID file can outlive its process).
is_node() {
  local pid="$1" i="$2"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-Dcassandra.config=file://$DIR/node$i/cassandra.yaml"
}

cql_open() { (exec 3<>"/dev/tcp/$(address "$1")/9042") 2>/dev/null; }

start_node() {
  local i="$1" node="$DIR/node$1" cp="" jar
  for jar in "$HOME_DIR"/lib/*.jar; do cp="${cp:+$cp:}$jar"; done
  local -a opts
  mapfile -t opts < <(grep -v '^#' "$HERE/jvm17.options" | grep -v '^$')
  nohup "$JAVA17/bin/java" "-Xms$HEAP" "-Xmx$HEAP" "${opts[@]}" \
    "-javaagent:$(ls "$HOME_DIR"/lib/jamm-*.jar | head -n 1)" \
    -Dcassandra-foreground=yes \
    "-Dcassandra.config=file://$node/cassandra.yaml" \
    "-Dcassandra.storagedir=$node" \
    "-Dcassandra.logdir=$node" \
    "-Dlogback.configurationFile=$HERE/logback.xml" \
    -Dcassandra.skip_wait_for_gossip_to_settle=0 \
    -Dcassandra.ring_delay_ms=1000 \
    -cp "$cp" org.apache.cassandra.service.CassandraDaemon >"$node/stdout.log" 2>&1 </dev/null &
  echo $! >"$node/node.pid"
}

wait_up() {
  local i="$1" deadline=$((SECONDS + UP_TIMEOUT))
  until cql_open "$i"; do
    is_node "$(pid_of "$i")" "$i" || { tail -n 30 "$DIR/node$i/node.log" "$DIR/node$i/stdout.log" >&2 || true; die "node $i exited while starting"; }
    [ "$SECONDS" -lt "$deadline" ] || die "node $i: no CQL on $(address "$i"):9042 after ${UP_TIMEOUT}s (see $DIR/node$i/node.log)"
    sleep 1
  done
}

# Every node has seen the other nodes come up (gossip), from its node.log.
wait_ring() {
  local i deadline=$((SECONDS + UP_TIMEOUT))
  for ((i = 1; i <= NODES; i++)); do
    until [ "$(grep -c -E 'InetAddress /127\.0\.0\.[0-9]+:7000 is now UP' "$DIR/node$i/node.log" 2>/dev/null || echo 0)" -ge $((NODES - 1)) ]; do
      [ "$SECONDS" -lt "$deadline" ] || die "node $i does not see the other nodes after ${UP_TIMEOUT}s"
      sleep 1
    done
  done
}

cmd_up() {
  local fresh=0 i
  [ "${1:-}" = "--fresh" ] && fresh=1
  resolve_jars
  ensure_java17
  for ((i = 1; i <= NODES; i++)); do
    is_node "$(pid_of "$i")" "$i" && die "node $i is already running (scripts/anchors/cassandra.sh down first)"
    cql_open "$i" && die "$(address "$i"):9042 is taken by another process"
  done
  [ "$fresh" = 1 ] && rm -rf "$DIR"
  mkdir -p "$DIR"
  echo "starting Cassandra $VERSION: $NODES nodes on $(address 1)..$(address "$NODES"), heap $HEAP each, dir $DIR"
  # All three are seeds, so none bootstraps and they may start together.
  for ((i = 1; i <= NODES; i++)); do
    write_config "$i"
    start_node "$i"
  done
  for ((i = 1; i <= NODES; i++)); do
    wait_up "$i" || { cmd_down; exit 1; }
  done
  wait_ring || { cmd_down; exit 1; }
  echo "Cassandra ready: CQL on $(address 1):9042, $(address 2):9042, $(address 3):9042 (commitlog_sync periodic, 10 s)"
}

cmd_down() {
  local i pid waited
  for ((i = 1; i <= NODES; i++)); do
    pid="$(pid_of "$i")"
    if is_node "$pid" "$i"; then
      kill -TERM "$pid" 2>/dev/null || true
      waited=0
      while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 600 ]; do sleep 0.1; waited=$((waited + 1)); done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$DIR/node$i/node.pid"
  done
  echo "Cassandra in $DIR stopped"
}

cmd_status() {
  local i
  for ((i = 1; i <= NODES; i++)); do
    local state=down
    is_node "$(pid_of "$i")" "$i" && state="running (pid $(pid_of "$i"))"
    cql_open "$i" && state="$state, CQL open"
    echo "node $i $(address "$i"): $state"
  done
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) die "usage: scripts/anchors/cassandra.sh up [--fresh] | down | status" ;;
esac
